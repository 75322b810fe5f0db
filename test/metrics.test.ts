// /metrics against a real broker (in this process) and real clients, read with a Prometheus
// text-format parser: every metric family is there, and traffic, request timings, fsyncs, lag and
// queue figures move with what kafkajs and the SDK do.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { getMetricsFromStream, type PromMetric, type PromMetrics } from 'prom2javascript';
import { start_broker, type RunningBroker } from '../src/compose/start_broker.ts';
import { Sluice } from '../src/sdk/index.ts';
import { until } from './support/until.ts';

const FAMILIES: Record<string, 'counter' | 'gauge' | 'histogram'> = {
  sluice_messages_in_total: 'counter',
  sluice_bytes_in_total: 'counter',
  sluice_messages_out_total: 'counter',
  sluice_bytes_out_total: 'counter',
  sluice_request_duration_seconds: 'histogram',
  sluice_consumer_group_lag: 'gauge',
  sluice_queue_in_flight: 'gauge',
  sluice_queue_redeliveries_total: 'counter',
  sluice_queue_dead_lettered_total: 'counter',
  sluice_queue_expired_total: 'counter',
  sluice_delayed_pending: 'gauge',
  sluice_fsync_duration_seconds: 'histogram',
  sluice_connections: 'gauge',
  sluice_partitions_cut_at_recovery: 'gauge',
  nodejs_eventloop_lag_seconds: 'gauge',
  process_resident_memory_bytes: 'gauge',
};

type Sample = { labels: Record<string, string>; value?: number; count?: number };

let data_dir: string;
let running: RunningBroker;
let base: string;
let kafka: Kafka;
let admin: Admin;
let producer: Producer;

/**
 * Scrapes and parses. The format allows NaN sample values and prom-client writes them for its
 * event-loop statistics when no delay was sampled since the last scrape; the parser does not read
 * NaN, so those lines (and only those: Sluice's own metrics must never be NaN) are left out.
 */
async function parse(url: string): Promise<PromMetrics> {
  const response = await fetch(url);
  assert.equal(response.status, 200);
  assert.match(response.headers.get('content-type') ?? '', /^text\/plain/);
  const lines = (await response.text()).split('\n');
  const not_a_number = lines.filter((line) => !line.startsWith('#') && /\s[Nn]a[Nn]$/.test(line));
  for (const line of not_a_number)
    assert.match(line, /^nodejs_eventloop_lag_\w+ /, `only event-loop statistics may be NaN: ${line}`);
  return getMetricsFromStream(Readable.from([lines.filter((line) => !not_a_number.includes(line)).join('\n')]));
}

const scrape = () => parse(`${base}/metrics`);

function samples(family: PromMetric | undefined): Sample[] {
  return (family?.data ?? []) as Sample[];
}

function sample(families: PromMetrics, name: string, labels: Record<string, string> = {}): Sample | undefined {
  return samples(families[name]).find((m) => Object.entries(labels).every(([k, v]) => m.labels[k] === v));
}

function value(families: PromMetrics, name: string, labels: Record<string, string> = {}): number {
  return sample(families, name, labels)?.value ?? 0;
}

function histogram_count(families: PromMetrics, name: string, labels: Record<string, string> = {}): number {
  return sample(families, name, labels)?.count ?? 0;
}

before(async () => {
  data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-metrics-'));
  running = await start_broker({
    data_dir,
    kafka: { host: '127.0.0.1', port: 0 },
    http: { host: '127.0.0.1', port: 0 },
    share_groups: {
      partition: {
        delivery_count_limit: 2,
        retry_backoff_ms: [20],
        record_lock_duration_ms: 5_000,
        records_in_flight_max: 1_000,
      },
    },
  });
  base = `http://${running.http_address!.host}:${running.http_address!.port}`;
  kafka = new Kafka({
    brokers: [`${running.kafka_address.host}:${running.kafka_address.port}`],
    clientId: 'metrics-test',
    logLevel: logLevel.NOTHING,
    retry: { retries: 10, initialRetryTime: 100 },
  });
  admin = kafka.admin();
  await admin.connect();
  producer = kafka.producer();
  await producer.connect();
});

