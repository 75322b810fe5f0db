// The client sessions capture.ts records: each drives one real client through a broad slice of
// what it can send, so the seeds hold the requests, frames and bodies clients really produce.
// Sessions are best-effort: a step that fails is logged and the rest goes on.
import { execFile } from 'node:child_process';
import http from 'node:http';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { CompressionTypes, Kafka, logLevel, type SASLOptions } from 'kafkajs';
import { Admin, Consumer, Producer, stringDeserializers, stringSerializers } from '@platformatic/kafka';
import { Sluice } from '../src/sdk/index.ts';
import { api_router } from '../src/server/http/server.ts';

export const USER = 'alice';
export const PASSWORD = 'wonderland';

export interface Endpoints {
  kafka: string;
  amqp: string;
  http: string;
}

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const run_file = promisify(execFile);

async function step(what: string, body: () => Promise<unknown>): Promise<void> {
  try {
    await body();
  } catch (error) {
    console.log(`  ${what}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function messages(count: number, prefix: string, headers: Record<string, string> = {}) {
  return Array.from({ length: count }, (_, i) => ({ key: `${prefix}-${i}`, value: `${prefix} value ${i}`, headers }));
}

// ------------------------------------------------------------------ kafkajs

async function kafkajs_admin(kafka: Kafka): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await step('create topics', () =>
    admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 2 }, { topic: 'events' }, { topic: 'doomed' }] }),
  );
  await step('metadata', () => admin.fetchTopicMetadata({ topics: ['orders'] }));
  await step('offsets', () => admin.fetchTopicOffsets('orders'));
  await step('offsets by time', () => admin.fetchTopicOffsetsByTimestamp('orders', Date.now() - 60_000));
  await step('describe cluster', () => admin.describeCluster());
  await step('describe configs', () =>
    admin.describeConfigs({ resources: [{ type: 2, name: 'orders' }], includeSynonyms: true }),
  );
  await step('alter configs', () =>
    admin.alterConfigs({
      validateOnly: false,
      resources: [{ type: 2, name: 'orders', configEntries: [{ name: 'retention.ms', value: '86400000' }] }],
    }),
  );
  await step('create partitions', () => admin.createPartitions({ topicPartitions: [{ topic: 'events', count: 2 }] }));
  await step('describe acls', () =>
    admin.describeAcls({ resourceType: 1, permissionType: 1, operation: 1, resourcePatternType: 1 }),
  );
  await step('delete topics', () => admin.deleteTopics({ topics: ['doomed'] }));
  await admin.disconnect();
}

async function kafkajs_produce_consume(kafka: Kafka): Promise<void> {
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  await producer.send({ topic: 'orders', messages: messages(5, 'plain', { source: 'capture' }) });
  await producer.send({ topic: 'orders', compression: CompressionTypes.GZIP, messages: messages(20, 'gzip') });
  await producer.send({ topic: 'events', messages: messages(2, 'later', { 'sluice-delay-ms': '50' }) });
  await producer.send({ topic: 'events', messages: messages(1, 'ttl', { 'sluice-ttl-ms': '600000' }) });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: 'capture-kafkajs', maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topics: ['orders', 'events'], fromBeginning: true });
  let seen = 0;
  await consumer.run({ eachMessage: async () => void seen++ });
  for (let i = 0; i < 50 && seen < 25; i++) await sleep(100);
  await consumer.disconnect();
  const admin = kafka.admin();
  await admin.connect();
  await step('group offsets', () => admin.fetchOffsets({ groupId: 'capture-kafkajs', topics: ['orders'] }));
  await step('list groups', () => admin.listGroups());
  await step('describe groups', () => admin.describeGroups(['capture-kafkajs']));
  await step('reset offsets', () =>
    admin.resetOffsets({ groupId: 'capture-kafkajs', topic: 'orders', earliest: true }),
  );
  await step('delete records', () =>
    admin.deleteTopicRecords({ topic: 'orders', partitions: [{ partition: 0, offset: '1' }] }),
  );
  await step('delete groups', () => admin.deleteGroups(['capture-kafkajs']));
  await admin.disconnect();
}

async function kafkajs_transaction(kafka: Kafka): Promise<void> {
  const producer = kafka.producer({ transactionalId: 'capture-txn', maxInFlightRequests: 1, idempotent: true });
  await producer.connect();
  const committed = await producer.transaction();
  await committed.send({ topic: 'orders', messages: messages(3, 'txn') });
  await committed.sendOffsets({
    consumerGroupId: 'capture-txn-group',
    topics: [{ topic: 'orders', partitions: [{ partition: 0, offset: '1' }] }],
  });
  await committed.commit();
  const aborted = await producer.transaction();
  await aborted.send({ topic: 'events', messages: messages(1, 'aborted') });
  await aborted.abort();
  await producer.disconnect();
}

async function kafkajs_session(endpoints: Endpoints): Promise<void> {
  for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512'] as const) {
    const sasl = { mechanism, username: USER, password: PASSWORD } as SASLOptions;
    const kafka = new Kafka({
      clientId: `capture-kafkajs-${mechanism}`,
      brokers: [endpoints.kafka],
      sasl,
      logLevel: logLevel.NOTHING,
      retry: { retries: 2, initialRetryTime: 100 },
    });
    if (mechanism !== 'plain') {
      await step('metadata', async () => {
        const admin = kafka.admin();
        await admin.connect();
        await admin.listTopics();
        await admin.disconnect();
      });
      continue;
    }
    await step('admin', () => kafkajs_admin(kafka));
    await step('produce and consume', () => kafkajs_produce_consume(kafka));
    await step('transaction', () => kafkajs_transaction(kafka));
  }
}

// ------------------------------------------------------------------ @platformatic/kafka

async function platformatic_session(endpoints: Endpoints): Promise<void> {
  const base = {
    bootstrapBrokers: [endpoints.kafka],
    sasl: { mechanism: 'SCRAM-SHA-256' as const, username: USER, password: PASSWORD },
    timeout: 5_000,
    retries: 2,
    retryDelay: 100,
  };
  const admin = new Admin({ clientId: 'capture-platformatic-admin', ...base });
  await step('create topics', () => admin.createTopics({ topics: ['modern'], partitions: 2, replicas: 1 }));
  await step('list topics', () => admin.listTopics());
  const producer = new Producer({
    clientId: 'capture-platformatic',
    serializers: stringSerializers,
    idempotent: true,
    ...base,
  });
  for (const compression of ['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const) {
    await step(`produce ${compression}`, () =>
      producer.send({
        messages: Array.from({ length: 8 }, (_, i) => ({
          topic: 'modern',
          key: `k${i}`,
          value: `${compression} message ${i} `.repeat(4),
          headers: new Map([['codec', compression]]),
        })),
        compression,
      }),
    );
  }
  await producer.close();
  const consumer = new Consumer({
    clientId: 'capture-platformatic-consumer',
    groupId: 'capture-platformatic',
    deserializers: stringDeserializers,
    maxWaitTime: 100,
    ...base,
  });
  await step('consume', async () => {
    const stream = await consumer.consume({ topics: ['modern'], mode: 'earliest' });
    let seen = 0;
    for await (const message of stream) {
      await message.commit();
      if (++seen >= 10) break;
    }
    await stream.close();
  });
  await consumer.close();
  await step('describe groups', () => admin.describeGroups({ groups: ['capture-platformatic'] }));
  await step('list groups', () => admin.listGroups());
  await step('delete groups', () => admin.deleteGroups({ groups: ['capture-platformatic'] }));
  await admin.close();
}

// ------------------------------------------------------------------ kcat (librdkafka)

async function kcat_session(endpoints: Endpoints): Promise<void> {
  const common = [
    '-b',
    endpoints.kafka,
    '-X',
    'security.protocol=SASL_PLAINTEXT',
    '-X',
    'sasl.mechanisms=SCRAM-SHA-512',
    '-X',
    `sasl.username=${USER}`,
    '-X',
    `sasl.password=${PASSWORD}`,
  ];
  const kcat = (args: string[], input?: string) => {
    const child = run_file('kcat', [...common, ...args], { timeout: 20_000 });
    if (input !== undefined) child.child.stdin!.end(input);
    return child;
  };
  await step('metadata', () => kcat(['-L']));
  for (const codec of ['gzip', 'snappy', 'lz4', 'zstd']) {
    const lines = Array.from({ length: 6 }, (_, i) => `key${i}:${codec} payload ${i} ${'abc'.repeat(i * 5)}`);
    await step(`produce ${codec}`, () =>
      kcat(['-P', '-t', 'rdkafka', '-z', codec, '-K', ':', '-H', `codec=${codec}`], lines.join('\n') + '\n'),
    );
  }
  await step('produce delayed', () =>
    kcat(['-P', '-t', 'rdkafka', '-H', 'sluice-deliver-at=1700000000000'], 'deliver me\n'),
  );
  await step('consume', () => kcat(['-C', '-t', 'rdkafka', '-o', 'beginning', '-e', '-c', '10']));
  await step('group consume', () => kcat(['-G', 'capture-kcat', '-o', 'beginning', '-e', '-c', '5', 'rdkafka']));
}

// ------------------------------------------------------------------ the Sluice SDK (share groups)

async function sdk_session(endpoints: Endpoints): Promise<void> {
  const sluice = new Sluice({
    brokers: [endpoints.kafka],
    clientId: 'capture-sdk',
    sasl: { mechanism: 'scram-sha-256', username: USER, password: PASSWORD },
  });
  const producer = sluice.producer();
  await producer.connect();
  await producer.send({ topic: 'jobs', messages: messages(6, 'job') });
  await producer.disconnect();
  const queue = sluice.queueConsumer({ groupId: 'capture-queue', maxWaitTimeInMs: 100, maxRecords: 4 });
  await queue.subscribe({ topics: ['jobs'] });
  let seen = 0;
  await queue.run({
    eachMessage: async ({ deliveryCount }) => {
      // The first delivery of every other message fails: releases and redeliveries are captured too.
      if (++seen % 2 === 0 && deliveryCount === 1) throw new Error('released on purpose');
    },
  });
  for (let i = 0; i < 50 && seen < 9; i++) await sleep(100);
  await queue.disconnect();
  await step('admin', () => sdk_admin(sluice));
}

/** Admin requests no other client here sends: ACLs, SCRAM users, configs, reassignments, quotas. */
async function sdk_admin(sluice: Sluice): Promise<void> {
  const admin = sluice.admin();
  await admin.connect();
  const acl = { resourceType: 2, resourceName: 'jobs', resourcePatternType: 3, principal: 'User:bob', host: '*' };
  await step('create acls', () => admin.createAcls({ acl: [{ ...acl, operation: 3, permissionType: 3 }] }));
  await step('describe acls', () => admin.describeAcls({ ...acl, operation: 1, permissionType: 1 }));
  await step('delete acls', () => admin.deleteAcls({ filters: [{ ...acl, operation: 1, permissionType: 1 }] }));
  await step('add user', () => admin.upsertUserScramCredential({ user: 'bob', password: 'builder' }));
  await step('describe users', () => admin.describeUserScramCredentials(['bob']));
  await step('remove user', () => admin.deleteUserScramCredential({ user: 'bob' }));
  await step('incremental configs', () =>
    admin.incrementalAlterConfigs({
      resources: [{ type: 2, name: 'jobs', configEntries: [{ name: 'retention.ms', value: '3600000', operation: 0 }] }],
    }),
  );
  await step('reassign', () =>
    admin.alterPartitionReassignments({ topics: [{ topic: 'jobs', partitions: [{ partition: 0, replicas: [1] }] }] }),
  );
  await step('list reassignments', () => admin.listPartitionReassignments());
  await step('set quota', () =>
    admin.alterClientQuotas([{ entity: { user: 'bob', clientId: null }, set: { producer_byte_rate: 1_048_576 } }]),
  );
  await step('describe quotas', () => admin.describeClientQuotas({ components: [{ entityType: 'user' }] }));
  await step('describe cluster', () => admin.describeCluster());
  await admin.disconnect();
}

// ------------------------------------------------------------------ amqplib

async function amqp_channel_work(channel: amqp.ConfirmChannel): Promise<void> {
  await channel.prefetch(5);
  await channel.assertExchange('capture.topic', 'topic', { durable: true, arguments: { 'alternate-exchange': 'x' } });
  await channel.assertExchange('capture.headers', 'headers', { durable: true });
  await channel.assertQueue('capture.q', {
    durable: true,
    arguments: { 'x-message-ttl': 60_000, 'x-max-length': 1000, 'x-queue-type': 'quorum' },
  });
  await channel.bindQueue('capture.q', 'capture.topic', 'orders.#');
  await channel.bindQueue('capture.q', 'capture.headers', '', { 'x-match': 'any', region: 'eu', level: 3 });
  const properties = {
    contentType: 'application/json',
    contentEncoding: 'utf-8',
    persistent: true,
    priority: 4,
    correlationId: 'c-1',
    replyTo: 'replies',
    expiration: '60000',
    messageId: 'm-1',
    timestamp: 1_700_000_000,
    type: 'order.created',
    appId: 'capture',
    headers: {
      region: 'eu',
      level: 3,
      big: 2 ** 40,
      ratio: 0.5,
      flag: true,
      none: null,
      list: [1, 'two', { three: 3 }],
      nested: { deep: { deeper: 'yes' } },
      bytes: Buffer.from([0, 1, 2, 255]),
      when: new Date(1_700_000_000_000),
    },
  };
  channel.publish('capture.topic', 'orders.eu', Buffer.from('{"order":1}'), properties);
  channel.publish('capture.headers', '', Buffer.from('x'.repeat(5000)), { headers: { region: 'eu' } });
  channel.sendToQueue('capture.q', Buffer.alloc(0), { mandatory: true });
  await channel.waitForConfirms();
  const got = await channel.get('capture.q');
  if (got) channel.nack(got, false, true);
  let deliveries = 0;
  const { consumerTag } = await channel.consume('capture.q', (message) => {
    if (!message) return;
    if (++deliveries === 1) channel.reject(message, false);
    else channel.ack(message);
  });
  for (let i = 0; i < 30 && deliveries < 2; i++) await sleep(100);
  await channel.cancel(consumerTag);
  await channel.checkQueue('capture.q');
  await channel.unbindQueue('capture.q', 'capture.topic', 'orders.#');
  await channel.purgeQueue('capture.q');
  await channel.deleteQueue('capture.q');
  await channel.deleteExchange('capture.headers');
}

async function amqplib_session(endpoints: Endpoints): Promise<void> {
  for (const credentials of [amqp.credentials.plain(USER, PASSWORD), amqp.credentials.amqplain(USER, PASSWORD)]) {
    const connection = await amqp.connect(`amqp://${endpoints.amqp}`, { credentials });
    const channel = await connection.createConfirmChannel();
    await step('channel work', () => amqp_channel_work(channel));
    await step('channel close', () => channel.close());
    await connection.close();
  }
}

// ------------------------------------------------------------------ HTTP admin API

const SAMPLE_PARAMS: Record<string, string> = {
  name: 'orders',
  id: 'capture-kafkajs',
  group: 'capture-queue',
  partition: '0',
  topic: 'orders',
};

const SAMPLE_BODIES: Record<string, unknown[]> = {
  'POST /api/v1/topics': [
    { name: 'web', partitions: 2, configs: { 'retention.ms': '60000', 'cleanup.policy': 'delete' } },
  ],
  'PATCH /api/v1/topics/:name/configs': [{ set: { 'retention.ms': 120000 }, remove: ['max.message.bytes'] }],
  'POST /api/v1/groups/:id/offsets/reset': [
    { topic: 'orders', to: 'earliest' },
    { topic: 'orders', to: { offset: 2 }, partitions: [0, 1] },
    { topic: 'orders', to: { timestamp_ms: 1_700_000_000_000 } },
  ],
  'POST /api/v1/dead-letters/:topic/redrive': [
    { offsets: [1, { partition: 0, offset: 2 }] },
    { all: true, to: 'orders' },
  ],
};

const SAMPLE_QUERIES = ['', '?offset=0&limit=10', '?internal=true&limit=1000', '?partition=0&offset=1&limit=5'];

function http_request(endpoints: Endpoints, method: string, target: string, body?: unknown): Promise<void> {
  const [host, port] = endpoints.http.split(':') as [string, string];
  const text = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string> = {
    authorization: `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`,
    connection: 'close',
    ...(text === undefined ? {} : { 'content-type': 'application/json' }),
  };
  return new Promise((resolve, reject) => {
    const request = http.request({ host, port: Number(port), method, path: target, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', resolve);
    });
    request.on('error', reject);
    request.end(text);
  });
}

/** Every route of the API with sample parameters, queries and bodies; deletions last. */
async function http_session(endpoints: Endpoints): Promise<void> {
  const routes = api_router(null).names.sort((a, b) => Number(a.startsWith('DELETE')) - Number(b.startsWith('DELETE')));
  for (const route of routes) {
    const [method, pattern] = route.split(' ') as [string, string];
    const target = pattern.replace(/:(\w+)/g, (_, name: string) => SAMPLE_PARAMS[name] ?? name);
    const bodies = SAMPLE_BODIES[route] ?? [undefined];
    const queries = method === 'GET' ? SAMPLE_QUERIES : [''];
    for (const body of bodies)
      for (const query of queries) await step(route, () => http_request(endpoints, method, target + query, body));
  }
  for (const target of ['/metrics', '/healthz', '/readyz', '/api/v1/topics/a%2Fb', '/console/index.html'])
    await step(target, () => http_request(endpoints, 'GET', target));
}

export const CLIENT_SESSIONS: Record<string, (endpoints: Endpoints) => Promise<void>> = {
  kafkajs: kafkajs_session,
  platformatic: platformatic_session,
  kcat: kcat_session,
  sdk: sdk_session,
  amqplib: amqplib_session,
  http: http_session,
};
