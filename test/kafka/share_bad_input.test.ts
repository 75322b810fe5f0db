// The KIP-932 share-group APIs (ShareGroupHeartbeat, ShareGroupDescribe, ShareFetch,
// ShareAcknowledge) on bad input, sent as raw protocol requests to a real broker process: malformed
// joins and stale member epochs, fetches by members that never joined, share-session epochs out of
// order, unknown topic ids, acknowledgements of records the member does not hold, unknown
// acknowledge types, lock renewals (refused) and describing groups that do not exist. Each case
// asserts the exact error code, that the refused request changed nothing it should not have, and
// that the broker still serves well-formed requests afterwards.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import type { Value } from '../../src/protocol/kafka/codec.ts';
import { ErrorCode } from '../../src/protocol/kafka/error_codes.ts';
import { decode_record_batch, encode_record_batch } from '../../src/protocol/record_batch.ts';
import { PRODUCE } from '../../src/protocol/kafka/messages/00_produce.ts';
import { METADATA } from '../../src/protocol/kafka/messages/03_metadata.ts';
import { CREATE_TOPICS } from '../../src/protocol/kafka/messages/19_create_topics.ts';
import { SHARE_GROUP_HEARTBEAT } from '../../src/protocol/kafka/messages/76_share_group_heartbeat.ts';
import { DESCRIBE_CONFIGS } from '../../src/protocol/kafka/messages/32_describe_configs.ts';
import { INCREMENTAL_ALTER_CONFIGS } from '../../src/protocol/kafka/messages/44_incremental_alter_configs.ts';
import { SHARE_GROUP_DESCRIBE } from '../../src/protocol/kafka/messages/77_share_group_describe.ts';
import { SHARE_FETCH } from '../../src/protocol/kafka/messages/78_share_fetch.ts';
import { SHARE_ACKNOWLEDGE } from '../../src/protocol/kafka/messages/79_share_acknowledge.ts';

// Versions used throughout (all inside the ranges the broker advertises).
const V = { produce: 9, metadata: 12, create_topics: 5, heartbeat: 1, describe: 1 };
const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
/** A topic id no topic has. */
const UNKNOWN_TOPIC_ID = Buffer.from('sluice-no-topic!').toString('base64url');

const ACCEPT = 1;
const RELEASE = 2;
const REJECT = 3;

type Row = Record<string, unknown>;

// ------------------------------------------------------------------ request bodies

interface AckBatch {
  first_offset: number;
  last_offset: number;
  acknowledge_types: number[];
  sluice_failure_reason: string | null;
  sluice_release_delay_ms: number;
}

/** One acknowledgement batch, with Sluice's tagged fields at their defaults. */
function batch(first_offset: number, last_offset: number, ...acknowledge_types: number[]): AckBatch {
  return { first_offset, last_offset, acknowledge_types, sluice_failure_reason: null, sluice_release_delay_ms: -1 };
}

interface PartitionRequest {
  topic_id: string;
  partition?: number;
  acks?: AckBatch[];
}

/** Groups partition requests by topic id, in the shape both ShareFetch and ShareAcknowledge use. */
function topics_of(partitions: PartitionRequest[]): Value[] {
  const by_topic = new Map<string, Value[]>();
  for (const p of partitions) {
    if (!by_topic.has(p.topic_id)) by_topic.set(p.topic_id, []);
    by_topic.get(p.topic_id)!.push({ partition_index: p.partition ?? 0, acknowledgement_batches: p.acks ?? [] });
  }
  return [...by_topic].map(([topic_id, partitions]) => ({ topic_id, partitions }));
}

interface FetchArgs {
  group: string;
  member: string;
  epoch: number;
  partitions?: PartitionRequest[];
  max_records?: number;
  max_wait_ms?: number;
  version?: 1 | 2;
  is_renew_ack?: boolean;
}

function share_fetch_body(a: FetchArgs): Value {
  return {
    group_id: a.group,
    member_id: a.member,
    share_session_epoch: a.epoch,
    max_wait_ms: a.max_wait_ms ?? 0,
    min_bytes: 0,
    max_bytes: 1024 * 1024,
    max_records: a.max_records ?? 500,
    batch_size: a.max_records ?? 500,
    share_acquire_mode: 0,
    is_renew_ack: a.is_renew_ack ?? false,
    topics: topics_of(a.partitions ?? []),
    forgotten_topics_data: [],
  };
}

function share_ack_body(a: { group: string; member: string; epoch: number; partitions: PartitionRequest[]; is_renew_ack?: boolean }): Value {
  return { group_id: a.group, member_id: a.member, share_session_epoch: a.epoch, is_renew_ack: a.is_renew_ack ?? false, topics: topics_of(a.partitions) };
}

function records_of(values: string[]): Buffer {
  return encode_record_batch(values.map((value, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(value), timestamp_ms: 1_700_000_000_000 + i })));
}

// ------------------------------------------------------------------ reading responses

/** The response row of one partition, or undefined when the response does not mention it. */
function partition_row(response: Value, topic_id: string, partition = 0): Row | undefined {
  const topic = (response.responses as Row[]).find((t) => t.topic_id === topic_id);
  return (topic?.partitions as Row[] | undefined)?.find((p) => p.partition_index === partition);
}

/** The acquired ranges of a ShareFetch partition row, as [first, last, delivery_count]. */
function acquired_ranges(row: Row | undefined): Array<[number, number, number]> {
  return ((row?.acquired_records as Row[] | undefined) ?? []).map((r) => [r.first_offset as number, r.last_offset as number, r.delivery_count as number]);
}

/** The values of the acquired records of a ShareFetch partition row, by offset. */
function acquired_values(row: Row | undefined): string[] {
  if (!row) return [];
  const wanted = new Set(acquired_ranges(row).flatMap(([first, last]) => Array.from({ length: last - first + 1 }, (_, i) => first + i)));
  const records = row.records as Buffer;
  const values: string[] = [];
  for (let at = 0; at + 12 <= records.length; ) {
    const size = records.readInt32BE(at + 8) + 12;
    for (const record of decode_record_batch(records.subarray(at, at + size))) {
      if (wanted.has(record.offset)) values.push(record.value!.toString());
    }
    at += size;
  }
  return values;
}

