// The Kafka front end on bad input, seen through a raw TCP client: malformed and truncated frames,
// unknown APIs and versions, refused produce requests, group protocol errors, pipelining and
// requests split into single bytes. After every case a separate "canary" connection must still get
// answers and the records acknowledged before must still be readable.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { start_broker, type RunningBroker } from '../../src/compose/start_broker.ts';
import { Reader, Writer } from '../../src/protocol/kafka/wire.ts';
import { message_codec, type Value } from '../../src/protocol/kafka/codec.ts';
import { response_header_flexible, skip_header_tags, write_request_header } from '../../src/protocol/kafka/header.ts';
import type { ApiSpec } from '../../src/protocol/kafka/schema.ts';
import { ErrorCode } from '../../src/protocol/kafka/error_codes.ts';
import { decode_record_batch, encode_record_batch } from '../../src/protocol/record_batch.ts';
import { PRODUCE } from '../../src/protocol/kafka/messages/00_produce.ts';
import { FETCH } from '../../src/protocol/kafka/messages/01_fetch.ts';
import { LIST_OFFSETS } from '../../src/protocol/kafka/messages/02_list_offsets.ts';
import { METADATA } from '../../src/protocol/kafka/messages/03_metadata.ts';
import { OFFSET_COMMIT } from '../../src/protocol/kafka/messages/08_offset_commit.ts';
import { OFFSET_FETCH } from '../../src/protocol/kafka/messages/09_offset_fetch.ts';
import { JOIN_GROUP } from '../../src/protocol/kafka/messages/11_join_group.ts';
import { HEARTBEAT } from '../../src/protocol/kafka/messages/12_heartbeat.ts';
import { SYNC_GROUP } from '../../src/protocol/kafka/messages/14_sync_group.ts';
import { API_VERSIONS } from '../../src/protocol/kafka/messages/18_api_versions.ts';
import { CREATE_TOPICS } from '../../src/protocol/kafka/messages/19_create_topics.ts';
import { INIT_PRODUCER_ID } from '../../src/protocol/kafka/messages/22_init_producer_id.ts';
import type { Logger } from '../../src/storage/index.ts';

/** Every wait in this file is bounded by this. */
const WAIT_MS = 5_000;
const REQUEST_BYTES_MAX = 1024 * 1024;
const CLIENT_ID = 'bad-input-test';

// Versions used throughout (all inside the ranges the broker advertises).
const V = { produce: 9, fetch: 11, list_offsets: 5, metadata: 12, api_versions: 3, create_topics: 5, join_group: 5, sync_group: 3, heartbeat: 3, offset_commit: 7, offset_fetch: 7 };

// ------------------------------------------------------------------ a raw client

function with_timeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

function frame(body: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  return Buffer.concat([size, body]);
}

function size_prefix(size: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(size);
  return bytes;
}

/** A whole request frame (size prefix included) encoded with our codecs. */
function encode_request(api: ApiSpec, version: number, correlation_id: number, body: Value): Buffer {
  const codec = message_codec(api.request, version);
  const writer = new Writer();
  write_request_header(writer, { api_key: api.api_key, api_version: version, correlation_id, client_id: CLIENT_ID }, codec.flexible);
  codec.encode(writer, body);
  return frame(writer.to_buffer());
}

/** A request header alone (v1 layout, or v2 with an empty tag section), for hand-made bodies. */
function header_bytes(api_key: number, api_version: number, correlation_id: number, flexible = false): Buffer {
  const writer = new Writer();
  write_request_header(writer, { api_key, api_version, correlation_id, client_id: CLIENT_ID }, flexible);
  return writer.to_buffer();
}

function decode_response(api: ApiSpec, version: number, response_frame: Buffer, correlation_id: number): Value {
  const codec = message_codec(api.response, version);
  const reader = new Reader(response_frame);
  assert.equal(reader.int32(), correlation_id, `${api.name} v${version}: correlation id`);
  if (response_header_flexible(api.api_key, codec.flexible)) skip_header_tags(reader);
  const body = codec.decode(reader);
  assert.equal(reader.remaining, 0, `${api.name} v${version}: every response byte consumed`);
  return body;
}

class RawClient {
  private pending = Buffer.alloc(0);
  private readonly frames: Buffer[] = [];
  private wake: (() => void) | null = null;
  private next_correlation = 1;
  bytes_received = 0;
  closed = false;
  private readonly closed_promise: Promise<void>;

