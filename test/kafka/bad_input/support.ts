// What the Kafka bad-input tests share: request bodies and readers for the raw client, and the broker
// under test. Each test file gets its own broker with a topic of acknowledged records and a "canary"
// connection opened before any bad input; after every case the canary must still get answers and the
// records acknowledged at the start must still be readable.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import { start_broker, type RunningBroker, type StartOptions } from '../../../src/compose/start_broker.ts';
import type { Value } from '../../../src/protocol/kafka/codec.ts';
import { decode_record_batch, encode_record_batch } from '../../../src/protocol/record_batch.ts';
import { PRODUCE } from '../../../src/protocol/kafka/messages/00_produce.ts';
import { FETCH } from '../../../src/protocol/kafka/messages/01_fetch.ts';
import { LIST_OFFSETS } from '../../../src/protocol/kafka/messages/02_list_offsets.ts';
import { METADATA } from '../../../src/protocol/kafka/messages/03_metadata.ts';
import { API_VERSIONS } from '../../../src/protocol/kafka/messages/18_api_versions.ts';
import { CREATE_TOPICS } from '../../../src/protocol/kafka/messages/19_create_topics.ts';
import type { Logger } from '../../../src/storage/index.ts';
import { RawClient } from './raw_client.ts';

export const REQUEST_BYTES_MAX = 1024 * 1024;

// Versions used throughout (all inside the ranges the broker advertises).
export const V = {
  produce: 9,
  fetch: 11,
  list_offsets: 5,
  metadata: 12,
  api_versions: 3,
  create_topics: 5,
  join_group: 5,
  sync_group: 3,
  heartbeat: 3,
  offset_commit: 7,
  offset_fetch: 7,
};

// ------------------------------------------------------------------ request bodies

export function records_of(
  values: string[],
  options: { producer_id?: number; producer_epoch?: number; base_sequence?: number; attributes?: number } = {},
): Buffer {
  return encode_record_batch(
    values.map((value, i) => ({
      key: Buffer.from(`k${i}`),
      value: Buffer.from(value),
      timestamp_ms: 1_700_000_000_000 + i,
    })),
    options,
  );
}

export function produce_body(
  topic: string,
  records: Buffer | null,
  options: { acks?: number; partition?: number } = {},
): Value {
  return {
    transactional_id: null,
    acks: options.acks ?? -1,
    timeout_ms: 5_000,
    topic_data: [{ name: topic, partition_data: [{ index: options.partition ?? 0, records }] }],
  };
}

export function metadata_body(topics: string[] | null, allow_auto_topic_creation = false): Value {
  return {
    topics: topics === null ? null : topics.map((name) => ({ name })),
    allow_auto_topic_creation,
    include_topic_authorized_operations: false,
  };
}

export function fetch_body(topic: string, offset: number): Value {
  const partition = {
    partition: 0,
    current_leader_epoch: -1,
    fetch_offset: offset,
    log_start_offset: -1,
    partition_max_bytes: 1024 * 1024,
  };
  return {
    replica_id: -1,
    max_wait_ms: 0,
    min_bytes: 0,
    max_bytes: 1024 * 1024,
    isolation_level: 0,
    session_id: 0,
    session_epoch: -1,
    topics: [{ topic, partitions: [partition] }],
    forgotten_topics_data: [],
    rack_id: '',
  };
}

// ------------------------------------------------------------------ calls and their answers

export type Row = Record<string, unknown>;

export function only_partition(response: Value, topics_field: string, partitions_field: string): Row {
  const topics = response[topics_field] as Row[];
  assert.equal(topics.length, 1);
  const partitions = topics[0]![partitions_field] as Row[];
  assert.equal(partitions.length, 1);
  return partitions[0]!;
}

export async function produce(
  client: RawClient,
  topic: string,
  records: Buffer | null,
  options: { acks?: number; partition?: number } = {},
): Promise<Row> {
  const response = await client.call(PRODUCE, V.produce, produce_body(topic, records, options));
  return only_partition(response, 'responses', 'partition_responses');
}

/** The values of every record of partition 0 from `offset`, and the high watermark. */
export async function fetch_values(
  client: RawClient,
  topic: string,
  offset = 0,
): Promise<{ error_code: number; high_watermark: number; values: string[]; offsets: number[] }> {
  const response = await client.call(FETCH, V.fetch, fetch_body(topic, offset));
  const partition = only_partition(response, 'responses', 'partitions');
  const values: string[] = [];
  const offsets: number[] = [];
  const records = partition.records as Buffer | null;
  for (let at = 0; records !== null && at + 12 <= records.length;) {
    const size = records.readInt32BE(at + 8) + 12;
    for (const record of decode_record_batch(records.subarray(at, at + size))) {
      if (record.offset < offset) continue;
      values.push(record.value!.toString());
      offsets.push(record.offset);
    }
    at += size;
  }
  return {
    error_code: partition.error_code as number,
    high_watermark: partition.high_watermark as number,
    values,
    offsets,
  };
}

export async function end_offset(client: RawClient, topic: string): Promise<number> {
  const body = {
    replica_id: -1,
    isolation_level: 0,
    topics: [{ name: topic, partitions: [{ partition_index: 0, current_leader_epoch: -1, timestamp: -1 }] }],
  };
  const partition = only_partition(await client.call(LIST_OFFSETS, V.list_offsets, body), 'topics', 'partitions');
  assert.equal(partition.error_code, 0);
  return partition.offset as number;
}

