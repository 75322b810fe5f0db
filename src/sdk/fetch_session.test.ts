// The consumer's side of a fetch session, alone: what each request names and forgets, and when
// the session starts over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FetchSession } from './fetch_session.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';

const p = (partition: number, offset: number) => ({ key: `t/${partition}`, topic: 't', partition, offset });
const named = (request: { named: Array<{ partition: number }> }) => request.named.map((x) => x.partition);

test('a fetch session names everything once, then only what moved; forgets what is no longer fetched', () => {
  const session = new FetchSession();
  const connection = {};
  const first = session.request([p(0, 0), p(1, 0), p(2, 0)], connection);
  assert.deepEqual([first.session_id, first.session_epoch, named(first)], [0, 0, [0, 1, 2]]);
  session.answered({ error_code: 0, session_id: 42 }, first);
  const idle = session.request([p(0, 0), p(1, 0), p(2, 0)], connection);
  assert.deepEqual([idle.session_id, idle.session_epoch, named(idle), idle.forgotten], [42, 1, [], []]);
  session.answered({ error_code: 0, session_id: 42 }, idle);
  const moved = session.request([p(0, 5), p(1, 0)], connection);
  assert.deepEqual([moved.session_epoch, named(moved), moved.forgotten], [2, [0], [{ topic: 't', partitions: [2] }]]);
  const back = session.request([p(0, 5), p(1, 0), p(2, 3)], connection);
  assert.deepEqual([back.session_epoch, named(back)], [3, [2]], 'a partition fetched again is named');
});

test('a session error, an unanswered opening or a new connection starts a new session', () => {
  const session = new FetchSession();
  const connection = {};
  const first = session.request([p(0, 0)], connection);
  session.answered({ error_code: 0, session_id: 7 }, first);
  const next = session.request([p(0, 1)], connection);
  session.answered({ error_code: ErrorCode.INVALID_FETCH_SESSION_EPOCH, session_id: 0 }, next);
  const reopened = session.request([p(0, 1)], connection);
  assert.deepEqual([reopened.session_id, reopened.session_epoch, named(reopened)], [0, 0, [0]]);
  const unanswered = session.request([p(0, 1)], connection);
  assert.equal(unanswered.session_epoch, 0, 'the opening request was never answered');
  session.answered({ error_code: 0, session_id: 8 }, unanswered);
  const elsewhere = session.request([p(0, 1)], {});
  assert.deepEqual([elsewhere.session_id, elsewhere.session_epoch], [0, 0]);
  session.answered({ error_code: 0, session_id: 0 }, elsewhere);
  assert.equal(session.request([p(0, 1)], {}).session_epoch, 0, 'no session kept by the broker: full fetches');
});