  private constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on('data', (data: Buffer) => {
      this.bytes_received += data.length;
      this.pending = Buffer.concat([this.pending, data]);
      while (this.pending.length >= 4) {
        const size = this.pending.readInt32BE(0);
        if (this.pending.length < 4 + size) break;
        this.frames.push(this.pending.subarray(4, 4 + size));
        this.pending = this.pending.subarray(4 + size);
      }
      this.notify();
    });
    socket.on('error', () => undefined);
    this.closed_promise = new Promise((resolve) =>
      socket.on('close', () => {
        this.closed = true;
        this.notify();
        resolve();
      }),
    );
  }

  static async connect(address: { host: string; port: number }): Promise<RawClient> {
    const socket = net.connect(address.port, address.host);
    socket.on('error', () => undefined);
    await with_timeout(
      new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      }),
      WAIT_MS,
      'connect',
    );
    return new RawClient(socket);
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  correlation(): number {
    return this.next_correlation++;
  }

  write(bytes: Buffer): Promise<void> {
    return with_timeout(
      new Promise<void>((resolve, reject) => this.socket.write(bytes, (error) => (error ? reject(error) : resolve()))),
      WAIT_MS,
      'a write to complete',
    );
  }

  /** Writes one byte per write call, yielding to the event loop in between so each is read alone. */
  async write_bytewise(bytes: Buffer): Promise<void> {
    for (let i = 0; i < bytes.length; i++) {
      await this.write(bytes.subarray(i, i + 1));
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  end(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** The next response frame (without its size prefix); fails on close or after WAIT_MS. */
  async next_frame(): Promise<Buffer> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const frame = this.frames.shift();
      if (frame) return frame;
      if (this.closed) throw new Error('connection closed while waiting for a response');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no response within ${WAIT_MS} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Waits for the broker to close the connection; fails after WAIT_MS. */
  async wait_closed(): Promise<void> {
    await with_timeout(this.closed_promise, WAIT_MS, 'the broker to close the connection');
  }

  /** Expects the broker to close the connection without answering anything. */
  async expect_closed_without_response(what: string): Promise<void> {
    await this.wait_closed();
    assert.equal(this.bytes_received, 0, `${what}: the broker answered before closing`);
  }

  async call(api: ApiSpec, version: number, body: Value): Promise<Value> {
    const correlation_id = this.correlation();
    await this.write(encode_request(api, version, correlation_id, body));
    return decode_response(api, version, await this.next_frame(), correlation_id);
  }
}

// ------------------------------------------------------------------ request bodies

function records_of(values: string[], options: { producer_id?: number; producer_epoch?: number; base_sequence?: number } = {}): Buffer {
  return encode_record_batch(
    values.map((value, i) => ({ key: Buffer.from(`k${i}`), value: Buffer.from(value), timestamp_ms: 1_700_000_000_000 + i })),
    options,
  );
}

function produce_body(topic: string, records: Buffer | null, options: { acks?: number; partition?: number } = {}): Value {
  return { transactional_id: null, acks: options.acks ?? -1, timeout_ms: 5_000, topic_data: [{ name: topic, partition_data: [{ index: options.partition ?? 0, records }] }] };
}

function metadata_body(topics: string[] | null, allow_auto_topic_creation = false): Value {
  return { topics: topics === null ? null : topics.map((name) => ({ name })), allow_auto_topic_creation, include_topic_authorized_operations: false };
}

function fetch_body(topic: string, offset: number): Value {
  return {
    replica_id: -1,
    max_wait_ms: 0,
    min_bytes: 0,
    max_bytes: 1024 * 1024,
    isolation_level: 0,
    session_id: 0,
    session_epoch: -1,
    topics: [{ topic, partitions: [{ partition: 0, current_leader_epoch: -1, fetch_offset: offset, log_start_offset: -1, partition_max_bytes: 1024 * 1024 }] }],
    forgotten_topics_data: [],
    rack_id: '',
  };
}

type Row = Record<string, unknown>;

function only_partition(response: Value, topics_field: string, partitions_field: string): Row {
  const topics = response[topics_field] as Row[];
  assert.equal(topics.length, 1);
  const partitions = topics[0]![partitions_field] as Row[];
  assert.equal(partitions.length, 1);
  return partitions[0]!;
}

async function produce(client: RawClient, topic: string, records: Buffer | null, options: { acks?: number; partition?: number } = {}): Promise<Row> {
  return only_partition(await client.call(PRODUCE, V.produce, produce_body(topic, records, options)), 'responses', 'partition_responses');
}

/** The values of every record of partition 0 from `offset`, and the high watermark. */
async function fetch_values(client: RawClient, topic: string, offset = 0): Promise<{ error_code: number; high_watermark: number; values: string[]; offsets: number[] }> {
  const partition = only_partition(await client.call(FETCH, V.fetch, fetch_body(topic, offset)), 'responses', 'partitions');
  const values: string[] = [];
  const offsets: number[] = [];
  const records = partition.records as Buffer | null;
  for (let at = 0; records !== null && at + 12 <= records.length; ) {
    const size = records.readInt32BE(at + 8) + 12;
    for (const record of decode_record_batch(records.subarray(at, at + size))) {
      if (record.offset < offset) continue;
      values.push(record.value!.toString());
      offsets.push(record.offset);
    }
    at += size;
  }
  return { error_code: partition.error_code as number, high_watermark: partition.high_watermark as number, values, offsets };
}

async function end_offset(client: RawClient, topic: string): Promise<number> {
  const body = { replica_id: -1, isolation_level: 0, topics: [{ name: topic, partitions: [{ partition_index: 0, current_leader_epoch: -1, timestamp: -1 }] }] };
  const partition = only_partition(await client.call(LIST_OFFSETS, V.list_offsets, body), 'topics', 'partitions');
  assert.equal(partition.error_code, 0);
  return partition.offset as number;
}

async function create_topic(client: RawClient, name: string, configs: Record<string, string> = {}): Promise<void> {
  const body = {
    topics: [{ name, num_partitions: 1, replication_factor: 1, assignments: [], configs: Object.entries(configs).map(([config, value]) => ({ name: config, value })) }],
    timeout_ms: 5_000,
    validate_only: false,
  };
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
  const add = (level: LogLine['level']) => (fields: object, message: string) => lines.push({ level, fields: fields as Record<string, unknown>, message });
  return { info: add('info'), warn: add('warn'), error: add('error') };
}

function temp_dir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `sluice-${prefix}-`));
}

const ACKED_TOPIC = 'acked';
const ACKED_VALUES = ['acked-0', 'acked-1', 'acked-2', 'acked-3', 'acked-4'];