export async function create_topic(
  client: RawClient,
  name: string,
  configs: Record<string, string> = {},
): Promise<void> {
  const topic = {
    name,
    num_partitions: 1,
    replication_factor: 1,
    assignments: [],
    configs: Object.entries(configs).map(([config, value]) => ({ name: config, value })),
  };
  const body = { topics: [topic], timeout_ms: 5_000, validate_only: false };
  const response = await client.call(CREATE_TOPICS, V.create_topics, body);
  const [row] = response.topics as Row[];
  assert.equal(row!.error_code, 0, `create ${name}: ${String(row!.error_message)}`);
}

// ------------------------------------------------------------------ the broker under test

interface LogLine {
  level: 'info' | 'warn' | 'error';
  fields: Record<string, unknown>;
  message: string;
}

function capturing_logger(lines: LogLine[]): Logger {
  const add = (level: LogLine['level']) => (fields: object, message: string) =>
    lines.push({ level, fields: fields as Record<string, unknown>, message });
  return { info: add('info'), warn: add('warn'), error: add('error') };
}

function temp_dir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `sluice-${prefix}-`));
}

const ACKED_TOPIC = 'acked';
const ACKED_VALUES = ['acked-0', 'acked-1', 'acked-2', 'acked-3', 'acked-4'];

/** The broker a test file's cases run against (see bad_input_broker), with what they need of it. */
export class BadInputBroker {
  /** What every broker of the file logged. */
  readonly log: LogLine[] = [];
  running!: RunningBroker;
  /** A connection opened before any bad input, which must stay open and answered. */
  canary!: RawClient;
  private readonly data_dirs: string[] = [];
  /** Connections to close at the end (each case uses its own). */
  private readonly clients: RawClient[] = [];

  /** Starts a broker on a new data directory (removed at the end) that logs to `log`; the caller closes it. */
  start_other(prefix: string, options: Omit<StartOptions, 'data_dir'> = {}): Promise<RunningBroker> {
    const data_dir = temp_dir(prefix);
    this.data_dirs.push(data_dir);
    const logger = capturing_logger(this.log);
    return start_broker({ data_dir, kafka: { host: '127.0.0.1', port: 0 }, ...options, logger });
  }

  async connect(target: RunningBroker = this.running): Promise<RawClient> {
    const client = await RawClient.connect(target.kafka_address);
    this.clients.push(client);
    return client;
  }

  /** The reasons the broker logged for closing connections since `from` (an index into the log). */
  close_reasons(from: number): string[] {
    return this.log
      .slice(from)
      .filter((line) => line.message === 'closing Kafka connection')
      .map((line) => String(line.fields.reason));
  }

  /**
   * The broker still serves: the canary connection (opened before any bad input) gets ApiVersions
   * and Metadata answers, a new connection is accepted and answered, and the records acknowledged
   * at the start are all still readable.
   */
  async assert_healthy(): Promise<void> {
    const canary = this.canary;
    assert.equal(canary.closed, false, 'the canary connection was closed');
    const software = { client_software_name: 'canary', client_software_version: '1' };
    const versions = await canary.call(API_VERSIONS, V.api_versions, software);
    assert.equal(versions.error_code, 0);
    assert.ok((versions.api_keys as Row[]).some((k) => k.api_key === PRODUCE.api_key));
    const metadata = await canary.call(METADATA, V.metadata, metadata_body([ACKED_TOPIC]));
    const [topic] = metadata.topics as Row[];
    assert.equal(topic!.error_code, 0);
    assert.equal((topic!.partitions as Row[]).length, 1);
    const fresh = await this.connect();
    const fresh_versions = await fresh.call(API_VERSIONS, 0, {});
    assert.equal(fresh_versions.error_code, 0);
    fresh.destroy();
    const acked = await fetch_values(canary, ACKED_TOPIC);
    assert.equal(acked.error_code, 0);
    assert.deepEqual(acked.values, ACKED_VALUES, 'records acknowledged before the bad input are readable');
    assert.equal(acked.high_watermark, ACKED_VALUES.length);
  }

  async start(): Promise<void> {
    const limits = { request_bytes_max: REQUEST_BYTES_MAX };
    this.running = await this.start_other('bad-input', { auto_create_topics: true, limits });
    this.canary = await this.connect();
    await create_topic(this.canary, ACKED_TOPIC);
    const acked = await produce(this.canary, ACKED_TOPIC, records_of(ACKED_VALUES));
    assert.equal(acked.error_code, 0);
    assert.equal(acked.base_offset, 0);
    await this.assert_healthy();
  }

  async stop(): Promise<void> {
    for (const client of this.clients) client.destroy();
    await this.running?.close();
    for (const dir of this.data_dirs) fs.rmSync(dir, { recursive: true, force: true });
    // No request ever made a handler throw (that would close a connection with an internal error).
    const internal = this.log.filter((line) => line.level === 'error');
    assert.deepEqual(internal, [], 'the broker logged errors');
  }
}

/**
 * A broker for the calling test file: started before its tests (then `prepare` runs, for what the
 * file's cases share), stopped and checked after them. A file has a single top-level `before`: this.
 */
export function bad_input_broker(prepare?: (broker: BadInputBroker) => Promise<void>): BadInputBroker {
  const broker = new BadInputBroker();
  before(async () => {
    await broker.start();
    await prepare?.(broker);
  });
  after(() => broker.stop());
  return broker;
}
