// The HTTP admin API against a real broker (in this process) and real clients: kafkajs produces,
// consumes and commits; the SDK's queue consumer drives a share group until a message is
// dead-lettered. Every answer is checked against what the clients did.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel, type Admin, type Producer } from 'kafkajs';
import { start_broker, type RunningBroker } from '../src/compose/start_broker.ts';
import { Sluice } from '../src/sdk/index.ts';
import { BODY_BYTES_MAX } from '../src/server/http/server.ts';
import { LIST_LIMIT_MAX } from '../src/server/http/request_params.ts';
import { until } from './support/until.ts';

/** The longest the event loop may stall while a large listing is served. */
const STALL_MS_MAX = 100;

let data_dir: string;
let running: RunningBroker;
let base: string;
let kafka: Kafka;
let admin: Admin;
let producer: Producer;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function api(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json; headers: Headers }> {
  const init: RequestInit = {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
  };
  if (body !== undefined) init.body = typeof body === 'string' ? body : JSON.stringify(body);
  const response = await fetch(base + url, init);
  const text = await response.text();
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Json), headers: response.headers };
}

before(async () => {
  data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-http-api-'));
  running = await start_broker({
    data_dir,
    kafka: { host: '127.0.0.1', port: 0 },
    http: { host: '127.0.0.1', port: 0 },
    // Quick dead letters: two deliveries, a short backoff.
    share_groups: {
      partition: {
        delivery_count_limit: 2,
        retry_backoff_ms: [20],
        record_lock_duration_ms: 5_000,
        records_in_flight_max: 1_000,
      },
    },
  });
  assert.ok(running.http_address, 'the HTTP listener is up');
  base = `http://${running.http_address.host}:${running.http_address.port}`;
  kafka = new Kafka({
    brokers: [`${running.kafka_address.host}:${running.kafka_address.port}`],
    clientId: 'http-api-test',
    logLevel: logLevel.NOTHING,
    retry: { retries: 10, initialRetryTime: 100 },
  });
  admin = kafka.admin();
  await admin.connect();
  producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
});

after(async () => {
  await producer?.disconnect();
  await admin?.disconnect();
  await running?.close();
  if (data_dir) fs.rmSync(data_dir, { recursive: true, force: true });
});

test('cluster: one node that leads and controls', async () => {
  const { status, body } = await api('GET', '/api/v1/cluster');
  assert.equal(status, 200);
  assert.equal(body.cluster_id, running.broker.cluster_id);
  assert.deepEqual(body.brokers, [{ node_id: 1, host: running.kafka_address.host, port: running.kafka_address.port }]);
  assert.equal(body.controller, 1);
});

test('topics: created through the API and through kafkajs, listed in pages in name order', async () => {
  const created = await api('POST', '/api/v1/topics', {
    name: 'page-00',
    partitions: 2,
    configs: { 'retention.ms': 3_600_000 },
  });
  assert.equal(created.status, 201);
  assert.equal(created.body.name, 'page-00');
  assert.equal(created.body.partitions.length, 2);
  assert.equal(created.body.configs['retention.ms'], '3600000');
  await admin.createTopics({
    topics: Array.from({ length: 24 }, (_, i) => ({ topic: `page-${String(i + 1).padStart(2, '0')}` })),
  });

  const names: string[] = [];
  for (let offset = 0; ; offset += 10) {
    const { status, body } = await api('GET', `/api/v1/topics?offset=${offset}&limit=10`);
    assert.equal(status, 200);
    assert.equal(body.limit, 10);
    assert.equal(body.offset, offset);
    names.push(...body.items.map((t: Json) => t.name));
    if (offset + 10 >= body.total) break;
  }
  const expected = (await admin.listTopics()).filter((t) => !t.startsWith('__')).sort();
  assert.deepEqual(names, expected, 'every page in order, nothing twice');
  assert.ok(!names.includes('__consumer_offsets'), 'internal topics are left out by default');
  const with_internal = await api('GET', '/api/v1/topics?internal=true&limit=1000');
  assert.ok(with_internal.body.items.some((t: Json) => t.name === '__consumer_offsets' && t.internal === true));
  const capped = await api('GET', '/api/v1/topics?limit=100000');
  assert.equal(capped.body.limit, LIST_LIMIT_MAX, 'the limit is capped');
});