describe('Kafka front end on bad input', () => {
  const log: LogLine[] = [];
  const data_dirs: string[] = [];
  let running: RunningBroker;
  let canary: RawClient;
  /** Connections to close at the end (each case uses its own). */
  const clients: RawClient[] = [];

  async function connect(target: RunningBroker = running): Promise<RawClient> {
    const client = await RawClient.connect(target.kafka_address);
    clients.push(client);
    return client;
  }

  /** The reasons the broker logged for closing connections since `from` (an index into the log). */
  function close_reasons(from: number): string[] {
    return log.slice(from).filter((line) => line.message === 'closing Kafka connection').map((line) => String(line.fields.reason));
  }

  /**
   * The broker still serves: the canary connection (opened before any bad input) gets ApiVersions
   * and Metadata answers, a new connection is accepted and answered, and the records acknowledged
   * at the start are all still readable.
   */
  async function assert_broker_healthy(): Promise<void> {
    assert.equal(canary.closed, false, 'the canary connection was closed');
    const versions = await canary.call(API_VERSIONS, V.api_versions, { client_software_name: 'canary', client_software_version: '1' });
    assert.equal(versions.error_code, 0);
    assert.ok((versions.api_keys as Row[]).some((k) => k.api_key === PRODUCE.api_key));
    const metadata = await canary.call(METADATA, V.metadata, metadata_body([ACKED_TOPIC]));
    const [topic] = metadata.topics as Row[];
    assert.equal(topic!.error_code, 0);
    assert.equal((topic!.partitions as Row[]).length, 1);
    const fresh = await connect();
    const fresh_versions = await fresh.call(API_VERSIONS, 0, {});
    assert.equal(fresh_versions.error_code, 0);
    fresh.destroy();
    const acked = await fetch_values(canary, ACKED_TOPIC);
    assert.equal(acked.error_code, 0);
    assert.deepEqual(acked.values, ACKED_VALUES, 'records acknowledged before the bad input are readable');
    assert.equal(acked.high_watermark, ACKED_VALUES.length);
  }

  before(async () => {
    const data_dir = temp_dir('bad-input');
    data_dirs.push(data_dir);
    running = await start_broker({
      data_dir,
      kafka: { host: '127.0.0.1', port: 0 },
      auto_create_topics: true,
      limits: { request_bytes_max: REQUEST_BYTES_MAX },
      logger: capturing_logger(log),
    });
    canary = await connect();
    await create_topic(canary, ACKED_TOPIC);
    const acked = await produce(canary, ACKED_TOPIC, records_of(ACKED_VALUES));
    assert.equal(acked.error_code, 0);
    assert.equal(acked.base_offset, 0);
    await assert_broker_healthy();
  });

  after(async () => {
    for (const client of clients) client.destroy();
    await running?.close();
    for (const dir of data_dirs) fs.rmSync(dir, { recursive: true, force: true });
    // No request ever made a handler throw (that would close a connection with an internal error).
    const internal = log.filter((line) => line.level === 'error');
    assert.deepEqual(internal, [], 'the broker logged errors');
  });

  // ---------------------------------------------------------------- 1. malformed frames

  describe('1. malformed size prefixes close the connection', () => {
    const sizes: Array<[string, number]> = [
      ['0', 0],
      ['-1', -1],
      ['2^31-1', 0x7fff_ffff],
      ['request_bytes_max + 1', REQUEST_BYTES_MAX + 1],
      ['-2^31', -0x8000_0000],
      ['9 (shorter than any header)', 9],
    ];
    for (const [name, size] of sizes) {
      test(`size ${name}`, async () => {
        const from = log.length;
        const client = await connect();
        // The prefix followed by a few bytes, as a client that believes its size would send.
        await client.write(Buffer.concat([size_prefix(size), Buffer.alloc(64, 0x41)]));
        await client.expect_closed_without_response(`size ${name}`);
        assert.ok(close_reasons(from).some((reason) => reason.startsWith(`request size ${size} `)), `logged reason: ${close_reasons(from).join('; ')}`);
        await assert_broker_healthy();
      });
    }

    test('a size prefix above the limit arriving byte by byte', async () => {
      const client = await connect();
      await client.write_bytewise(size_prefix(REQUEST_BYTES_MAX + 1));
      await client.expect_closed_without_response('split oversized prefix');
      await assert_broker_healthy();
    });

    test('a frame of exactly request_bytes_max is accepted as a frame (then refused as garbage)', async () => {
      // The limit is inclusive: the broker reads the whole frame, finds no valid header, closes.
      const from = log.length;
      const client = await connect();
      const body = Buffer.alloc(REQUEST_BYTES_MAX, 0xff);
      await client.write(Buffer.concat([size_prefix(REQUEST_BYTES_MAX), body]));
      await client.expect_closed_without_response('garbage frame at the limit');
      assert.ok(close_reasons(from).some((reason) => !reason.startsWith('request size')), `logged reason: ${close_reasons(from).join('; ')}`);
      await assert_broker_healthy();
    });
  });

  // ---------------------------------------------------------------- 2. truncated frame bodies

  describe('2. truncated frame bodies close the connection', () => {
    test('garbage header (all 0xff)', async () => {
      const client = await connect();
      await client.write(frame(Buffer.alloc(20, 0xff)));
      await client.expect_closed_without_response('garbage header');
      await assert_broker_healthy();
    });

    test('client id length beyond the frame', async () => {
      const client = await connect();
      const body = Buffer.alloc(12);
      body.writeInt16BE(API_VERSIONS.api_key, 0);
      body.writeInt16BE(0, 2);
      body.writeInt32BE(7, 4);
      body.writeInt16BE(100, 8); // client id of 100 bytes, 2 present
      await client.write(frame(body));
      await client.expect_closed_without_response('client id past the frame');
      await assert_broker_healthy();
    });

    test('flexible header whose tag section runs past the frame', async () => {
      const client = await connect();
      const header = header_bytes(METADATA.api_key, V.metadata, 7, false);
      // one tag, number 0, claiming 50 bytes, 1 present
      await client.write(frame(Buffer.concat([header, Buffer.from([1, 0, 50, 0])])));
      await client.expect_closed_without_response('header tags past the frame');
      await assert_broker_healthy();
    });

    test('Metadata v1 body cut inside the topics array length', async () => {
      const client = await connect();
      await client.write(frame(Buffer.concat([header_bytes(METADATA.api_key, 1, 7), Buffer.from([0, 0])])));
      await client.expect_closed_without_response('cut body');
      await assert_broker_healthy();
    });

    test('Metadata v1 with a hostile array length', async () => {
      const client = await connect();
      await client.write(frame(Buffer.concat([header_bytes(METADATA.api_key, 1, 7), Buffer.from([0x7f, 0xff, 0xff, 0xff])])));
      await client.expect_closed_without_response('hostile array length');
      await assert_broker_healthy();
    });

    test('Produce and JoinGroup requests cut at every length inside a correctly sized frame', async () => {
      const requests: Array<[string, Buffer]> = [
        ['Produce', encode_request(PRODUCE, V.produce, 7, produce_body('truncated', records_of(['x'])))],
        ['Produce v3', encode_request(PRODUCE, 3, 7, produce_body('truncated', records_of(['x'])))],
        ['JoinGroup', encode_request(JOIN_GROUP, V.join_group, 7, { group_id: 'g', session_timeout_ms: 10_000, rebalance_timeout_ms: 5_000, member_id: '', group_instance_id: null, protocol_type: 'consumer', protocols: [{ name: 'range', metadata: Buffer.from('m') }] })],
      ];
      for (const [name, request] of requests) {
        const body = request.subarray(4);
        // Every cut keeps at least 1 byte and drops at least 1 byte of the body.
        const clients_now: RawClient[] = [];
        for (let keep = 1; keep < body.length; keep++) {
          const client = await connect();
          clients_now.push(client);
          await client.write(frame(body.subarray(0, keep)));
        }
        await Promise.all(clients_now.map((client, i) => client.expect_closed_without_response(`${name} cut to ${i + 1} bytes`)));
      }
      const topics = await canary.call(METADATA, V.metadata, metadata_body(null));
      assert.ok(!(topics.topics as Row[]).some((t) => t.name === 'truncated'), 'no truncated request was acted upon');
      await assert_broker_healthy();
    });

    test('a frame that never completes is dropped when the client closes its side', async () => {
      const client = await connect();
      await client.write(Buffer.concat([size_prefix(100), Buffer.alloc(10, 1)]));
      client.end();
      await client.expect_closed_without_response('half-sent frame');
      await assert_broker_healthy();
    });
  });

  // ---------------------------------------------------------------- 3. unknown APIs and versions

  describe('3. unknown APIs and versions', () => {
    test('unknown API key 999 closes the connection', async () => {
      const from = log.length;
      const client = await connect();
      await client.write(frame(Buffer.concat([header_bytes(999, 0, 7), Buffer.alloc(8)])));
      await client.expect_closed_without_response('API 999');
      assert.ok(close_reasons(from).some((reason) => reason.includes('999')));
      await assert_broker_healthy();
    });

    test('Metadata v99 closes the connection', async () => {
      const client = await connect();
      await client.write(frame(Buffer.concat([header_bytes(METADATA.api_key, 99, 7), Buffer.from([0xff, 0xff, 0xff, 0xff, 1])])));
      await client.expect_closed_without_response('Metadata v99');
      await assert_broker_healthy();
    });

    test('Produce v2 (below the supported range) and a negative version close the connection', async () => {
      for (const version of [2, -1]) {
        const client = await connect();
        await client.write(frame(Buffer.concat([header_bytes(PRODUCE.api_key, version, 7), Buffer.alloc(16)])));
        await client.expect_closed_without_response(`Produce v${version}`);
      }
      await assert_broker_healthy();
    });

    test('ApiVersions v99 gets a v0-layout answer with UNSUPPORTED_VERSION and the ApiVersions range', async () => {
      const client = await connect();
      const correlation_id = 4242;
      // A newer client would send a v2 header and a flexible body; the broker must not parse the body.
      await client.write(frame(Buffer.concat([header_bytes(API_VERSIONS.api_key, 99, correlation_id, true), Buffer.from([5, 0x61, 0x62, 0x63, 0x64, 2, 0x31, 0])])));
      const response = decode_response(API_VERSIONS, 0, await client.next_frame(), correlation_id);
      assert.equal(response.error_code, ErrorCode.UNSUPPORTED_VERSION);
      const keys = response.api_keys as Row[];
      const own = keys.find((k) => k.api_key === API_VERSIONS.api_key);
      assert.ok(own, 'the ApiVersions range is in the answer');
      assert.equal(own.min_version, 0);
      assert.equal(own.max_version, V.api_versions);
      // The connection stays usable: the client retries with a supported version.
      const retry = await client.call(API_VERSIONS, V.api_versions, { client_software_name: 'retry', client_software_version: '1' });
      assert.equal(retry.error_code, 0);
      assert.equal(client.closed, false);
      await assert_broker_healthy();
    });
  });

  // ---------------------------------------------------------------- 4. refused produce requests

  describe('4. refused produce requests append nothing', () => {
    const TOPIC = 'refused';
    const SMALL = 'small-max';
    const SMALL_MAX_BYTES = 200;

    before(async () => {
      await create_topic(canary, TOPIC);
      await create_topic(canary, SMALL, { 'max.message.bytes': String(SMALL_MAX_BYTES) });
      assert.equal((await produce(canary, TOPIC, records_of(['kept-0', 'kept-1']))).error_code, 0);
    });

    async function assert_unchanged(topic: string, end: number, values: string[]): Promise<void> {
      assert.equal(await end_offset(canary, topic), end, `${topic}: end offset unchanged`);
      const fetched = await fetch_values(canary, topic);
      assert.equal(fetched.high_watermark, end);
      assert.deepEqual(fetched.values, values);
    }

    test('a flipped byte inside a batch is CORRUPT_MESSAGE', async () => {
      const client = await connect();
      const batch = records_of(['corrupt-me-0', 'corrupt-me-1']);
      batch[batch.length - 3]! ^= 0x55; // inside the last record's value, covered by the CRC
      const row = await produce(client, TOPIC, batch);
      assert.equal(row.error_code, ErrorCode.CORRUPT_MESSAGE);
      assert.equal(row.base_offset, -1);
      await assert_unchanged(TOPIC, 2, ['kept-0', 'kept-1']);
      await assert_broker_healthy();
    });

    test('a corrupt CRC field itself is CORRUPT_MESSAGE', async () => {
      const client = await connect();
      const batch = records_of(['crc']);
      batch[17]! ^= 0x01; // the stored CRC32C
      assert.equal((await produce(client, TOPIC, batch)).error_code, ErrorCode.CORRUPT_MESSAGE);
      await assert_unchanged(TOPIC, 2, ['kept-0', 'kept-1']);
    });

    test('a corrupt idempotent batch is CORRUPT_MESSAGE, not a duplicate or a sequence error', async () => {
      const client = await connect();
      const init = await client.call(INIT_PRODUCER_ID, 4, { transactional_id: null, transaction_timeout_ms: 60_000 });
      assert.equal(init.error_code, 0);
      const idempotence = { producer_id: init.producer_id as number, producer_epoch: init.producer_epoch as number };
      const TOPIC_IDEMPOTENT = 'refused-idempotent';
      await create_topic(canary, TOPIC_IDEMPOTENT);
      const first = await produce(client, TOPIC_IDEMPOTENT, records_of(['seq-0'], { ...idempotence, base_sequence: 0 }));
      assert.equal(first.error_code, 0);
      // A corrupted retry of the acknowledged batch (same producer, epoch and sequence).
      const retry = records_of(['seq-0'], { ...idempotence, base_sequence: 0 });
      retry[retry.length - 1]! ^= 0x55;
      assert.equal((await produce(client, TOPIC_IDEMPOTENT, retry)).error_code, ErrorCode.CORRUPT_MESSAGE, 'corrupted retry');
      // A corrupted batch with a sequence gap.
      const gap = records_of(['seq-5'], { ...idempotence, base_sequence: 5 });
      gap[gap.length - 1]! ^= 0x55;
      assert.equal((await produce(client, TOPIC_IDEMPOTENT, gap)).error_code, ErrorCode.CORRUPT_MESSAGE, 'corrupted batch with a gap');
      // A corrupted batch claiming an older epoch.
      const old = records_of(['seq-1'], { ...idempotence, producer_epoch: idempotence.producer_epoch - 1, base_sequence: 1 });
      old[old.length - 1]! ^= 0x55;
      assert.equal((await produce(client, TOPIC_IDEMPOTENT, old)).error_code, ErrorCode.CORRUPT_MESSAGE, 'corrupted batch with an old epoch');
      await assert_unchanged(TOPIC_IDEMPOTENT, 1, ['seq-0']);
      // The producer carries on with the next sequence.
      assert.equal((await produce(client, TOPIC_IDEMPOTENT, records_of(['seq-1'], { ...idempotence, base_sequence: 1 }))).error_code, 0);
      await assert_unchanged(TOPIC_IDEMPOTENT, 2, ['seq-0', 'seq-1']);
      await assert_broker_healthy();
    });

    test('a batch larger than max.message.bytes is MESSAGE_TOO_LARGE', async () => {
      const client = await connect();
      const big = records_of(['x'.repeat(SMALL_MAX_BYTES * 2)]);
      assert.ok(big.length > SMALL_MAX_BYTES);
      const row = await produce(client, SMALL, big);
      assert.equal(row.error_code, ErrorCode.MESSAGE_TOO_LARGE);
      await assert_unchanged(SMALL, 0, []);
      // A batch under the limit on the same topic is accepted.
      const small = records_of(['fits']);
      assert.ok(small.length <= SMALL_MAX_BYTES);
      assert.equal((await produce(client, SMALL, small)).error_code, 0);
      await assert_unchanged(SMALL, 1, ['fits']);
      await assert_broker_healthy();
    });

    test('two batches in one partition are INVALID_RECORD', async () => {
      const client = await connect();
      const row = await produce(client, TOPIC, Buffer.concat([records_of(['two-0']), records_of(['two-1'])]));
      assert.equal(row.error_code, ErrorCode.INVALID_RECORD);
      await assert_unchanged(TOPIC, 2, ['kept-0', 'kept-1']);
      await assert_broker_healthy();
    });

    test('acks=5 is INVALID_REQUIRED_ACKS', async () => {
      const client = await connect();
      const row = await produce(client, TOPIC, records_of(['acks-5']), { acks: 5 });
      assert.equal(row.error_code, ErrorCode.INVALID_REQUIRED_ACKS);
      await assert_unchanged(TOPIC, 2, ['kept-0', 'kept-1']);
      await assert_broker_healthy();
    });

    test('null records, a few garbage bytes, a wrong magic and a cut batch are refused', async () => {
      const client = await connect();
      assert.equal((await produce(client, TOPIC, null)).error_code, ErrorCode.INVALID_RECORD);
      const garbage = (await produce(client, TOPIC, Buffer.from('not a batch'))).error_code;
      assert.ok(garbage === ErrorCode.INVALID_RECORD || garbage === ErrorCode.CORRUPT_MESSAGE, `garbage: ${garbage}`);
      const magic = records_of(['magic']);
      magic[16] = 1;
      const magic_code = (await produce(client, TOPIC, magic)).error_code;
      assert.ok(magic_code === ErrorCode.INVALID_RECORD || magic_code === ErrorCode.CORRUPT_MESSAGE, `magic: ${magic_code}`);
      const whole = records_of(['cut-0', 'cut-1']);
      const cut_code = (await produce(client, TOPIC, whole.subarray(0, whole.length - 4))).error_code;
      assert.ok(cut_code === ErrorCode.INVALID_RECORD || cut_code === ErrorCode.CORRUPT_MESSAGE, `cut: ${cut_code}`);
      await assert_unchanged(TOPIC, 2, ['kept-0', 'kept-1']);
      await assert_broker_healthy();
    });

    test('an unknown partition is UNKNOWN_TOPIC_OR_PARTITION', async () => {
      const client = await connect();
      for (const partition of [1, -1]) {
        const row = await produce(client, TOPIC, records_of(['elsewhere']), { partition });
        assert.equal(row.error_code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `partition ${partition}`);
      }
      await assert_unchanged(TOPIC, 2, ['kept-0', 'kept-1']);
    });

    test('a refused batch does not disturb a good one in the same request', async () => {
      const client = await connect();
      const bad = records_of(['bad']);
      bad[bad.length - 1]! ^= 0xff;
      const body = {
        transactional_id: null,
        acks: -1,
        timeout_ms: 5_000,
        topic_data: [
          { name: TOPIC, partition_data: [{ index: 0, records: bad }] },
          { name: SMALL, partition_data: [{ index: 0, records: records_of(['good']) }] },
        ],
      };
      const response = await client.call(PRODUCE, V.produce, body);
      const [first, second] = response.responses as Row[];
      assert.equal((first!.partition_responses as Row[])[0]!.error_code, ErrorCode.CORRUPT_MESSAGE);
      assert.equal((second!.partition_responses as Row[])[0]!.error_code, 0);
      await assert_unchanged(TOPIC, 2, ['kept-0', 'kept-1']);
      await assert_unchanged(SMALL, 2, ['fits', 'good']);
      await assert_broker_healthy();
    });
  });

  // ---------------------------------------------------------------- 5. no auto-creation

  test('5. produce and metadata for a missing topic with auto-creation off', async () => {
    const data_dir = temp_dir('bad-input-no-auto');
    data_dirs.push(data_dir);
    const strict = await start_broker({ data_dir, kafka: { host: '127.0.0.1', port: 0 }, auto_create_topics: false, logger: capturing_logger(log) });
    try {
      const client = await connect(strict);
      const strict_canary = await connect(strict);
      const row = await produce(client, 'missing', records_of(['lost']));
      assert.equal(row.error_code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      const metadata = await client.call(METADATA, V.metadata, metadata_body(['missing'], true));
      const [topic] = metadata.topics as Row[];
      assert.equal(topic!.name, 'missing');
      assert.equal(topic!.error_code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      // Metadata v1 (where auto-creation is implied) does not create it either.
      const old = await client.call(METADATA, 1, metadata_body(['missing']));
      assert.equal((old.topics as Row[])[0]!.error_code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      assert.equal(strict.broker.topics.get('missing'), undefined);
      const all = await strict_canary.call(METADATA, V.metadata, metadata_body(null));
      assert.ok(!(all.topics as Row[]).some((t) => t.name === 'missing'), 'the topic was not created');
      const fetched = only_partition(await strict_canary.call(FETCH, V.fetch, fetch_body('missing', 0)), 'responses', 'partitions');
      assert.equal(fetched.error_code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      // An explicitly created topic works on the same broker.
      await create_topic(strict_canary, 'present');
      assert.equal((await produce(client, 'present', records_of(['here']))).error_code, 0);
      assert.deepEqual((await fetch_values(strict_canary, 'present')).values, ['here']);
    } finally {
      await strict.close();
    }
    await assert_broker_healthy();
  });

  // ---------------------------------------------------------------- 6. group errors

  test('6. group membership errors', async () => {
    const GROUP = 'bad-input-group';
    const TOPIC = 'group-topic';
    await create_topic(canary, TOPIC);
    const client = await connect();
    const join_body = (member_id: string, group_id = GROUP): Value => ({
      group_id,
      session_timeout_ms: 10_000,
      rebalance_timeout_ms: 5_000,
      member_id,
      group_instance_id: null,
      protocol_type: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.from('subscription') }],
    });

    const first = await client.call(JOIN_GROUP, V.join_group, join_body(''));
    assert.equal(first.error_code, ErrorCode.MEMBER_ID_REQUIRED);
    const member_id = first.member_id as string;
    assert.ok(member_id.length > 0, 'MEMBER_ID_REQUIRED carries a member id');

    const joined = await client.call(JOIN_GROUP, V.join_group, join_body(member_id));
    assert.equal(joined.error_code, 0);
    assert.equal(joined.member_id, member_id);
    assert.equal(joined.leader, member_id);
    const generation = joined.generation_id as number;
    assert.ok(generation >= 1);
    assert.equal((joined.members as Row[]).length, 1);

    const synced = await client.call(SYNC_GROUP, V.sync_group, { group_id: GROUP, generation_id: generation, member_id, group_instance_id: null, assignments: [{ member_id, assignment: Buffer.from('assignment') }] });
    assert.equal(synced.error_code, 0);
    assert.deepEqual(synced.assignment, Buffer.from('assignment'));

    const heartbeat = (generation_id: number, member: string) => client.call(HEARTBEAT, V.heartbeat, { group_id: GROUP, generation_id, member_id: member, group_instance_id: null });
    const sync = (generation_id: number, member: string) => client.call(SYNC_GROUP, V.sync_group, { group_id: GROUP, generation_id, member_id: member, group_instance_id: null, assignments: [] });
    const commit = async (generation_id: number, member: string): Promise<number> => {
      const response = await client.call(OFFSET_COMMIT, V.offset_commit, {
        group_id: GROUP,
        generation_id_or_member_epoch: generation_id,
        member_id: member,
        group_instance_id: null,
        topics: [{ name: TOPIC, partitions: [{ partition_index: 0, committed_offset: 7, committed_leader_epoch: -1, committed_metadata: null }] }],
      });
      return only_partition(response, 'topics', 'partitions').error_code as number;
    };

    assert.equal((await heartbeat(generation, member_id)).error_code, 0);

    // A wrong generation.
    assert.equal((await heartbeat(generation + 1, member_id)).error_code, ErrorCode.ILLEGAL_GENERATION);
    assert.equal((await sync(generation + 1, member_id)).error_code, ErrorCode.ILLEGAL_GENERATION);
    assert.equal(await commit(generation + 1, member_id), ErrorCode.ILLEGAL_GENERATION);
    assert.equal((await heartbeat(generation - 1, member_id)).error_code, ErrorCode.ILLEGAL_GENERATION);

    // An unknown member id.
    assert.equal((await heartbeat(generation, 'nobody')).error_code, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal((await sync(generation, 'nobody')).error_code, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal(await commit(generation, 'nobody'), ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal((await client.call(JOIN_GROUP, V.join_group, join_body('nobody'))).error_code, ErrorCode.UNKNOWN_MEMBER_ID);

    // An empty group id.
    const empty = await client.call(JOIN_GROUP, V.join_group, join_body('', ''));
    assert.equal(empty.error_code, ErrorCode.INVALID_GROUP_ID);

    // None of that disturbed the member: it is still in the same generation and can commit.
    assert.equal((await heartbeat(generation, member_id)).error_code, 0);
    assert.equal(await commit(generation, member_id), 0);
    const fetched = await client.call(OFFSET_FETCH, V.offset_fetch, { group_id: GROUP, topics: [{ name: TOPIC, partition_indexes: [0] }], require_stable: false });
    assert.equal(only_partition(fetched, 'topics', 'partitions').committed_offset, 7);
    await assert_broker_healthy();
  });

  // ---------------------------------------------------------------- 7. pipelining

  test('7. 50 pipelined requests in one write are answered in request order', async () => {
    const TOPIC = 'pipelined';
    await create_topic(canary, TOPIC);
    const client = await connect();
    type Kind = 'api_versions' | 'metadata' | 'produce' | 'fetch';
    const sent: Array<{ kind: Kind; correlation_id: number; value?: string }> = [];
    const frames: Buffer[] = [];
    for (let i = 0; i < 50; i++) {
      const correlation_id = 1000 + i;
      // One long poll early on: everything behind it finishes first but must be answered after it.
      const kind: Kind = i === 3 ? 'fetch' : (['api_versions', 'metadata', 'produce'] as const)[i % 3]!;
      if (kind === 'api_versions') frames.push(encode_request(API_VERSIONS, V.api_versions, correlation_id, { client_software_name: 'pipe', client_software_version: '1' }));
      else if (kind === 'metadata') frames.push(encode_request(METADATA, V.metadata, correlation_id, metadata_body([TOPIC])));
      else if (kind === 'fetch') frames.push(encode_request(FETCH, V.fetch, correlation_id, { ...fetch_body('pipeline-idle', 0), max_wait_ms: 300, min_bytes: 1 }));
      if (kind === 'produce') {
        const value = `pipe-${i}`;
        frames.push(encode_request(PRODUCE, V.produce, correlation_id, produce_body(TOPIC, records_of([value]))));
        sent.push({ kind, correlation_id, value });
      } else sent.push({ kind, correlation_id });
    }
    await create_topic(canary, 'pipeline-idle');
    const started = Date.now();
    await client.write(Buffer.concat(frames));
    const produced: number[] = [];
    for (const request of sent) {
      const response_frame = await client.next_frame();
      assert.equal(response_frame.readInt32BE(0), request.correlation_id, 'responses come back in request order');
      if (request.kind === 'api_versions') {
        assert.equal(decode_response(API_VERSIONS, V.api_versions, response_frame, request.correlation_id).error_code, 0);
      } else if (request.kind === 'metadata') {
        const [topic] = decode_response(METADATA, V.metadata, response_frame, request.correlation_id).topics as Row[];
        assert.equal(topic!.error_code, 0);
      } else if (request.kind === 'fetch') {
        decode_response(FETCH, V.fetch, response_frame, request.correlation_id);
        assert.ok(Date.now() - started >= 250, 'the long poll waited');
      } else {
        const row = only_partition(decode_response(PRODUCE, V.produce, response_frame, request.correlation_id), 'responses', 'partition_responses');
        assert.equal(row.error_code, 0);
        produced.push(row.base_offset as number);
      }
    }
    const values = sent.filter((r) => r.kind === 'produce').map((r) => r.value!);
    assert.deepEqual(produced, values.map((_, i) => i), 'offsets follow request order');
    assert.deepEqual((await fetch_values(canary, TOPIC)).values, values);
    assert.equal(client.closed, false);
    await assert_broker_healthy();
  });

  test('7b. pipelined requests beyond inflight_requests_max wait their turn and keep their order', async () => {
    const LIMIT = 4;
    const POLL_MS = 200;
    const data_dir = temp_dir('bad-input-inflight');
    data_dirs.push(data_dir);
    const limited = await start_broker({ data_dir, kafka: { host: '127.0.0.1', port: 0 }, limits: { inflight_requests_max: LIMIT }, logger: capturing_logger(log) });
    try {
      const admin = await connect(limited);
      await create_topic(admin, 'idle');
      await create_topic(admin, 'limited');
      const client = await connect(limited);
      // 12 long polls that each take POLL_MS, then 38 quick requests, all in one write.
      const kinds: Array<'fetch' | 'api_versions' | 'metadata' | 'produce'> = [];
      const frames: Buffer[] = [];
      for (let i = 0; i < 50; i++) {
        const kind = i < 12 ? 'fetch' : (['api_versions', 'metadata', 'produce'] as const)[i % 3]!;
        kinds.push(kind);
        const correlation_id = 2000 + i;
        if (kind === 'fetch') frames.push(encode_request(FETCH, V.fetch, correlation_id, { ...fetch_body('idle', 0), max_wait_ms: POLL_MS, min_bytes: 1 }));
        else if (kind === 'api_versions') frames.push(encode_request(API_VERSIONS, 0, correlation_id, {}));
        else if (kind === 'metadata') frames.push(encode_request(METADATA, V.metadata, correlation_id, metadata_body(['limited'])));
        else frames.push(encode_request(PRODUCE, V.produce, correlation_id, produce_body('limited', records_of([`limited-${i}`]))));
      }
      const started = Date.now();
      await client.write(Buffer.concat(frames));
      const produced: number[] = [];
      for (let i = 0; i < 50; i++) {
        const response_frame = await client.next_frame();
        assert.equal(response_frame.readInt32BE(0), 2000 + i, 'responses come back in request order');
        if (kinds[i] === 'produce') {
          produced.push(only_partition(decode_response(PRODUCE, V.produce, response_frame, 2000 + i), 'responses', 'partition_responses').base_offset as number);
        }
        if (i === 11) {
          // At most LIMIT long polls run at once: 12 of them take at least 3 rounds.
          const elapsed = Date.now() - started;
          assert.ok(elapsed >= 3 * POLL_MS - 50, `12 long polls with at most ${LIMIT} in flight took only ${elapsed} ms`);
        }
      }
      assert.deepEqual(produced, produced.map((_, i) => i));
      assert.equal((await fetch_values(admin, 'limited')).values.length, produced.length);
    } finally {
      await limited.close();
    }
    await assert_broker_healthy();
  });

  // ---------------------------------------------------------------- 8. one byte at a time

  test('8. requests split into 1-byte writes are handled', async () => {
    const TOPIC = 'bytewise';
    await create_topic(canary, TOPIC);
    const client = await connect();
    const produce_id = client.correlation();
    await client.write_bytewise(encode_request(PRODUCE, V.produce, produce_id, produce_body(TOPIC, records_of(['byte-0', 'byte-1']))));
    const row = only_partition(decode_response(PRODUCE, V.produce, await client.next_frame(), produce_id), 'responses', 'partition_responses');
    assert.equal(row.error_code, 0);
    assert.equal(row.base_offset, 0);

    const metadata_id = client.correlation();
    await client.write_bytewise(encode_request(METADATA, V.metadata, metadata_id, metadata_body([TOPIC])));
    const [topic] = decode_response(METADATA, V.metadata, await client.next_frame(), metadata_id).topics as Row[];
    assert.equal(topic!.error_code, 0);

    // Two requests whose boundary falls inside a write: the first and half of the second, then the rest.
    const a_id = client.correlation();
    const b_id = client.correlation();
    const both = Buffer.concat([encode_request(API_VERSIONS, 0, a_id, {}), encode_request(PRODUCE, V.produce, b_id, produce_body(TOPIC, records_of(['byte-2'])))]);
    const cut = encode_request(API_VERSIONS, 0, a_id, {}).length + 9;
    await client.write(both.subarray(0, cut));
    await new Promise((resolve) => setTimeout(resolve, 20));
    await client.write(both.subarray(cut));
    assert.equal(decode_response(API_VERSIONS, 0, await client.next_frame(), a_id).error_code, 0);
    assert.equal(only_partition(decode_response(PRODUCE, V.produce, await client.next_frame(), b_id), 'responses', 'partition_responses').error_code, 0);

    assert.deepEqual((await fetch_values(canary, TOPIC)).values, ['byte-0', 'byte-1', 'byte-2']);
    await assert_broker_healthy();
  });
});
