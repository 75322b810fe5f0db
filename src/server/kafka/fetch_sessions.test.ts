// The broker's fetch sessions, alone: epochs, the partitions a session fetches, what an answer
// carries, and the bound on sessions kept.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FETCH_SESSIONS_MAX, FetchSessions, answered, session_partitions } from './fetch_sessions.ts';
import { BrokerError } from '../../core/index.ts';

const asked = (partition: number, fetch_offset: number) => ({
  topic: 't',
  topic_id: 'id',
  partition,
  fetch_offset,
  bytes_max: 100,
  current_leader_epoch: -1,
});
const row = (high_watermark: number, records: Buffer | null = null) => ({
  error_code: 0,
  high_watermark,
  last_stable_offset: high_watermark,
  log_start_offset: 0,
  records,
});
const kind_of = (work: () => unknown) =>
  assert.throws(
    work,
    (error: unknown) => error instanceof BrokerError && /fetch_session|fetch_session_epoch/.test(error.kind),
  );

test('epochs: 0 opens, each next one in step, -1 ends; others refused', () => {
  const sessions = new FetchSessions();
  const opened = sessions.use(0, 0, 3);
  assert.equal(opened.kind, 'new');
  const id = opened.kind === 'new' ? opened.session.id : 0;
  assert.equal(sessions.use(id, 1, 0).kind, 'incremental');
  kind_of(() => sessions.use(id, 1, 0));
  kind_of(() => sessions.use(id + 1, 1, 0));
  assert.equal(sessions.use(id, -1, 0).kind, 'none');
  kind_of(() => sessions.use(id, 2, 0));
});

test('a session fetches what it was given, then what changed; an answer carries only news; forgotten ones go', () => {
  const sessions = new FetchSessions();
  const use = sessions.use(0, 0, 2);
  assert.ok(use.kind === 'new');
  const all = session_partitions(use, [asked(0, 0), asked(1, 0)], []);
  assert.deepEqual(
    answered(
      use,
      all.map((a) => ({ ...a, topic: a.topic! })),
      [row(0), row(5, Buffer.from('x'))],
    ),
    [0, 1],
  );
  const next = sessions.use(use.session.id, 1, 1);
  assert.ok(next.kind === 'incremental');
  const fetched = session_partitions(next, [asked(1, 5)], []);
  assert.deepEqual(
    fetched.map((f) => [f.partition, f.fetch_offset]),
    [
      [0, 0],
      [1, 5],
    ],
  );
  const told = answered(
    next,
    fetched.map((a) => ({ ...a, topic: a.topic! })),
    [row(0), row(7, Buffer.from('y'))],
  );
  assert.deepEqual(told, [1]);
  const forgetting = sessions.use(use.session.id, 2, 0);
  assert.ok(forgetting.kind === 'incremental');
  assert.deepEqual(
    session_partitions(forgetting, [], ['t\u00000']).map((f) => f.partition),
    [1],
  );
});

test('sessions beyond the bound: the least recently used goes', () => {
  const sessions = new FetchSessions();
  const first = sessions.use(0, 0, 1);
  assert.ok(first.kind === 'new');
  for (let i = 0; i < FETCH_SESSIONS_MAX; i++) sessions.use(0, 0, 1);
  assert.equal(sessions.size, FETCH_SESSIONS_MAX);
  kind_of(() => sessions.use(first.session.id, 1, 0));
});
