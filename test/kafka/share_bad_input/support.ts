// What the share-group bad-input tests share: request bodies and readers for the KIP-932 APIs, and
// the broker under test, a real broker process per test file with a canary topic. After every case
// a new member of a new group must still join, open a share session and settle a canary record.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before } from 'node:test';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../../support/broker_process.ts';
import { Connection } from '../../../src/protocol/kafka/client_connection.ts';
import type { Value } from '../../../src/protocol/kafka/codec.ts';
import { decode_record_batch, encode_record_batch } from '../../../src/protocol/record_batch.ts';
import { PRODUCE } from '../../../src/protocol/kafka/messages/00_produce.ts';
import { METADATA } from '../../../src/protocol/kafka/messages/03_metadata.ts';
import { CREATE_TOPICS } from '../../../src/protocol/kafka/messages/19_create_topics.ts';
import { SHARE_GROUP_HEARTBEAT } from '../../../src/protocol/kafka/messages/76_share_group_heartbeat.ts';
import { SHARE_FETCH } from '../../../src/protocol/kafka/messages/78_share_fetch.ts';
import { SHARE_ACKNOWLEDGE } from '../../../src/protocol/kafka/messages/79_share_acknowledge.ts';

// Versions used throughout (all inside the ranges the broker advertises).
export const V = { produce: 9, metadata: 12, create_topics: 5, heartbeat: 1, describe: 1 };
const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
/** A topic id no topic has. */
export const UNKNOWN_TOPIC_ID = Buffer.from('sluice-no-topic!').toString('base64url');

export const ACCEPT = 1;
export const RELEASE = 2;
export const REJECT = 3;

export type Row = Record<string, unknown>;

// ------------------------------------------------------------------ request bodies

export interface AckBatch {
  first_offset: number;
  last_offset: number;
  acknowledge_types: number[];
  sluice_failure_reason: string | null;
  sluice_release_delay_ms: number;
}

