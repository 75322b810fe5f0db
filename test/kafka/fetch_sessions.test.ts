// Fetch sessions (KIP-227) and Fetch by topic id (v13+) against a broker process. Raw requests: a
// session opens with a full fetch, an idle incremental fetch names nothing and gets nothing, one
// with news gets only the partition with news, a wrong epoch or an unknown session is refused, a
// forgotten partition is no longer fetched, epoch -1 ends the session; topics by id, an unknown id
// named. The SDK: a consumer of 1,000 partitions reads the same records with and without sessions,
// and while idle its Fetch requests (counted on the wire, by a proxy that the broker advertises)
// are at least 90 % smaller with them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { free_port } from '../support/etcd.ts';
import { request_frames, start_tcp_proxy, type TcpProxy } from '../support/tcp_proxy.ts';
import { Sluice } from '../../src/sdk/index.ts';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { FETCH } from '../../src/protocol/kafka/messages/01_fetch.ts';
import { ErrorCode } from '../../src/protocol/kafka/error_codes.ts';
import { encode_record_batch } from '../../src/protocol/record_batch.ts';
import { PRODUCE } from '../../src/protocol/kafka/messages/00_produce.ts';
import { METADATA } from '../../src/protocol/kafka/messages/03_metadata.ts';

const WIDE_PARTITIONS = 1_000;

/** Bytes of Fetch requests (API key 1) the proxy has passed from clients to the broker. */
let fetch_request_bytes = 0;
let proxy: TcpProxy;
let proxy_port: number;
let broker: BrokerProcess;

before(async () => {
  // The broker advertises the proxy (its ready line, and so `bootstrap`, too): it listens on its own port.
  const broker_port = await free_port();
  proxy = await start_tcp_proxy(
    broker_port,
    request_frames((api_key, bytes) => {
      if (api_key === FETCH.api_key) fetch_request_bytes += bytes;
    }),
  );
  proxy_port = proxy.port;
  broker = await start_broker_process({ port: broker_port, args: ['--advertise', `127.0.0.1:${proxy_port}`] });
});

after(async () => {
  await proxy?.close();
  await broker?.stop();
});

async function raw(): Promise<Connection> {
  return Connection.connect('127.0.0.1', proxy_port);
}

async function produce(connection: Connection, topic: string, partition: number, value: string) {
  const records = encode_record_batch([{ key: null, value: Buffer.from(value), timestamp_ms: Date.now() }]);
  await connection.call(PRODUCE, 9, {
    transactional_id: null,
    acks: -1,
    timeout_ms: 10_000,
    topic_data: [{ name: topic, partition_data: [{ index: partition, records }] }],
  });
}

function fetch_request(
  session_id: number,
  session_epoch: number,
  partitions: Array<[number, number]>,
  forgotten: number[] = [],
) {
  return {
    replica_id: -1,
    max_wait_ms: 50,
    min_bytes: 0,
    max_bytes: 1 << 20,
    isolation_level: 0,
    session_id,
    session_epoch,
    topics:
      partitions.length === 0
        ? []
        : [
            {
              topic: 'sessions',
              partitions: partitions.map(([partition, fetch_offset]) => ({
                partition,
                current_leader_epoch: -1,
                fetch_offset,
                last_fetched_epoch: -1,
                log_start_offset: -1,
                partition_max_bytes: 1 << 20,
              })),
            },
          ],
    forgotten_topics_data: forgotten.length > 0 ? [{ topic: 'sessions', partitions: forgotten }] : [],
    rack_id: '',
  };
}

const partitions_in = (response: {
  responses: ReadonlyArray<{ partitions: ReadonlyArray<{ partition_index: number }> }>;
}) => response.responses.flatMap((t) => t.partitions.map((p) => p.partition_index)).sort((a, b) => a - b);