test('topic detail: offsets per partition match what was produced and deleted', async () => {
  await admin.createTopics({ topics: [{ topic: 'detail', numPartitions: 2 }] });
  await producer.send({
    topic: 'detail',
    messages: Array.from({ length: 7 }, (_, i) => ({ partition: 0, value: `a${i}` })),
  });
  await producer.send({
    topic: 'detail',
    messages: Array.from({ length: 3 }, (_, i) => ({ partition: 1, value: `b${i}` })),
  });
  await admin.fetchTopicMetadata({ topics: ['detail'] }); // kafkajs looks the leader up in its metadata
  await admin.deleteTopicRecords({ topic: 'detail', partitions: [{ partition: 0, offset: '2' }] });
  const { status, body } = await api('GET', '/api/v1/topics/detail');
  assert.equal(status, 200);
  const kafka_offsets = await admin.fetchTopicOffsets('detail');
  for (const p of body.partitions) {
    const k = kafka_offsets.find((o) => o.partition === p.partition)!;
    assert.equal(p.high_watermark, Number(k.high));
    assert.equal(p.log_start_offset, Number(k.low));
    assert.equal(p.log_end_offset, p.high_watermark);
    assert.deepEqual([p.leader, p.replicas, p.isr], [1, [1], [1]]);
    assert.ok(p.bytes > 0);
  }
  assert.deepEqual(
    body.partitions.map((p: Json) => [p.log_start_offset, p.high_watermark]),
    [
      [2, 7],
      [0, 3],
    ],
  );
  const listed = (await api('GET', '/api/v1/topics?limit=1000')).body.items.find((t: Json) => t.name === 'detail');
  assert.equal(listed.messages, 5 + 3, 'messages = high watermark - log start, summed');
  assert.equal(listed.bytes, body.partitions[0].bytes + body.partitions[1].bytes);
});

test('topic configs: set and remove, refused with the field named', async () => {
  await api('POST', '/api/v1/topics', { name: 'configured' });
  const set = await api('PATCH', '/api/v1/topics/configured/configs', {
    set: { 'retention.ms': '60000', 'max.message.bytes': 2_000_000 },
  });
  assert.equal(set.status, 200);
  assert.deepEqual(set.body.configs, { 'retention.ms': '60000', 'max.message.bytes': '2000000' });
  const described = await admin.describeConfigs({
    resources: [{ type: 2, name: 'configured', configNames: ['retention.ms'] }],
    includeSynonyms: false,
  });
  assert.equal(described.resources[0]!.configEntries[0]!.configValue, '60000', 'kafkajs sees the change');
  const removed = await api('PATCH', '/api/v1/topics/configured/configs', { remove: ['retention.ms'] });
  assert.deepEqual(removed.body.configs, { 'max.message.bytes': '2000000' });
  const bad = await api('PATCH', '/api/v1/topics/configured/configs', { set: { 'retention.ms': 'soon' } });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.error.field, 'set');
  assert.match(bad.body.error.message, /retention\.ms/);
});