after(async () => {
  await producer?.disconnect();
  await admin?.disconnect();
  await running?.close();
  if (data_dir) fs.rmSync(data_dir, { recursive: true, force: true });
});

test('every metric family is exposed with its type', async () => {
  const families = await scrape();
  for (const [name, type] of Object.entries(FAMILIES)) {
    assert.ok(families[name], `${name} is exposed`);
    assert.equal(families[name]!.type, type, `${name} is a ${type}`);
  }
  assert.ok(value(families, 'process_resident_memory_bytes') > 0);
  assert.ok(value(families, 'sluice_connections') >= 2, 'kafkajs admin and producer are connected');
});

test('traffic, request timings, fsyncs and lag move with what clients do', async () => {
  await admin.createTopics({ topics: [{ topic: 'measured', numPartitions: 2 }] });
  const before_scrape = await scrape();
  const produce_requests = histogram_count(before_scrape, 'sluice_request_duration_seconds', { api: 'Produce' });
  const fsyncs = histogram_count(before_scrape, 'sluice_fsync_duration_seconds');

  await producer.send({
    topic: 'measured',
    acks: -1,
    messages: Array.from({ length: 10 }, (_, i) => ({ partition: 0, value: `m${i}` })),
  });
  await producer.send({
    topic: 'measured',
    acks: -1,
    messages: Array.from({ length: 4 }, (_, i) => ({ partition: 1, value: `n${i}` })),
  });
  const produced = await scrape();
  assert.equal(
    value(produced, 'sluice_messages_in_total', { topic: 'measured', partition: '0' }),
    10,
    'records counted from batch headers',
  );
  assert.equal(value(produced, 'sluice_messages_in_total', { topic: 'measured', partition: '1' }), 4);
  assert.ok(value(produced, 'sluice_bytes_in_total', { topic: 'measured', partition: '0' }) > 10 * 2);
  assert.ok(histogram_count(produced, 'sluice_request_duration_seconds', { api: 'Produce' }) >= produce_requests + 2);
  assert.ok(histogram_count(produced, 'sluice_request_duration_seconds', { api: 'Metadata' }) >= 1);
  assert.ok(histogram_count(produced, 'sluice_fsync_duration_seconds') > fsyncs, 'acks=-1 waited for fsync rounds');

  const consumer = kafka.consumer({ groupId: 'measurers', maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'measured', fromBeginning: true });
  let consumed = 0;
  await consumer.run({ eachMessage: async () => void consumed++ });
  await until(() => consumed === 14, '14 messages consumed');
  await consumer.disconnect(); // commits what it consumed
  const fetched = await scrape();
  assert.equal(value(fetched, 'sluice_messages_out_total', { topic: 'measured', partition: '0' }), 10);
  assert.equal(value(fetched, 'sluice_messages_out_total', { topic: 'measured', partition: '1' }), 4);
  assert.ok(value(fetched, 'sluice_bytes_out_total', { topic: 'measured', partition: '0' }) > 0);
  assert.ok(histogram_count(fetched, 'sluice_request_duration_seconds', { api: 'Fetch' }) >= 1);
  assert.equal(
    value(fetched, 'sluice_consumer_group_lag', { group: 'measurers', topic: 'measured', partition: '0' }),
    0,
  );
  assert.ok(
    sample(fetched, 'sluice_consumer_group_lag', { group: 'measurers', topic: 'measured', partition: '1' }),
    'every committed partition has a lag',
  );

  await producer.send({
    topic: 'measured',
    messages: Array.from({ length: 6 }, (_, i) => ({ partition: 0, value: `late${i}` })),
  });
  const lagging = await scrape();
  assert.equal(
    value(lagging, 'sluice_consumer_group_lag', { group: 'measurers', topic: 'measured', partition: '0' }),
    6,
    'produced after the last commit',
  );
  assert.equal(value(lagging, 'sluice_messages_in_total', { topic: 'measured', partition: '0' }), 16);

  await admin.deleteTopics({ topics: ['measured'] });
  const deleted = await scrape();
  assert.equal(
    sample(deleted, 'sluice_messages_in_total', { topic: 'measured' }),
    undefined,
    'a deleted topic leaves the metrics',
  );
});