/** Asserts a top-level refusal: the code, a message, and no partitions answered. */
function assert_refused(response: Value, code: number, what: string): void {
  assert.equal(response.error_code, code, `${what}: error_code (message: ${String(response.error_message)})`);
  assert.equal(typeof response.error_message, 'string', `${what}: an error message`);
  assert.deepEqual(response.responses, [], `${what}: no partitions answered`);
}

// ------------------------------------------------------------------ the broker under test

describe('share-group APIs on bad input', () => {
  let data_dir: string;
  let broker: BrokerProcess;
  let conn: Connection;
  const connections: Connection[] = [];
  const CANARY_TOPIC = 'share-canary';
  const CANARY_VALUES = ['canary-0', 'canary-1', 'canary-2'];
  let canary_id: string;
  let health_round = 0;

  async function connect(): Promise<Connection> {
    const [host, port] = broker.bootstrap.split(':');
    const connection = await Connection.connect(host!, Number(port), { client_id: 'share-bad-input-test', request_timeout_ms: 10_000 });
    connections.push(connection);
    return connection;
  }

  async function topic_id_of(name: string): Promise<string> {
    const metadata = await conn.call(METADATA, V.metadata, { topics: [{ name, topic_id: ZERO_UUID }], allow_auto_topic_creation: false, include_topic_authorized_operations: false });
    const [topic] = metadata.topics as Row[];
    assert.equal(topic!.error_code, 0, `metadata of ${name}`);
    assert.notEqual(topic!.topic_id, ZERO_UUID);
    return topic!.topic_id as string;
  }

  /** Creates a one-partition topic holding `values` (one batch, offsets 0..) and returns its id. */
  async function topic_with(name: string, values: string[]): Promise<string> {
    const created = await conn.call(CREATE_TOPICS, V.create_topics, { topics: [{ name, num_partitions: 1, replication_factor: 1, assignments: [], configs: [] }], timeout_ms: 5_000, validate_only: false });
    const [row] = created.topics as Row[];
    assert.equal(row!.error_code, 0, `create ${name}: ${String(row!.error_message)}`);
    if (values.length > 0) {
      const produced = await conn.call(PRODUCE, V.produce, { transactional_id: null, acks: -1, timeout_ms: 5_000, topic_data: [{ name, partition_data: [{ index: 0, records: records_of(values) }] }] });
      const partition = ((produced.responses as Row[])[0]!.partition_responses as Row[])[0]!;
      assert.equal(partition.error_code, 0, `produce to ${name}`);
      assert.equal(partition.base_offset, 0);
    }
    return topic_id_of(name);
  }

  function heartbeat(group: string, member: string, epoch: number, topics: string[] | null, connection = conn): Promise<Value> {
    return connection.call(SHARE_GROUP_HEARTBEAT, V.heartbeat, { group_id: group, member_id: member, member_epoch: epoch, rack_id: null, subscribed_topic_names: topics });
  }

  /** Joins `member` to `group` subscribed to `topics`; returns its member epoch. */
  async function join(group: string, member: string, topics: string[]): Promise<number> {
    const joined = await heartbeat(group, member, 0, topics);
    assert.equal(joined.error_code, 0, `join ${member}: ${String(joined.error_message)}`);
    assert.equal(joined.member_id, member);
    assert.ok((joined.member_epoch as number) >= 1);
    return joined.member_epoch as number;
  }

  function share_fetch(args: FetchArgs, connection = conn): Promise<Value> {
    return connection.call_untyped(SHARE_FETCH, args.version ?? 1, share_fetch_body(args));
  }

  function share_ack(args: { group: string; member: string; epoch: number; partitions: PartitionRequest[]; is_renew_ack?: boolean; version?: 1 | 2 }, connection = conn): Promise<Value> {
    return connection.call_untyped(SHARE_ACKNOWLEDGE, args.version ?? 1, share_ack_body(args));
  }

  /** The error code of the only partition of a ShareAcknowledge response (which must succeed). */
  function ack_code(response: Value, topic_id: string): number {
    assert.equal(response.error_code, 0, `ShareAcknowledge top level: ${String(response.error_message)}`);
    const row = partition_row(response, topic_id);
    assert.ok(row, 'the partition is answered');
    return row.error_code as number;
  }

  /**
   * The broker still serves: Metadata answers, and a new member of a new group joins, opens a
   * share session, acquires the canary topic's first record, accepts it and leaves.
   */
  async function assert_broker_healthy(): Promise<void> {
    assert.equal(conn.is_closed, false, 'the main connection is still open');
    assert.equal(await topic_id_of(CANARY_TOPIC), canary_id);
    const group = `health-${++health_round}`;
    const member = `health-member-${health_round}`;
    const epoch = await join(group, member, [CANARY_TOPIC]);
    const fetched = await share_fetch({ group, member, epoch: 0, partitions: [{ topic_id: canary_id }], max_records: 1 });
    assert.equal(fetched.error_code, 0, `health fetch: ${String(fetched.error_message)}`);
    const row = partition_row(fetched, canary_id);
    assert.deepEqual(acquired_ranges(row), [[0, 0, 1]], 'a fresh group acquires the first record');
    assert.deepEqual(acquired_values(row), [CANARY_VALUES[0]]);
    assert.equal(ack_code(await share_ack({ group, member, epoch: 1, partitions: [{ topic_id: canary_id, acks: [batch(0, 0, ACCEPT)] }] }), canary_id), 0);
    const beat = await heartbeat(group, member, epoch, null);
    assert.equal(beat.error_code, 0);
    assert.equal(beat.member_epoch, epoch);
    const left = await heartbeat(group, member, -1, null);
    assert.equal(left.error_code, 0);
    assert.equal(left.member_epoch, -1);
  }

  before(async () => {
    data_dir = new_data_dir('share-bad-input');
    broker = await start_broker_process({ data_dir: path.join(data_dir, 'data') });
    conn = await connect();
    canary_id = await topic_with(CANARY_TOPIC, CANARY_VALUES);
    await assert_broker_healthy();
  });

  after(async () => {
    for (const connection of connections) connection.close();
    const code = await broker?.stop();
    const output = broker?.output() ?? '';
    fs.rmSync(data_dir, { recursive: true, force: true });
    assert.equal(code, 0, `the broker stopped cleanly:\n${output}`);
    // No request made the broker log an error (pino levels 50 and 60).
    assert.doesNotMatch(output, /"level":(50|60)/, `the broker logged errors:\n${output}`);
  });

  // ---------------------------------------------------------------- 1. heartbeats

  test('1. ShareGroupHeartbeat: an empty member id, a join without topics, a stale epoch, an unknown member', async () => {
    const GROUP = 'hb-group';
    const TOPIC = 'hb-topic';
    const topic_id = await topic_with(TOPIC, ['hb-0']);

    // The consumer generates its member id: an empty one is refused, and nobody joins.
    const empty = await heartbeat(GROUP, '', 0, [TOPIC]);
    assert.equal(empty.error_code, ErrorCode.INVALID_REQUEST);
    assert.equal(empty.member_epoch, -1);
    assert.equal(empty.assignment, null);

    // A join must name the topics it subscribes to.
    const no_topics = await heartbeat(GROUP, 'hb-a', 0, null);
    assert.equal(no_topics.error_code, ErrorCode.INVALID_REQUEST);
    assert.equal(no_topics.member_epoch, -1);

    // A share group needs a name.
    assert.equal((await heartbeat('', 'hb-a', 0, [TOPIC])).error_code, ErrorCode.INVALID_GROUP_ID);

    const joined = await heartbeat(GROUP, 'hb-a', 0, [TOPIC]);
    assert.equal(joined.error_code, 0);
    const first_epoch = joined.member_epoch as number;
    assert.ok(first_epoch >= 1);
    assert.deepEqual(joined.assignment, { topic_partitions: [{ topic_id, partitions: [0] }] });
    // Changing the subscription moves the member to a new epoch (twice, to have stale ones below it).
    const widened = await heartbeat(GROUP, 'hb-a', first_epoch, [TOPIC, CANARY_TOPIC]);
    assert.equal(widened.error_code, 0);
    assert.ok((widened.member_epoch as number) > first_epoch);
    const narrowed = await heartbeat(GROUP, 'hb-a', widened.member_epoch as number, [TOPIC]);
    assert.equal(narrowed.error_code, 0);
    const epoch = narrowed.member_epoch as number;
    assert.ok(epoch > (widened.member_epoch as number));
    assert.deepEqual(narrowed.assignment, { topic_partitions: [{ topic_id, partitions: [0] }] });

    // A known member with an epoch that is not its current one is fenced, above or below it.
    for (const wrong of [epoch + 1, epoch + 5, first_epoch, widened.member_epoch as number, -2]) {
      const fenced = await heartbeat(GROUP, 'hb-a', wrong, null);
      assert.equal(fenced.error_code, ErrorCode.FENCED_MEMBER_EPOCH, `epoch ${wrong} (current ${epoch})`);
      assert.equal(fenced.member_epoch, -1);
      assert.equal(fenced.assignment, null);
    }

    // A member the group does not know, with a non-zero epoch.
    const ghost = await heartbeat(GROUP, 'hb-ghost', 5, null);
    assert.equal(ghost.error_code, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal(ghost.member_epoch, -1);

    // None of it disturbed the member: its epoch still holds, and the group has only it.
    const again = await heartbeat(GROUP, 'hb-a', epoch, null);
    assert.equal(again.error_code, 0);
    assert.equal(again.member_epoch, epoch);
    const described = await conn.call(SHARE_GROUP_DESCRIBE, V.describe, { group_ids: [GROUP], include_authorized_operations: false });
    const [group] = described.groups as Row[];
    assert.equal(group!.error_code, 0);
    assert.deepEqual((group!.members as Row[]).map((m) => [m.member_id, m.member_epoch]), [['hb-a', epoch]]);
    // ... and it still fetches.
    const fetched = await share_fetch({ group: GROUP, member: 'hb-a', epoch: 0, partitions: [{ topic_id }] });
    assert.deepEqual(acquired_values(partition_row(fetched, topic_id)), ['hb-0']);
    await assert_broker_healthy();
  });

  // ---------------------------------------------------------------- 2. strangers

  test('2. ShareFetch by a member that never joined is refused with UNKNOWN_MEMBER_ID and acquires nothing', async () => {
    const GROUP = 'stranger-group';
    const TOPIC = 'stranger-topic';
    const topic_id = await topic_with(TOPIC, ['s-0', 's-1']);

    // A group that does not exist at all.
    const nowhere = await share_fetch({ group: 'no-such-share-group', member: 'stranger', epoch: 0, partitions: [{ topic_id }] });
    assert_refused(nowhere, ErrorCode.UNKNOWN_MEMBER_ID, 'no such group');

    // A group that exists, by a member that is not in it (and with an acknowledgement piggybacked).
    const epoch = await join(GROUP, 'member', [TOPIC]);
    assert.ok(epoch >= 1);
    const stranger = await share_fetch({ group: GROUP, member: 'stranger', epoch: 0, partitions: [{ topic_id, acks: [batch(0, 0, ACCEPT)] }] });
    assert_refused(stranger, ErrorCode.UNKNOWN_MEMBER_ID, 'a stranger in a live group');

    // Nothing was acquired or accepted on the stranger's behalf: the member gets both records, first delivery.
    const fetched = await share_fetch({ group: GROUP, member: 'member', epoch: 0, partitions: [{ topic_id }] });
    assert.equal(fetched.error_code, 0);
    assert.deepEqual(acquired_ranges(partition_row(fetched, topic_id)), [[0, 1, 1]]);
    assert.deepEqual(acquired_values(partition_row(fetched, topic_id)), ['s-0', 's-1']);
    await assert_broker_healthy();
  });

  // ---------------------------------------------------------------- 3. session epochs

  test('3. ShareFetch session epochs: no session, a wrong epoch, a replay, then the right epoch still works', async () => {
    const GROUP = 'session-group';
    const MEMBER = 'session-member';
    const TOPIC = 'session-topic';
    const topic_id = await topic_with(TOPIC, ['e-0', 'e-1', 'e-2', 'e-3', 'e-4', 'e-5']);
    await join(GROUP, MEMBER, [TOPIC]);
    const fetch = (epoch: number, options: Partial<FetchArgs> = {}) => share_fetch({ group: GROUP, member: MEMBER, epoch, max_records: 2, ...options });

    // No session yet: neither a later epoch nor a close finds one.
    assert_refused(await fetch(5, { partitions: [{ topic_id }] }), ErrorCode.SHARE_SESSION_NOT_FOUND, 'epoch 5 without a session');
    assert_refused(await fetch(-1, { partitions: [{ topic_id }] }), ErrorCode.SHARE_SESSION_NOT_FOUND, 'epoch -1 without a session');

    // Epoch 0 opens the session; the refused requests acquired nothing, so it starts at offset 0.
    const opened = await fetch(0, { partitions: [{ topic_id }] });
    assert.equal(opened.error_code, 0);
    assert.deepEqual(acquired_ranges(partition_row(opened, topic_id)), [[0, 1, 1]]);

    // Epochs other than the next one are refused and leave the session as it was.
    for (const wrong of [7, 2, -2, 0x7fffffff]) {
      assert_refused(await fetch(wrong), ErrorCode.INVALID_SHARE_SESSION_EPOCH, `epoch ${wrong} (expected 1)`);
    }

    // The next epoch works: the session remembers the partition.
    const next = await fetch(1);
    assert.equal(next.error_code, 0);
    assert.deepEqual(acquired_ranges(partition_row(next, topic_id)), [[2, 3, 1]]);

    // Replaying the epoch just used is refused too.
    assert_refused(await fetch(1), ErrorCode.INVALID_SHARE_SESSION_EPOCH, 'epoch 1 replayed');

    // Epoch 2 acknowledges 0-3 and acquires 4-5.
    const third = await fetch(2, { partitions: [{ topic_id, acks: [batch(0, 3, ACCEPT)] }] });
    assert.equal(third.error_code, 0);
    const third_row = partition_row(third, topic_id);
    assert.equal(third_row?.acknowledge_error_code, 0);
    assert.deepEqual(acquired_ranges(third_row), [[4, 5, 1]]);
    assert.deepEqual(acquired_values(third_row), ['e-4', 'e-5']);

    // Epoch -1 acknowledges and closes without fetching; the session is then gone.
    const closed = await fetch(-1, { partitions: [{ topic_id, acks: [batch(4, 5, ACCEPT)] }] });
    assert.equal(closed.error_code, 0);
    assert.equal(partition_row(closed, topic_id)?.acknowledge_error_code, 0);
    assert.deepEqual(acquired_ranges(partition_row(closed, topic_id)), []);
    assert_refused(await fetch(3), ErrorCode.SHARE_SESSION_NOT_FOUND, 'epoch 3 after the close');

    // A new session finds everything accepted.
    const reopened = await fetch(0, { partitions: [{ topic_id }] });
    assert.equal(reopened.error_code, 0);
    assert.equal(partition_row(reopened, topic_id), undefined, 'nothing left to acquire');
    await assert_broker_healthy();
  });

  // ---------------------------------------------------------------- 4. unknown topic ids

  test('4. ShareFetch and ShareAcknowledge naming an unknown topic id: that partition is UNKNOWN_TOPIC_ID, the rest is served', async () => {
    const GROUP = 'topic-id-group';
    const MEMBER = 'topic-id-member';
    const TOPIC = 'topic-id-topic';
    const topic_id = await topic_with(TOPIC, ['t-0', 't-1']);
    await join(GROUP, MEMBER, [TOPIC]);

    const fetched = await share_fetch({ group: GROUP, member: MEMBER, epoch: 0, partitions: [{ topic_id: UNKNOWN_TOPIC_ID, partition: 0 }, { topic_id: UNKNOWN_TOPIC_ID, partition: 3 }, { topic_id }] });
    assert.equal(fetched.error_code, 0, 'the request as a whole succeeds');
    for (const partition of [0, 3]) {
      const row = partition_row(fetched, UNKNOWN_TOPIC_ID, partition);
      assert.ok(row, `unknown topic partition ${partition} answered`);
      assert.equal(row.error_code, ErrorCode.UNKNOWN_TOPIC_ID);
      assert.deepEqual(acquired_ranges(row), []);
    }
    const known = partition_row(fetched, topic_id);
    assert.equal(known?.error_code, 0);
    assert.deepEqual(acquired_values(known), ['t-0', 't-1']);

    // Acknowledging on an unknown topic id: that partition is refused, the known one is accepted.
    const acked = await share_ack({ group: GROUP, member: MEMBER, epoch: 1, partitions: [{ topic_id: UNKNOWN_TOPIC_ID, acks: [batch(0, 1, ACCEPT)] }, { topic_id, acks: [batch(0, 1, ACCEPT)] }] });
    assert.equal(acked.error_code, 0);
    assert.equal(partition_row(acked, UNKNOWN_TOPIC_ID)?.error_code, ErrorCode.UNKNOWN_TOPIC_ID);
    assert.equal(partition_row(acked, topic_id)?.error_code, 0);

    // The same through ShareFetch's piggybacked acknowledgements.
    const piggy = await share_fetch({ group: GROUP, member: MEMBER, epoch: 2, partitions: [{ topic_id: UNKNOWN_TOPIC_ID, acks: [batch(0, 0, ACCEPT)] }] });
    assert.equal(piggy.error_code, 0);
    assert.equal(partition_row(piggy, UNKNOWN_TOPIC_ID)?.error_code, ErrorCode.UNKNOWN_TOPIC_ID);
    await assert_broker_healthy();
  });

  // ---------------------------------------------------------------- 5. records held by someone else

  test("5. acknowledging records the member does not hold is INVALID_RECORD_STATE; the holder's records are unaffected", async () => {
    const GROUP = 'owners-group';
    const TOPIC = 'owners-topic';
    const values = Array.from({ length: 10 }, (_, i) => `o-${i}`);
    const topic_id = await topic_with(TOPIC, values);
    const a_conn = await connect();
    const b_conn = await connect();
    const a_member_epoch = await join(GROUP, 'owner-a', [TOPIC]);
    await join(GROUP, 'owner-b', [TOPIC]);

    const a_first = await share_fetch({ group: GROUP, member: 'owner-a', epoch: 0, partitions: [{ topic_id }], max_records: 4 }, a_conn);
    assert.deepEqual(acquired_ranges(partition_row(a_first, topic_id)), [[0, 3, 1]]);
    const b_first = await share_fetch({ group: GROUP, member: 'owner-b', epoch: 0, partitions: [{ topic_id }], max_records: 4 }, b_conn);
    assert.deepEqual(acquired_ranges(partition_row(b_first, topic_id)), [[4, 7, 1]]);

    // Through ShareFetch: A accepts B's 4-5. The acknowledgement is refused, the fetch still happens.
    const a_second = await share_fetch({ group: GROUP, member: 'owner-a', epoch: 1, partitions: [{ topic_id, acks: [batch(4, 5, ACCEPT)] }], max_records: 4 }, a_conn);
    assert.equal(a_second.error_code, 0);
    const a_row = partition_row(a_second, topic_id);
    assert.equal(a_row?.acknowledge_error_code, ErrorCode.INVALID_RECORD_STATE);
    assert.equal(typeof a_row?.acknowledge_error_message, 'string');
    assert.equal(a_row?.error_code, 0);
    assert.deepEqual(acquired_ranges(a_row), [[8, 9, 1]]);

    // Through ShareAcknowledge: B's records (accept, release, reject), offsets never delivered,
    // and a range half A's and half B's are all refused.
    const refused: Array<[string, AckBatch]> = [
      ["B's records, accept", batch(6, 7, ACCEPT)],
      ["B's records, release", batch(4, 4, RELEASE)],
      ["B's records, reject", batch(5, 5, REJECT)],
      ['beyond the log end', batch(100, 100, ACCEPT)],
      ["half A's, half B's", batch(2, 5, ACCEPT)],
    ];
    let a_epoch = 2;
    for (const [what, ack] of refused) {
      const response = await share_ack({ group: GROUP, member: 'owner-a', epoch: a_epoch++, partitions: [{ topic_id, acks: [ack] }] }, a_conn);
      assert.equal(ack_code(response, topic_id), ErrorCode.INVALID_RECORD_STATE, what);
    }
    // A member that holds nothing at all in a partition the group never read is refused alike.
    const other_id = await topic_with('owners-untouched', ['u-0']);
    assert.equal((await heartbeat(GROUP, 'owner-a', a_member_epoch, [TOPIC, 'owners-untouched'])).error_code, 0);
    const untouched = await share_ack({ group: GROUP, member: 'owner-a', epoch: a_epoch++, partitions: [{ topic_id: other_id, acks: [batch(0, 0, ACCEPT)] }] }, a_conn);
    assert.equal(ack_code(untouched, other_id), ErrorCode.INVALID_RECORD_STATE);

    // B still holds 4-7 (none was settled by A) and accepts them; A accepts its own 0-3 and 8-9.
    assert.equal(ack_code(await share_ack({ group: GROUP, member: 'owner-b', epoch: 1, partitions: [{ topic_id, acks: [batch(4, 7, ACCEPT)] }] }, b_conn), topic_id), 0);
    assert.equal(ack_code(await share_ack({ group: GROUP, member: 'owner-a', epoch: a_epoch++, partitions: [{ topic_id, acks: [batch(0, 3, ACCEPT), batch(8, 9, ACCEPT)] }] }, a_conn), topic_id), 0);

    // Everything is accepted: a new member finds nothing to acquire.
    await join(GROUP, 'owner-c', [TOPIC]);
    const late = await share_fetch({ group: GROUP, member: 'owner-c', epoch: 0, partitions: [{ topic_id }] });
    assert.equal(late.error_code, 0);
    assert.equal(partition_row(late, topic_id), undefined);
    await assert_broker_healthy();
  });

  // ---------------------------------------------------------------- 6. acknowledge types

  test('6. an unknown acknowledge type refuses the whole request with INVALID_REQUEST and changes nothing', async () => {
    const GROUP = 'types-group';
    const MEMBER = 'types-member';
    const TOPIC = 'types-topic';
    const topic_id = await topic_with(TOPIC, ['y-0', 'y-1', 'y-2', 'y-3', 'y-4', 'y-5']);
    await join(GROUP, MEMBER, [TOPIC]);
    const opened = await share_fetch({ group: GROUP, member: MEMBER, epoch: 0, partitions: [{ topic_id }], max_records: 4 });
    assert.deepEqual(acquired_ranges(partition_row(opened, topic_id)), [[0, 3, 1]]);

    // Type 9 next to a valid accept of 0-1, through ShareAcknowledge: nothing is settled.
    // (A refused request still uses its session epoch, as a Kafka client expects: it moves to the
    // next epoch on any error other than the two session errors.)
    let epoch = 1;
    const nine = await share_ack({ group: GROUP, member: MEMBER, epoch: epoch++, partitions: [{ topic_id, acks: [batch(0, 1, ACCEPT), batch(2, 3, 9)] }] });
    assert_refused(nine, ErrorCode.INVALID_REQUEST, 'type 9 in ShareAcknowledge');
    // Type -1, and renew (4, a v2 type Sluice does not support), alike.
    assert_refused(await share_ack({ group: GROUP, member: MEMBER, epoch: epoch++, partitions: [{ topic_id, acks: [batch(0, 0, -1)] }] }), ErrorCode.INVALID_REQUEST, 'type -1');
    assert_refused(await share_ack({ group: GROUP, member: MEMBER, epoch: epoch++, version: 2, partitions: [{ topic_id, acks: [batch(0, 0, 4)] }] }), ErrorCode.INVALID_REQUEST, 'type 4 (renew)');

    // Through ShareFetch: refused before anything is acquired (4-5 stay available).
    const fetch_nine = await share_fetch({ group: GROUP, member: MEMBER, epoch: epoch++, partitions: [{ topic_id, acks: [batch(0, 3, ACCEPT, ACCEPT, 9, ACCEPT)] }] });
    assert_refused(fetch_nine, ErrorCode.INVALID_REQUEST, 'type 9 in ShareFetch');

    // Malformed batches with valid types are refused per partition with INVALID_REQUEST.
    const too_few_types = await share_ack({ group: GROUP, member: MEMBER, epoch: epoch++, partitions: [{ topic_id, acks: [batch(0, 2, ACCEPT, ACCEPT)] }] });
    assert.equal(ack_code(too_few_types, topic_id), ErrorCode.INVALID_REQUEST, '2 types for 3 offsets');
    const backwards = await share_ack({ group: GROUP, member: MEMBER, epoch: epoch++, partitions: [{ topic_id, acks: [batch(3, 0, ACCEPT)] }] });
    assert.equal(ack_code(backwards, topic_id), ErrorCode.INVALID_REQUEST, 'last offset before first');

    // Nothing changed: 0-3 are still held (accepting them works), and the next fetch gets 4-5, first delivery.
    const accepted = await share_fetch({ group: GROUP, member: MEMBER, epoch: epoch++, partitions: [{ topic_id, acks: [batch(0, 3, ACCEPT)] }] });
    assert.equal(accepted.error_code, 0);
    const row = partition_row(accepted, topic_id);
    assert.equal(row?.acknowledge_error_code, 0);
    assert.deepEqual(acquired_ranges(row), [[4, 5, 1]]);
    assert.deepEqual(acquired_values(row), ['y-4', 'y-5']);
    await assert_broker_healthy();
  });

  // ---------------------------------------------------------------- 7. ShareAcknowledge epochs

  test('7. ShareAcknowledge cannot open a session (epoch 0) nor use one that does not exist', async () => {
    const GROUP = 'ack-epoch-group';
    const MEMBER = 'ack-epoch-member';
    const TOPIC = 'ack-epoch-topic';
    const topic_id = await topic_with(TOPIC, ['a-0', 'a-1']);
    await join(GROUP, MEMBER, [TOPIC]);

    // Without a session.
    const no_session_zero = await share_ack({ group: GROUP, member: MEMBER, epoch: 0, partitions: [{ topic_id, acks: [batch(0, 0, ACCEPT)] }] });
    assert_refused(no_session_zero, ErrorCode.INVALID_SHARE_SESSION_EPOCH, 'epoch 0 without a session');
    assert_refused(await share_ack({ group: GROUP, member: MEMBER, epoch: 3, partitions: [{ topic_id, acks: [batch(0, 0, ACCEPT)] }] }), ErrorCode.SHARE_SESSION_NOT_FOUND, 'epoch 3 without a session');

    // With a session holding 0-1: epoch 0 is still refused, and the session (next epoch 1) is kept.
    const opened = await share_fetch({ group: GROUP, member: MEMBER, epoch: 0, partitions: [{ topic_id }] });
    assert.deepEqual(acquired_ranges(partition_row(opened, topic_id)), [[0, 1, 1]]);
    assert_refused(await share_ack({ group: GROUP, member: MEMBER, epoch: 0, partitions: [{ topic_id, acks: [batch(0, 1, ACCEPT)] }] }), ErrorCode.INVALID_SHARE_SESSION_EPOCH, 'epoch 0 with a session');
    assert_refused(await share_ack({ group: GROUP, member: MEMBER, epoch: 4, partitions: [{ topic_id, acks: [batch(0, 1, ACCEPT)] }] }), ErrorCode.INVALID_SHARE_SESSION_EPOCH, 'epoch 4 with a session');
    assert.equal(ack_code(await share_ack({ group: GROUP, member: MEMBER, epoch: 1, partitions: [{ topic_id, acks: [batch(0, 1, ACCEPT)] }] }), topic_id), 0, 'the refused acknowledgements settled nothing');
    await assert_broker_healthy();
  });

  // ---------------------------------------------------------------- 8. lock renewal

  test('8. ShareFetch and ShareAcknowledge v2 with is_renew_ack are refused with INVALID_REQUEST', async () => {
    const GROUP = 'renew-group';
    const MEMBER = 'renew-member';
    const TOPIC = 'renew-topic';
    const topic_id = await topic_with(TOPIC, ['r-0', 'r-1', 'r-2']);
    await join(GROUP, MEMBER, [TOPIC]);

    // Refused before the session is looked at: not even epoch 0 opens one, nothing is acquired.
    assert_refused(await share_fetch({ group: GROUP, member: MEMBER, epoch: 0, version: 2, is_renew_ack: true, partitions: [{ topic_id }] }), ErrorCode.INVALID_REQUEST, 'ShareFetch v2 renew, epoch 0');
    assert_refused(await share_fetch({ group: GROUP, member: MEMBER, epoch: 1, version: 2, is_renew_ack: true }), ErrorCode.INVALID_REQUEST, 'ShareFetch v2 renew, epoch 1');

    const opened = await share_fetch({ group: GROUP, member: MEMBER, epoch: 0, version: 2, partitions: [{ topic_id }], max_records: 2 });
    assert.equal(opened.error_code, 0);
    assert.deepEqual(acquired_ranges(partition_row(opened, topic_id)), [[0, 1, 1]]);

    assert_refused(await share_fetch({ group: GROUP, member: MEMBER, epoch: 1, version: 2, is_renew_ack: true, partitions: [{ topic_id, acks: [batch(0, 1, 4)] }] }), ErrorCode.INVALID_REQUEST, 'ShareFetch v2 renew with a session');
    assert_refused(await share_ack({ group: GROUP, member: MEMBER, epoch: 1, version: 2, is_renew_ack: true, partitions: [{ topic_id, acks: [batch(0, 1, 4)] }] }), ErrorCode.INVALID_REQUEST, 'ShareAcknowledge v2 renew');

    // The renewals did not use up the session's epoch: epoch 1 accepts 0-1 and acquires 2.
    const next = await share_fetch({ group: GROUP, member: MEMBER, epoch: 1, version: 2, partitions: [{ topic_id, acks: [batch(0, 1, ACCEPT)] }] });
    assert.equal(next.error_code, 0);
    const row = partition_row(next, topic_id);
    assert.equal(row?.acknowledge_error_code, 0);
    assert.deepEqual(acquired_ranges(row), [[2, 2, 1]]);
    await assert_broker_healthy();
  });

  // ---------------------------------------------------------------- 9. describe

  test('9. ShareGroupDescribe: an unknown group is GROUP_ID_NOT_FOUND, a live one is Stable with its members', async () => {
    const GROUP = 'described-group';
    const TOPIC = 'described-topic';
    const topic_id = await topic_with(TOPIC, ['d-0']);
    const describe_groups = (group_ids: string[]) => conn.call(SHARE_GROUP_DESCRIBE, V.describe, { group_ids, include_authorized_operations: false });

    const unknown = await describe_groups(['never-seen-group']);
    const [missing] = unknown.groups as Row[];
    assert.equal(missing!.group_id, 'never-seen-group');
    assert.equal(missing!.error_code, ErrorCode.GROUP_ID_NOT_FOUND);
    assert.equal(missing!.group_state, 'Dead');
    assert.deepEqual(missing!.members, []);

    const epoch_x = await join(GROUP, 'member-x', [TOPIC]);
    const epoch_y = await join(GROUP, 'member-y', [TOPIC]);
    const both = await describe_groups(['never-seen-group', GROUP]);
    const [still_missing, live] = both.groups as Row[];
    assert.equal(still_missing!.error_code, ErrorCode.GROUP_ID_NOT_FOUND, 'one unknown group does not fail the others');
    assert.equal(live!.error_code, 0);
    assert.equal(live!.error_message, null);
    assert.equal(live!.group_id, GROUP);
    assert.equal(live!.group_state, 'Stable');
    assert.equal(live!.group_epoch, epoch_y);
    const members = (live!.members as Row[]).map((m) => ({ member_id: m.member_id, member_epoch: m.member_epoch, client_id: m.client_id, subscribed_topic_names: m.subscribed_topic_names, assignment: m.assignment }));
    members.sort((a, b) => String(a.member_id).localeCompare(String(b.member_id)));
    const assignment = { topic_partitions: [{ topic_id, topic_name: TOPIC, partitions: [0] }] };
    assert.deepEqual(members, [
      { member_id: 'member-x', member_epoch: epoch_x, client_id: 'share-bad-input-test', subscribed_topic_names: [TOPIC], assignment },
      { member_id: 'member-y', member_epoch: epoch_y, client_id: 'share-bad-input-test', subscribed_topic_names: [TOPIC], assignment },
    ]);

    // When every member has left, the group is Empty (not gone).
    for (const member of ['member-x', 'member-y']) assert.equal((await heartbeat(GROUP, member, -1, null)).error_code, 0);
    const [emptied] = (await describe_groups([GROUP])).groups as Row[];
    assert.equal(emptied!.error_code, 0);
    assert.equal(emptied!.group_state, 'Empty');
    assert.deepEqual(emptied!.members, []);
    await assert_broker_healthy();
  });

  // ---------------------------------------------------------------- 10. settling twice

  test('10. settling the same offset twice: the second is INVALID_RECORD_STATE', async () => {
    const GROUP = 'twice-group';
    const MEMBER = 'twice-member';
    const TOPIC = 'twice-topic';
    const topic_id = await topic_with(TOPIC, ['w-0', 'w-1', 'w-2']);
    await join(GROUP, MEMBER, [TOPIC]);
    const opened = await share_fetch({ group: GROUP, member: MEMBER, epoch: 0, partitions: [{ topic_id }] });
    assert.deepEqual(acquired_ranges(partition_row(opened, topic_id)), [[0, 2, 1]]);
    let epoch = 1;
    const ack = async (acks: AckBatch[]) => ack_code(await share_ack({ group: GROUP, member: MEMBER, epoch: epoch++, partitions: [{ topic_id, acks }] }), topic_id);

    assert.equal(await ack([batch(0, 0, ACCEPT)]), 0);
    assert.equal(await ack([batch(0, 0, ACCEPT)]), ErrorCode.INVALID_RECORD_STATE, 'accepted twice');
    assert.equal(await ack([batch(0, 0, REJECT)]), ErrorCode.INVALID_RECORD_STATE, 'rejected after an accept');
    // The same through ShareFetch.
    const again = await share_fetch({ group: GROUP, member: MEMBER, epoch: epoch++, partitions: [{ topic_id, acks: [batch(0, 0, ACCEPT)] }] });
    assert.equal(again.error_code, 0);
    assert.equal(partition_row(again, topic_id)?.acknowledge_error_code, ErrorCode.INVALID_RECORD_STATE);

    // Released records are no longer held either: accepting them afterwards is refused.
    assert.equal(await ack([batch(1, 1, RELEASE)]), 0);
    assert.equal(await ack([batch(1, 1, ACCEPT)]), ErrorCode.INVALID_RECORD_STATE, 'accepted after a release');

    // Offset 2 is still held and accepted once.
    assert.equal(await ack([batch(2, 2, ACCEPT)]), 0);
    assert.equal(await ack([batch(2, 2, ACCEPT)]), ErrorCode.INVALID_RECORD_STATE);
    await assert_broker_healthy();
  });

  // ---------------------------------------------------------------- 11. no state for refused requests

  test('11. refused requests leave nothing behind: no group from a bad heartbeat, no session for a stranger, no half-applied acknowledgements, no failed partition kept in the session', async () => {
    const TOPIC = 'atomic-topic';
    const topic_id = await topic_with(TOPIC, ['a-0', 'a-1', 'a-2', 'a-3']);

    // A heartbeat refused as from an unknown member does not create its group.
    assert.equal((await heartbeat('typo-group', 'x', 5, null)).error_code, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal((await heartbeat('typo-group', 'x', 0, null)).error_code, ErrorCode.INVALID_REQUEST);
    assert.equal((await heartbeat('typo-group', 'x', -1, null)).error_code, 0);
    const described = await conn.call(SHARE_GROUP_DESCRIBE, 1, { group_ids: ['typo-group'], include_authorized_operations: false });
    assert.equal((described.groups as Row[])[0]!.error_code, ErrorCode.GROUP_ID_NOT_FOUND);

    // A stranger's ShareFetch opens no session: a later ShareAcknowledge is refused for the member, not the session.
    const GROUP = 'atomic-group';
    await join(GROUP, 'real', [TOPIC]);
    assert_refused(await share_fetch({ group: GROUP, member: 'stranger', epoch: 0, partitions: [{ topic_id }] }), ErrorCode.UNKNOWN_MEMBER_ID, 'stranger fetch');
    assert_refused(await share_ack({ group: GROUP, member: 'stranger', epoch: 1, partitions: [{ topic_id, acks: [batch(0, 0, ACCEPT)] }] }), ErrorCode.UNKNOWN_MEMBER_ID, 'stranger ack');

    // One bad batch refuses the partition's whole acknowledgement: offset 0 stays acquired.
    const fetched = await share_fetch({ group: GROUP, member: 'real', epoch: 0, partitions: [{ topic_id }], max_records: 3 });
    assert.deepEqual(acquired_ranges(partition_row(fetched, topic_id)), [[0, 2, 1]]);
    assert.equal(ack_code(await share_ack({ group: GROUP, member: 'real', epoch: 1, partitions: [{ topic_id, acks: [batch(0, 0, ACCEPT), batch(3, 3, ACCEPT)] }] }), topic_id), ErrorCode.INVALID_RECORD_STATE);
    assert.equal(ack_code(await share_ack({ group: GROUP, member: 'real', epoch: 2, partitions: [{ topic_id, acks: [batch(1, 2, ACCEPT), batch(2, 2, ACCEPT)] }] }), topic_id), ErrorCode.INVALID_REQUEST, 'overlapping batches');
    assert.equal(ack_code(await share_ack({ group: GROUP, member: 'real', epoch: 3, partitions: [{ topic_id, acks: [batch(0, 2, ACCEPT)] }] }), topic_id), 0, 'all three were still held');

    // A partition that does not exist is answered once and then leaves the session: the next fetch waits.
    const bad = await share_fetch({ group: GROUP, member: 'real', epoch: 4, partitions: [{ topic_id, partition: 5 }] });
    assert.equal(partition_row(bad, topic_id, 5)?.error_code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.deepEqual(acquired_ranges(partition_row(bad, topic_id, 0)), [[3, 3, 1]], 'the good partition of the session is still served');
    const started = Date.now();
    const idle = await share_fetch({ group: GROUP, member: 'real', epoch: 5, partitions: [], max_wait_ms: 300 });
    assert.equal(partition_row(idle, topic_id, 5), undefined, 'the bad partition is not reported again');
    assert.ok(Date.now() - started >= 250, 'the fetch waited for records');
    await assert_broker_healthy();
  });

  // ---------------------------------------------------------------- 12. group configs

  test('12. group configs through IncrementalAlterConfigs and DescribeConfigs (resource type 32); a bad value is INVALID_CONFIG', async () => {
    const GROUP_RESOURCE = 32;
    const alter = (configs: Array<{ name: string; config_operation: number; value: string | null }>) =>
      conn.call(INCREMENTAL_ALTER_CONFIGS, 1, { resources: [{ resource_type: GROUP_RESOURCE, resource_name: 'configured-group', configs }], validate_only: false });
    const refused = await alter([{ name: 'share.delivery.count.limit', config_operation: 0, value: 'lots' }]);
    assert.equal((refused.responses as Row[])[0]!.error_code, ErrorCode.INVALID_CONFIG);
    const ok = await alter([{ name: 'share.record.lock.duration.ms', config_operation: 0, value: '5000' }, { name: 'sluice.share.ordering', config_operation: 0, value: 'key' }]);
    assert.equal((ok.responses as Row[])[0]!.error_code, 0);
    const described = await conn.call(DESCRIBE_CONFIGS, 4, { resources: [{ resource_type: GROUP_RESOURCE, resource_name: 'configured-group', configuration_keys: null }], include_synonyms: false, include_documentation: false });
    const configs = ((described.results as Row[])[0]!.configs as Row[]).map((c) => [c.name, c.value, c.config_source]);
    assert.deepEqual(configs.find((c) => c[0] === 'share.record.lock.duration.ms'), ['share.record.lock.duration.ms', '5000', 8], 'GROUP_CONFIG source');
    assert.deepEqual(configs.find((c) => c[0] === 'sluice.share.ordering'), ['sluice.share.ordering', 'key', 8]);
    assert.deepEqual(configs.find((c) => c[0] === 'share.delivery.count.limit'), ['share.delivery.count.limit', '5', 5], 'DEFAULT_CONFIG source');
    const removed = await alter([{ name: 'sluice.share.ordering', config_operation: 1, value: null }]);
    assert.equal((removed.responses as Row[])[0]!.error_code, 0);
    await assert_broker_healthy();
  });
});