test('message browser: pages of messages, text or base64, headers, default to the newest', async () => {
  await admin.createTopics({ topics: [{ topic: 'browse' }] });
  await producer.send({
    topic: 'browse',
    messages: [
      ...Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `value ${i}`, headers: { trace: `t${i}` } })),
      { key: null, value: Buffer.from([0xff, 0x00, 0xfe]), headers: { raw: Buffer.from([0xc3, 0x28]) } },
    ],
  });
  const first = await api('GET', '/api/v1/topics/browse/partitions/0/messages?offset=0&limit=4');
  assert.equal(first.status, 200);
  assert.deepEqual(
    first.body.items.map((m: Json) => m.offset),
    [0, 1, 2, 3],
  );
  assert.equal(first.body.next_offset, 4);
  assert.equal(first.body.high_watermark, 11);
  assert.deepEqual(
    { key: first.body.items[1].key, value: first.body.items[1].value, headers: first.body.items[1].headers },
    { key: 'k1', value: 'value 1', headers: { trace: 't1' } },
  );
  assert.ok(first.body.items[0].timestamp_ms > 0);
  const next = await api('GET', `/api/v1/topics/browse/partitions/0/messages?offset=${first.body.next_offset}&limit=4`);
  assert.deepEqual(
    next.body.items.map((m: Json) => m.offset),
    [4, 5, 6, 7],
  );
  const newest = await api('GET', '/api/v1/topics/browse/partitions/0/messages?limit=3');
  assert.deepEqual(
    newest.body.items.map((m: Json) => m.offset),
    [8, 9, 10],
    'no offset: the last `limit` messages',
  );
  const binary = newest.body.items[2];
  assert.equal(binary.key, null);
  assert.deepEqual(binary.value, { base64: Buffer.from([0xff, 0x00, 0xfe]).toString('base64') });
  assert.deepEqual(binary.headers.raw, { base64: Buffer.from([0xc3, 0x28]).toString('base64') });
  const past_end = await api('GET', '/api/v1/topics/browse/partitions/0/messages?offset=50');
  assert.deepEqual([past_end.body.items.length, past_end.body.next_offset], [0, 50]);
  assert.equal((await api('GET', '/api/v1/topics/browse/partitions/1/messages')).status, 404);
  const bad_limit = await api('GET', '/api/v1/topics/browse/partitions/0/messages?limit=0');
  assert.deepEqual(
    [bad_limit.status, bad_limit.body.error.code, bad_limit.body.error.field],
    [400, 'invalid_query', 'limit'],
  );
});

test('groups: lag equals the real lag; offsets reset is refused while members run and works after', async () => {
  await admin.createTopics({ topics: [{ topic: 'lagged' }] });
  await producer.send({ topic: 'lagged', messages: Array.from({ length: 20 }, (_, i) => ({ value: `m${i}` })) });
  const consumer = kafka.consumer({ groupId: 'lag-group', maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topic: 'lagged', fromBeginning: true });
  let seen = 0;
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ message }) => {
      seen++;
      if (Number(message.offset) === 11)
        await consumer.commitOffsets([{ topic: 'lagged', partition: 0, offset: '12' }]);
    },
  });
  await until(() => seen === 20, '20 messages consumed');
  const detail = await until(async () => {
    const d = await api('GET', '/api/v1/groups/lag-group');
    return d.status === 200 && d.body.members.length === 1 && d.body.offsets[0]?.committed === 12 ? d : null;
  }, 'the group with its commit');
  assert.equal(detail.body.state, 'stable');
  assert.equal(detail.body.protocol_type, 'consumer');
  assert.deepEqual(detail.body.members[0].assignments, [{ topic: 'lagged', partitions: [0] }]);
  assert.deepEqual(detail.body.offsets, [{ topic: 'lagged', partition: 0, committed: 12, high_watermark: 20, lag: 8 }]);
  const kafka_view = await admin.fetchOffsets({ groupId: 'lag-group', topics: ['lagged'] });
  assert.equal(20 - Number(kafka_view[0]!.partitions[0]!.offset), detail.body.lag, 'the lag kafkajs computes');
  const listed = await api('GET', '/api/v1/groups');
  assert.deepEqual(
    listed.body.items.find((g: Json) => g.group_id === 'lag-group'),
    { group_id: 'lag-group', state: 'stable', protocol_type: 'consumer', members: 1, lag: 8 },
  );

  const refused = await api('POST', '/api/v1/groups/lag-group/offsets/reset', { topic: 'lagged', to: 'earliest' });
  assert.equal(refused.status, 409);
  assert.equal(refused.body.error.code, 'group_not_empty');
  await consumer.disconnect();

  const earliest = await api('POST', '/api/v1/groups/lag-group/offsets/reset', { topic: 'lagged', to: 'earliest' });
  assert.equal(earliest.status, 200);
  assert.deepEqual(earliest.body.partitions, [{ partition: 0, offset: 0 }]);
  assert.equal(
    (await admin.fetchOffsets({ groupId: 'lag-group', topics: ['lagged'] }))[0]!.partitions[0]!.offset,
    '0',
    'kafkajs sees the reset',
  );
  assert.equal((await api('GET', '/api/v1/groups/lag-group')).body.lag, 20);
  const to_offset = await api('POST', '/api/v1/groups/lag-group/offsets/reset', {
    topic: 'lagged',
    to: { offset: 15 },
    partitions: [0],
  });
  assert.deepEqual(to_offset.body.partitions, [{ partition: 0, offset: 15 }]);
  const by_time = await api('POST', '/api/v1/groups/lag-group/offsets/reset', {
    topic: 'lagged',
    to: { timestamp_ms: 0 },
  });
  assert.deepEqual(by_time.body.partitions, [{ partition: 0, offset: 0 }], 'the first message at or after the time');
  const latest = await api('POST', '/api/v1/groups/lag-group/offsets/reset', { topic: 'lagged', to: 'latest' });
  assert.deepEqual(latest.body.partitions, [{ partition: 0, offset: 20 }]);
  assert.equal((await api('GET', '/api/v1/groups/lag-group')).body.lag, 0);

  const bad_to = await api('POST', '/api/v1/groups/lag-group/offsets/reset', { topic: 'lagged', to: 'yesterday' });
  assert.deepEqual([bad_to.status, bad_to.body.error.field], [400, 'to']);
  const bad_partitions = await api('POST', '/api/v1/groups/lag-group/offsets/reset', {
    topic: 'lagged',
    to: 'latest',
    partitions: [3],
  });
  assert.deepEqual([bad_partitions.status, bad_partitions.body.error.field], [400, 'partitions']);
  const bad_topic = await api('POST', '/api/v1/groups/lag-group/offsets/reset', { topic: 'nope', to: 'latest' });
  assert.deepEqual([bad_topic.status, bad_topic.body.error.field], [400, 'topic']);
  assert.equal((await api('GET', '/api/v1/groups/no-such-group')).status, 404);
});