test('a fetch session: full, then only what changed; wrong epochs and unknown sessions refused; ended', async () => {
  const admin = new Sluice({ brokers: [`127.0.0.1:${proxy_port}`] }).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'sessions', numPartitions: 3 }] });
  await admin.disconnect();
  const connection = await raw();
  try {
    await produce(connection, 'sessions', 0, 'a');
    const opened = await connection.call(
      FETCH,
      12,
      fetch_request(0, 0, [
        [0, 0],
        [1, 0],
        [2, 0],
      ]),
    );
    assert.equal(opened.error_code, ErrorCode.NONE);
    assert.ok(opened.session_id > 0);
    assert.deepEqual(partitions_in(opened), [0, 1, 2]);
    const id = opened.session_id;
    // Partition 0's offset moved to 1; nothing new anywhere: no partition in the answer.
    const idle = await connection.call(FETCH, 12, fetch_request(id, 1, [[0, 1]]));
    assert.deepEqual([idle.error_code, idle.session_id, partitions_in(idle)], [ErrorCode.NONE, id, []]);
    await produce(connection, 'sessions', 2, 'b');
    const news = await connection.call(FETCH, 12, fetch_request(id, 2, []));
    assert.deepEqual(partitions_in(news), [2]);
    const wrong = await connection.call(FETCH, 12, fetch_request(id, 2, []));
    assert.equal(wrong.error_code, ErrorCode.INVALID_FETCH_SESSION_EPOCH);
    const gone = await connection.call(FETCH, 12, fetch_request(id + 1, 1, []));
    assert.equal(gone.error_code, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    // Partition 2 forgotten: its next record is not fetched; partition 1's is.
    await connection.call(FETCH, 12, fetch_request(id, 3, [[2, 1]], [2]));
    await produce(connection, 'sessions', 2, 'c');
    await produce(connection, 'sessions', 1, 'd');
    const after_forget = await connection.call(FETCH, 12, fetch_request(id, 4, []));
    assert.deepEqual(partitions_in(after_forget), [1]);
    const ended = await connection.call(FETCH, 12, fetch_request(id, -1, [[0, 1]]));
    assert.deepEqual([ended.error_code, ended.session_id], [ErrorCode.NONE, 0]);
    const after_end = await connection.call(FETCH, 12, fetch_request(id, 5, []));
    assert.equal(after_end.error_code, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  } finally {
    connection.close();
  }
});

test('Fetch v13+ names topics by id; an unknown id is UNKNOWN_TOPIC_ID', async () => {
  const connection = await raw();
  try {
    const metadata = await connection.call(METADATA, 12, {
      topics: [{ name: 'sessions', topic_id: 'AAAAAAAAAAAAAAAAAAAAAA' }],
      allow_auto_topic_creation: false,
      include_topic_authorized_operations: false,
    });
    const topic_id = metadata.topics[0]!.topic_id;
    const partition = (p: number) => ({
      partition: p,
      current_leader_epoch: -1,
      fetch_offset: 0,
      last_fetched_epoch: -1,
      log_start_offset: -1,
      partition_max_bytes: 1 << 20,
    });
    const request = {
      ...fetch_request(0, -1, []),
      topics: [
        { topic: '', topic_id, partitions: [partition(0)] },
        { topic: '', topic_id: 'AAAAAAAAAAAAAAAAAAAAAQ', partitions: [partition(0)] },
      ],
    };
    const response = await connection.call(FETCH, 17, request);
    const [known, unknown] = response.responses;
    assert.equal(known!.topic_id, topic_id);
    assert.equal(known!.partitions[0]!.error_code, ErrorCode.NONE);
    assert.ok((known!.partitions[0]!.records as Buffer).length > 0);
    assert.equal(unknown!.partitions[0]!.error_code, ErrorCode.UNKNOWN_TOPIC_ID);
  } finally {
    connection.close();
  }
});

/** Reads every record of `topic` with a consumer outside any group; then its Fetch bytes per second while idle. */
async function read_then_idle(fetch_sessions: boolean, expected: number) {
  const sluice = new Sluice({ brokers: [`127.0.0.1:${proxy_port}`], clientId: `wide-${fetch_sessions}` });
  const consumer = sluice.consumer({ maxWaitTimeInMs: 100, fetchSessions: fetch_sessions });
  const seen = new Set<string>();
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  await consumer.subscribe({ topic: 'wide', fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) seen.add(`${batch.partition}/${m.offset}/${m.value!.toString()}`);
      if (seen.size >= expected) done();
    },
  });
  try {
    await all;
    await new Promise((resolve) => setTimeout(resolve, 500));
    const from = fetch_request_bytes;
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    return { seen, idle_bytes_per_s: (fetch_request_bytes - from) / 3 };
  } finally {
    await consumer.disconnect();
  }
}

test(
  'a consumer of 1,000 partitions: the same records with sessions, and ≥ 90 % fewer Fetch bytes while idle',
  { timeout: 120_000 },
  async () => {
    const sluice = new Sluice({ brokers: [`127.0.0.1:${proxy_port}`] });
    const admin = sluice.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'wide', numPartitions: WIDE_PARTITIONS }] });
    await admin.disconnect();
    const producer = sluice.producer();
    await producer.connect();
    const messages = Array.from({ length: 3_000 }, (_, i) => ({
      value: `m${i}`,
      partition: (i * 7) % WIDE_PARTITIONS,
    }));
    await producer.send({ topic: 'wide', messages });
    await producer.disconnect();
    const without = await read_then_idle(false, messages.length);
    const with_sessions = await read_then_idle(true, messages.length);
    assert.deepEqual([...with_sessions.seen].sort(), [...without.seen].sort());
    const cut = 1 - with_sessions.idle_bytes_per_s / without.idle_bytes_per_s;
    process.stdout.write(
      `idle Fetch request bytes/s over 1,000 partitions: ${Math.round(without.idle_bytes_per_s)} without sessions, ` +
        `${Math.round(with_sessions.idle_bytes_per_s)} with (${(cut * 100).toFixed(1)} % less)\n`,
    );
    assert.ok(cut >= 0.9, `cut ${cut}`);
  },
);