/** One acknowledgement batch, with Sluice's tagged fields at their defaults. */
export function batch(first_offset: number, last_offset: number, ...acknowledge_types: number[]): AckBatch {
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

export interface FetchArgs {
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

interface AckArgs {
  group: string;
  member: string;
  epoch: number;
  partitions: PartitionRequest[];
  is_renew_ack?: boolean;
  version?: 1 | 2;
}

function share_ack_body(a: AckArgs): Value {
  return {
    group_id: a.group,
    member_id: a.member,
    share_session_epoch: a.epoch,
    is_renew_ack: a.is_renew_ack ?? false,
    topics: topics_of(a.partitions),
  };
}

function records_of(values: string[]): Buffer {
  return encode_record_batch(
    values.map((value, i) => ({
      key: Buffer.from(`k${i}`),
      value: Buffer.from(value),
      timestamp_ms: 1_700_000_000_000 + i,
    })),
  );
}

// ------------------------------------------------------------------ reading responses

/** The response row of one partition, or undefined when the response does not mention it. */
export function partition_row(response: Value, topic_id: string, partition = 0): Row | undefined {
  const topic = (response.responses as Row[]).find((t) => t.topic_id === topic_id);
  return (topic?.partitions as Row[] | undefined)?.find((p) => p.partition_index === partition);
}

/** The acquired ranges of a ShareFetch partition row, as [first, last, delivery_count]. */
export function acquired_ranges(row: Row | undefined): Array<[number, number, number]> {
  return ((row?.acquired_records as Row[] | undefined) ?? []).map((r) => [
    r.first_offset as number,
    r.last_offset as number,
    r.delivery_count as number,
  ]);
}

/** The values of the acquired records of a ShareFetch partition row, by offset. */
export function acquired_values(row: Row | undefined): string[] {
  if (!row) return [];
  const offsets = (first: number, last: number) => Array.from({ length: last - first + 1 }, (_, i) => first + i);
  const wanted = new Set(acquired_ranges(row).flatMap(([first, last]) => offsets(first, last)));
  const records = row.records as Buffer;
  const values: string[] = [];
  for (let at = 0; at + 12 <= records.length;) {
    const size = records.readInt32BE(at + 8) + 12;
    for (const record of decode_record_batch(records.subarray(at, at + size))) {
      if (wanted.has(record.offset)) values.push(record.value!.toString());
    }
    at += size;
  }
  return values;
}

/** Asserts a top-level refusal: the code, a message, and no partitions answered. */
export function assert_refused(response: Value, code: number, what: string): void {
  assert.equal(response.error_code, code, `${what}: error_code (message: ${String(response.error_message)})`);
  assert.equal(typeof response.error_message, 'string', `${what}: an error message`);
  assert.deepEqual(response.responses, [], `${what}: no partitions answered`);
}

/** The error code of the only partition of a ShareAcknowledge response (which must succeed). */
export function ack_code(response: Value, topic_id: string): number {
  assert.equal(response.error_code, 0, `ShareAcknowledge top level: ${String(response.error_message)}`);
  const row = partition_row(response, topic_id);
  assert.ok(row, 'the partition is answered');
  return row.error_code as number;
}

// ------------------------------------------------------------------ the broker under test

export const CANARY_TOPIC = 'share-canary';
const CANARY_VALUES = ['canary-0', 'canary-1', 'canary-2'];

/**
 * The broker process a test file's cases run against (see share_bad_input_broker), and the calls
 * they make of it. The calls are bound functions, so a file can take them out of the object.
 */
export class ShareBadInputBroker {
  private data_dir!: string;
  private broker!: BrokerProcess;
  /** The connection the calls use unless they are given another. */
  conn!: Connection;
  private readonly connections: Connection[] = [];
  private canary_id!: string;
  private health_round = 0;

  connect = async (): Promise<Connection> => {
    const [host, port] = this.broker.bootstrap.split(':');
    const options = { client_id: 'share-bad-input-test', request_timeout_ms: 10_000 };
    const connection = await Connection.connect(host!, Number(port), options);
    this.connections.push(connection);
    return connection;
  };

  topic_id_of = async (name: string): Promise<string> => {
    const metadata = await this.conn.call(METADATA, V.metadata, {
      topics: [{ name, topic_id: ZERO_UUID }],
      allow_auto_topic_creation: false,
      include_topic_authorized_operations: false,
    });
    const [topic] = metadata.topics as Row[];
    assert.equal(topic!.error_code, 0, `metadata of ${name}`);
    assert.notEqual(topic!.topic_id, ZERO_UUID);
    return topic!.topic_id as string;
  };

  /** Creates a one-partition topic holding `values` (one batch, offsets 0..) and returns its id. */
  topic_with = async (name: string, values: string[]): Promise<string> => {
    const created = await this.conn.call(CREATE_TOPICS, V.create_topics, {
      topics: [{ name, num_partitions: 1, replication_factor: 1, assignments: [], configs: [] }],
      timeout_ms: 5_000,
      validate_only: false,
    });
    const [row] = created.topics as Row[];
    assert.equal(row!.error_code, 0, `create ${name}: ${String(row!.error_message)}`);
    if (values.length > 0) {
      const produced = await this.conn.call(PRODUCE, V.produce, {
        transactional_id: null,
        acks: -1,
        timeout_ms: 5_000,
        topic_data: [{ name, partition_data: [{ index: 0, records: records_of(values) }] }],
      });
      const partition = ((produced.responses as Row[])[0]!.partition_responses as Row[])[0]!;
      assert.equal(partition.error_code, 0, `produce to ${name}`);
      assert.equal(partition.base_offset, 0);
    }
    return this.topic_id_of(name);
  };

  heartbeat = (
    group: string,
    member: string,
    epoch: number,
    topics: string[] | null,
    connection = this.conn,
  ): Promise<Value> =>
    connection.call(SHARE_GROUP_HEARTBEAT, V.heartbeat, {
      group_id: group,
      member_id: member,
      member_epoch: epoch,
      rack_id: null,
      subscribed_topic_names: topics,
    });

  /** Joins `member` to `group` subscribed to `topics`; returns its member epoch. */
  join = async (group: string, member: string, topics: string[]): Promise<number> => {
    const joined = await this.heartbeat(group, member, 0, topics);
    assert.equal(joined.error_code, 0, `join ${member}: ${String(joined.error_message)}`);
    assert.equal(joined.member_id, member);
    assert.ok((joined.member_epoch as number) >= 1);
    return joined.member_epoch as number;
  };

  share_fetch = (args: FetchArgs, connection = this.conn): Promise<Value> =>
    connection.call_untyped(SHARE_FETCH, args.version ?? 1, share_fetch_body(args));

  share_ack = (args: AckArgs, connection = this.conn): Promise<Value> =>
    connection.call_untyped(SHARE_ACKNOWLEDGE, args.version ?? 1, share_ack_body(args));

  /**
   * The broker still serves: Metadata answers, and a new member of a new group joins, opens a
   * share session, acquires the canary topic's first record, accepts it and leaves.
   */
  assert_broker_healthy = async (): Promise<void> => {
    const { canary_id } = this;
    assert.equal(this.conn.is_closed, false, 'the main connection is still open');
    assert.equal(await this.topic_id_of(CANARY_TOPIC), canary_id);
    const group = `health-${++this.health_round}`;
    const member = `health-member-${this.health_round}`;
    const epoch = await this.join(group, member, [CANARY_TOPIC]);
    const partitions = [{ topic_id: canary_id }];
    const fetched = await this.share_fetch({ group, member, epoch: 0, partitions, max_records: 1 });
    assert.equal(fetched.error_code, 0, `health fetch: ${String(fetched.error_message)}`);
    const row = partition_row(fetched, canary_id);
    assert.deepEqual(acquired_ranges(row), [[0, 0, 1]], 'a fresh group acquires the first record');
    assert.deepEqual(acquired_values(row), [CANARY_VALUES[0]]);
    const accepted = await this.share_ack({
      group,
      member,
      epoch: 1,
      partitions: [{ topic_id: canary_id, acks: [batch(0, 0, ACCEPT)] }],
    });
    assert.equal(ack_code(accepted, canary_id), 0);
    const beat = await this.heartbeat(group, member, epoch, null);
    assert.equal(beat.error_code, 0);
    assert.equal(beat.member_epoch, epoch);
    const left = await this.heartbeat(group, member, -1, null);
    assert.equal(left.error_code, 0);
    assert.equal(left.member_epoch, -1);
  };

  async start(): Promise<void> {
    this.data_dir = new_data_dir('share-bad-input');
    this.broker = await start_broker_process({ data_dir: path.join(this.data_dir, 'data') });
    this.conn = await this.connect();
    this.canary_id = await this.topic_with(CANARY_TOPIC, CANARY_VALUES);
    await this.assert_broker_healthy();
  }

  async stop(): Promise<void> {
    for (const connection of this.connections) connection.close();
    const code = await this.broker?.stop();
    const output = this.broker?.output() ?? '';
    fs.rmSync(this.data_dir, { recursive: true, force: true });
    assert.equal(code, 0, `the broker stopped cleanly:\n${output}`);
    // No request made the broker log an error (pino levels 50 and 60).
    assert.doesNotMatch(output, /"level":(50|60)/, `the broker logged errors:\n${output}`);
  }
}

/** A broker process for the calling test file: started before its tests, stopped (and checked) after them. */
export function share_bad_input_broker(): ShareBadInputBroker {
  const broker = new ShareBadInputBroker();
  before(() => broker.start());
  after(() => broker.stop());
  return broker;
}