/** Produces four jobs, one of them poison, and runs a share group until the poison is dead-lettered. */
async function dead_letter_the_poison(sluice: Sluice): Promise<void> {
  await admin.createTopics({ topics: [{ topic: 'jobs' }] });
  await producer.send({
    topic: 'jobs',
    messages: ['job-0', 'job-1', 'poison', 'job-3'].map((value) => ({
      key: value,
      value,
      headers: { origin: 'test' },
    })),
  });
  const queue = sluice.queueConsumer({ groupId: 'workers', maxWaitTimeInMs: 100 });
  await queue.subscribe({ topics: ['jobs'] });
  const accepted: string[] = [];
  await queue.run({
    eachMessage: async ({ message }) => {
      if (message.value!.toString() === 'poison') throw new Error('cannot handle poison');
      accepted.push(message.value!.toString());
    },
  });
  const listed = await until(async () => {
    const q = (await api('GET', '/api/v1/queues')).body.items.find((i: Json) => i.group_id === 'workers');
    return q && q.dead_lettered === 1 && accepted.length === 3 ? q : null;
  }, 'the poison message dead-lettered');
  assert.deepEqual(listed.topics, ['jobs']);
  assert.equal(listed.redeliveries, 1, 'the poison was delivered twice');
  assert.equal(listed.in_flight, 0);
  assert.equal(listed.available, 0);
  assert.equal(listed.expired, 0);
  const detail = await api('GET', '/api/v1/queues/workers');
  assert.equal(detail.status, 200);
  assert.equal(detail.body.members.length, 1);
  assert.equal(detail.body.settings.delivery_count_limit, 2);
  const [partition] = detail.body.partitions;
  assert.deepEqual(
    [
      partition.topic,
      partition.partition,
      partition.start_offset,
      partition.high_watermark,
      partition.in_flight,
      partition.available,
    ],
    ['jobs', 0, 4, 4, 0, 0],
  );
  assert.equal((await api('GET', '/api/v1/queues/nobody')).status, 404);
  await queue.disconnect();
}