test('queue metrics per share group: redeliveries, dead letters, in flight', async () => {
  await admin.createTopics({ topics: [{ topic: 'chores' }] });
  await producer.send({ topic: 'chores', messages: ['a', 'poison', 'b'].map((v) => ({ value: v })) });
  const sluice = new Sluice({
    brokers: [`${running.kafka_address.host}:${running.kafka_address.port}`],
    clientId: 'metrics-queue',
  });
  const queue = sluice.queueConsumer({ groupId: 'choremen', maxWaitTimeInMs: 100 });
  await queue.subscribe({ topics: ['chores'] });
  await queue.run({
    eachMessage: async ({ message }) => {
      if (message.value!.toString() === 'poison') throw new Error('no');
    },
  });
  const families = await until(async () => {
    const f = await scrape();
    return value(f, 'sluice_queue_dead_lettered_total', { group: 'choremen' }) === 1 ? f : null;
  }, 'the dead letter counted');
  await queue.disconnect();
  assert.equal(value(families, 'sluice_queue_redeliveries_total', { group: 'choremen' }), 1);
  assert.equal(value(families, 'sluice_queue_in_flight', { group: 'choremen' }), 0);
  assert.equal(value(families, 'sluice_queue_expired_total', { group: 'choremen' }), 0);
  assert.ok(
    value(families, 'sluice_messages_out_total', { topic: 'chores', partition: '0' }) >= 4,
    'share fetches count acquired records, redeliveries included',
  );
  assert.ok(histogram_count(families, 'sluice_request_duration_seconds', { api: 'ShareFetch' }) >= 1);
});

test('delayed records pending', async () => {
  await admin.createTopics({ topics: [{ topic: 'postponed' }] });
  const before_pending = value(await scrape(), 'sluice_delayed_pending');
  await producer.send({ topic: 'postponed', messages: [{ value: 'later', headers: { 'sluice-delay-ms': '600000' } }] });
  assert.equal(value(await scrape(), 'sluice_delayed_pending'), before_pending + 1);
});

test('two brokers in one process keep separate metrics', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-metrics-other-'));
  const other = await start_broker({
    data_dir: dir,
    kafka: { host: '127.0.0.1', port: 0 },
    http: { host: '127.0.0.1', port: 0 },
  });
  try {
    const families = await parse(`http://127.0.0.1:${other.http_address!.port}/metrics`);
    assert.ok(families.sluice_messages_in_total, 'the family is there');
    assert.equal(samples(families.sluice_messages_in_total).length, 0, 'nothing produced to this one');
    assert.equal(value(families, 'sluice_connections'), 0);
  } finally {
    await other.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a log whose tail recovery cut at start is counted', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-metrics-cut-'));
  const options = { data_dir: dir, kafka: { host: '127.0.0.1', port: 0 }, http: { host: '127.0.0.1', port: 0 } };
  let broker = await start_broker(options);
  try {
    const client = new Kafka({
      brokers: [`127.0.0.1:${broker.kafka_address.port}`],
      logLevel: logLevel.NOTHING,
      retry: { retries: 10, initialRetryTime: 100 },
    });
    const writer = client.producer();
    await writer.connect();
    await writer.send({ topic: 'cut', messages: [{ value: 'kept' }] });
    await writer.disconnect();
    await broker.close();
    // A torn write's leftovers after the last whole batch.
    fs.appendFileSync(path.join(dir, 'cut-0', '00000000000000000000.log'), Buffer.alloc(30, 7));
    broker = await start_broker(options);
    const families = await parse(`http://127.0.0.1:${broker.http_address!.port}/metrics`);
    assert.equal(value(families, 'sluice_partitions_cut_at_recovery'), 1);
  } finally {
    await broker.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