/** The dead-letter topic is listed, and its message keeps the original and says where it came from. */
async function peek_the_dead_letter(): Promise<Json> {
  const letters = await api('GET', '/api/v1/dead-letters');
  assert.deepEqual(
    letters.body.items.find((d: Json) => d.topic === 'jobs.workers.dlq'),
    { topic: 'jobs.workers.dlq', origin_topic: 'jobs', group: 'workers', partitions: 1, messages: 1 },
  );
  const peeked = await api('GET', '/api/v1/dead-letters/jobs.workers.dlq/messages?offset=0');
  assert.equal(peeked.status, 200);
  const [letter] = peeked.body.items;
  assert.deepEqual(
    [
      letter.offset,
      letter.key,
      letter.value,
      letter.headers.origin,
      letter.origin_topic,
      letter.origin_partition,
      letter.origin_offset,
      letter.group,
      letter.delivery_count,
    ],
    [0, 'poison', 'poison', 'test', 'jobs', 0, 2, 'workers', 2],
  );
  assert.match(letter.reason, /delivery limit 2 reached; last failure: cannot handle poison/);
  assert.ok(letter.dead_lettered_at_ms > 0);
  return letter;
}

async function assert_bad_redrives_refused(): Promise<void> {
  const not_dlq = await api('GET', '/api/v1/dead-letters/jobs/messages');
  assert.deepEqual([not_dlq.status, not_dlq.body.error.code], [400, 'not_dead_letter_topic']);
  const nothing_chosen = await api('POST', '/api/v1/dead-letters/jobs.workers.dlq/redrive', {});
  assert.deepEqual([nothing_chosen.status, nothing_chosen.body.error.field], [400, 'offsets']);
  const missing = await api('POST', '/api/v1/dead-letters/jobs.workers.dlq/redrive', { offsets: [7] });
  assert.deepEqual([missing.status, missing.body.error.field], [400, 'offsets']);
  assert.match(missing.body.error.message, /0:7/);
}

/** Redriven once: a second redrive, by the API or the SDK, finds the audit record and skips it. */
async function assert_redriven_once(sluice: Sluice, letter: Json): Promise<void> {
  const redriven = await api('POST', '/api/v1/dead-letters/jobs.workers.dlq/redrive', { offsets: [0] });
  assert.equal(redriven.status, 200);
  assert.deepEqual(redriven.body, { selected: 1, redriven: 1, skipped_already_redriven: 0 });
  const again = await api('POST', '/api/v1/dead-letters/jobs.workers.dlq/redrive', { all: true });
  assert.deepEqual(
    again.body,
    { selected: 1, redriven: 0, skipped_already_redriven: 1 },
    'the audit topic keeps it from going twice',
  );
  const sdk_admin = sluice.admin();
  await sdk_admin.connect();
  const by_sdk = await sdk_admin.redriveDeadLetters({ topic: 'jobs.workers.dlq' });
  await sdk_admin.disconnect();
  assert.deepEqual(
    [by_sdk.redriven, by_sdk.skippedAlreadyRedriven],
    [0, 1],
    'the SDK (and so the CLI) reads the same audit',
  );

  const back = await api('GET', '/api/v1/topics/jobs/partitions/0/messages?offset=4');
  assert.equal(back.body.items.length, 1, 'the dead letter is back in its origin topic, once');
  const [copy] = back.body.items;
  assert.deepEqual(
    [copy.key, copy.value, copy.headers.origin, copy.headers['sluice-redriven-from']],
    ['poison', 'poison', 'test', 'jobs.workers.dlq/0/0'],
  );
  assert.ok(!Object.keys(copy.headers).some((h) => h.startsWith('sluice-dlq-')), 'dead-letter headers are dropped');
  assert.equal(copy.timestamp_ms, letter.timestamp_ms, 'the original timestamp is kept');
  const audit = await api('GET', '/api/v1/topics/sluice.dlq.audit/partitions/0/messages?offset=0');
  const record = JSON.parse(audit.body.items[0].value) as Json;
  assert.deepEqual(
    [record.dlq, record.partition, record.offset, record.to, record.to_partition, record.to_offset],
    ['jobs.workers.dlq', 0, 0, 'jobs', 0, 4],
  );
  assert.equal(audit.body.items[0].key, 'jobs.workers.dlq/0/0');
}

test('queues and dead letters: share group stats; a poison message peeked, redriven once, SDK included', async () => {
  const sluice = new Sluice({
    brokers: [`${running.kafka_address.host}:${running.kafka_address.port}`],
    clientId: 'http-api-queue',
    retry: { retries: 10, initialRetryTime: 100 },
  });
  await dead_letter_the_poison(sluice);
  const letter = await peek_the_dead_letter();
  await assert_bad_redrives_refused();
  await assert_redriven_once(sluice, letter);
});

test('delayed and stats: counters move with traffic', async () => {
  const before_stats = (await api('GET', '/api/v1/stats')).body;
  await admin.createTopics({ topics: [{ topic: 'later' }] });
  await producer.send({
    topic: 'later',
    messages: [{ value: 'soon', headers: { 'sluice-delay-ms': '60000' } }, { value: 'now' }],
  });
  const delayed = await api('GET', '/api/v1/delayed');
  assert.equal(delayed.status, 200);
  assert.ok(delayed.body.pending >= 1);
  assert.ok(delayed.body.scheduled_total >= 2, 'both records of the batch were scheduled (one is due at once)');
  const after_stats = (await api('GET', '/api/v1/stats')).body;
  assert.equal(after_stats.messages_in_total - before_stats.messages_in_total, 2);
  assert.ok(after_stats.bytes_in_total > before_stats.bytes_in_total);
  assert.ok(after_stats.connections >= 2, 'kafkajs admin and producer are connected');
  assert.ok(after_stats.now_ms >= before_stats.now_ms);
});

test('errors: JSON with a code, and the field when a body or query is wrong', async () => {
  const unknown_topic = await api('GET', '/api/v1/topics/nope');
  assert.deepEqual([unknown_topic.status, unknown_topic.body.error.code], [404, 'not_found']);
  assert.match(unknown_topic.body.error.message, /nope/);
  assert.equal((await api('GET', '/api/v1/no-such-thing')).status, 404);
  assert.equal((await api('DELETE', '/api/v1/topics/nope')).status, 404);
  const partitions = await api('POST', '/api/v1/topics', { name: 'bad', partitions: '3' });
  assert.deepEqual(
    [partitions.status, partitions.body.error.code, partitions.body.error.field],
    [400, 'invalid_body', 'partitions'],
  );
  const name = await api('POST', '/api/v1/topics', { partitions: 1 });
  assert.deepEqual([name.status, name.body.error.field], [400, 'name']);
  const bad_name = await api('POST', '/api/v1/topics', { name: 'no spaces' });
  assert.deepEqual([bad_name.status, bad_name.body.error.field], [400, 'name']);
  const configs = await api('POST', '/api/v1/topics', { name: 'bad-config', configs: { 'retention.ms': 'never' } });
  assert.deepEqual([configs.status, configs.body.error.field], [400, 'configs']);
  const exists = await api('POST', '/api/v1/topics', { name: 'detail' });
  assert.deepEqual([exists.status, exists.body.error.code], [409, 'topic_exists']);
  const not_json = await api('POST', '/api/v1/topics', '{"name": ', { 'content-type': 'application/json' });
  assert.deepEqual([not_json.status, not_json.body.error.code], [400, 'invalid_body']);
  const not_object = await api('POST', '/api/v1/topics', [1, 2]);
  assert.equal(not_object.status, 400);
  const form = await api('POST', '/api/v1/topics', 'name=x', { 'content-type': 'application/x-www-form-urlencoded' });
  assert.equal(form.status, 415);
  const huge = await api('POST', '/api/v1/topics', { name: 'x'.repeat(BODY_BYTES_MAX) });
  assert.deepEqual([huge.status, huge.body.error.code], [413, 'body_too_large']);
  const method = await api('PUT', '/api/v1/topics');
  assert.deepEqual([method.status, method.body.error.code], [405, 'method_not_allowed']);
  assert.equal(method.headers.get('allow'), 'GET, POST');
  assert.equal((await api('POST', '/metrics')).status, 405);
  const internal = await api('DELETE', '/api/v1/topics/__consumer_offsets');
  assert.equal(internal.status, 409);
  const page = await api('GET', '/api/v1/topics?offset=-1');
  assert.deepEqual([page.status, page.body.error.field], [400, 'offset']);
  assert.equal((await api('GET', '/')).status, 404, 'no console handler plugged in: nothing outside the API');
  const deleted = await api('DELETE', '/api/v1/topics/configured');
  assert.equal(deleted.status, 204);
  assert.ok(!(await admin.listTopics()).includes('configured'));
});

test('2,000 topics: listed in capped pages while a timer keeps firing on time', async () => {
  for (let i = 0; i < 2000; i += 250) {
    await admin.createTopics({
      topics: Array.from({ length: 250 }, (_, j) => ({ topic: `many-${String(i + j).padStart(4, '0')}` })),
      timeout: 60_000,
    });
  }
  let last = performance.now();
  let stall = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    stall = Math.max(stall, now - last);
    last = now;
  }, 5);
  try {
    const names: string[] = [];
    let total = 0;
    for (let offset = 0; offset === 0 || offset < total; offset += LIST_LIMIT_MAX) {
      const { body } = await api('GET', `/api/v1/topics?offset=${offset}&limit=${LIST_LIMIT_MAX * 10}`);
      assert.equal(body.items.length, Math.min(LIST_LIMIT_MAX, body.total - offset));
      total = body.total;
      names.push(...body.items.map((t: Json) => t.name as string));
    }
    assert.ok(total >= 2000);
    assert.equal(names.filter((n) => n.startsWith('many-')).length, 2000);
    assert.equal(new Set(names).size, names.length);
    const metrics = await fetch(`${base}/metrics`);
    assert.equal(metrics.status, 200);
    await metrics.text();
  } finally {
    clearInterval(timer);
  }
  assert.ok(stall < STALL_MS_MAX, `the event loop stalled for ${stall.toFixed(0)} ms`);
});

describe('health', () => {
  test('/healthz and /readyz answer 200 while the broker serves', async () => {
    const health = await api('GET', '/healthz');
    assert.deepEqual([health.status, health.body], [200, { status: 'ok' }]);
    const ready = await api('GET', '/readyz');
    assert.deepEqual([ready.status, ready.body.status], [200, 'ready']);
  });

  test('/readyz answers 503 once shutdown begins, and when a partition is offline', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-http-ready-'));
    const other = await start_broker({
      data_dir: dir,
      kafka: { host: '127.0.0.1', port: 0 },
      http: { host: '127.0.0.1', port: 0 },
    });
    const url = `http://127.0.0.1:${other.http_address!.port}`;
    try {
      await other.broker.topics.create('fragile', 1);
      assert.equal((await fetch(`${url}/readyz`)).status, 200);
      // A failed fsync takes a partition offline; this is the state it leaves behind.
      (other.broker.topic_index.local_log('fragile', 0)! as unknown as { go_offline(reason: string): void }).go_offline(
        'simulated fsync failure',
      );
      const offline = await fetch(`${url}/readyz`);
      assert.equal(offline.status, 503);
      assert.match(JSON.stringify(await offline.json()), /fragile-0/);
      other.http!.begin_shutdown();
      const closing = await fetch(`${url}/readyz`);
      assert.equal(closing.status, 503);
      assert.match(JSON.stringify(await closing.json()), /shutting down/);
      assert.equal((await fetch(`${url}/healthz`)).status, 200, 'the process still serves');
      assert.equal((await fetch(`${url}/api/v1/topics`)).status, 503, 'the API refuses work during shutdown');
    } finally {
      await other.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    await assert.rejects(fetch(`${url}/healthz`), 'the listener is closed with the broker');
  });
});
