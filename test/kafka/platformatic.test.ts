// Interop with @platformatic/kafka (a client that negotiates the newest versions both sides know,
// flexible KIP-482 encodings included) against a real `sluice start` child process: admin calls,
// keyed produce with headers, consumer groups with commits and a rebalance. Every test starts its
// own broker on a fresh data directory and stops it at the end; every wait is bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import diagnostics_channel from 'node:diagnostics_channel';
import fs from 'node:fs';
import {
  Admin,
  Consumer,
  Producer,
  ProduceAcks,
  stringDeserializers,
  stringSerializers,
  type ConsumeOptions,
  type Message,
} from '@platformatic/kafka';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { handler_table } from '../../src/server/kafka/handlers/index.ts';
import { in_range } from '../../src/protocol/kafka/schema.ts';

// @platformatic/kafka 2.x targets Node 22 and calls Promise.withResolvers (Node ≥ 22); this project
// runs on Node 20, so provide it before the client is used (it is the only Node 22 API the client calls).
const promise_ctor = Promise as unknown as { withResolvers?: () => unknown };
if (typeof promise_ctor.withResolvers !== 'function') {
  promise_ctor.withResolvers = () => {
    let resolve!: (value: unknown) => void;
    let reject!: (reason?: unknown) => void;
    const promise = new Promise((ok, fail) => {
      resolve = ok;
      reject = fail;
    });
    return { promise, resolve, reject };
  };
}

type StringConsumer = Consumer<string, string, string, string>;
type StringMessage = Message<string, string, string, string>;
type Cleanup = Array<() => Promise<unknown>>;

const TEST_TIMEOUT_MS = 60_000;
const WAIT_MS = 20_000;
/** Client options shared by every client: short timeouts, few retries, so failures surface fast. */
const CLIENT = { timeout: 5_000, connectTimeout: 5_000, retries: 3, retryDelay: 200 } as const;
/** Group timings that keep joins and rebalances fast and bounded. */
const GROUP = { sessionTimeout: 10_000, rebalanceTimeout: 10_000, heartbeatInterval: 300, maxWaitTime: 200 } as const;

// Every request the client sends (API key → versions), from the client's own diagnostics channel.
const requests_sent = new Map<number, Set<number>>();
diagnostics_channel.subscribe('tracing:plt:kafka:connections:api:start', (message) => {
  const { apiKey, apiVersion } = message as { apiKey: number; apiVersion: number };
  if (!requests_sent.has(apiKey)) requests_sent.set(apiKey, new Set());
  requests_sent.get(apiKey)!.add(apiVersion);
});

/** The client negotiated versions the broker advertises, and all of them flexible (KIP-482). */
function check_versions_used(): void {
  const table = handler_table();
  assert.ok(requests_sent.size > 0);
  for (const [api_key, versions] of requests_sent) {
    const handler = table.get(api_key);
    assert.ok(handler, `the client sent API ${api_key}, which the broker does not serve`);
    for (const version of versions) {
      assert.ok(
        version >= handler.min_version && version <= handler.max_version,
        `${handler.api.name} v${version} outside the advertised range`,
      );
      // The client sends the flexible versions of every API that has them (OffsetDelete has none).
      const has_flexible = handler.api.request.flexible_versions !== 'none';
      assert.ok(
        !has_flexible || in_range(handler.api.request.flexible_versions, version),
        `${handler.api.name} v${version} is not a flexible version`,
      );
    }
  }
}

/** Resolves with `promise`, or rejects after `ms` naming `what`. */
async function within<T>(ms: number, what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `check` until it returns true; fails after `ms` with `what` and the last detail. */
async function until(
  ms: number,
  what: string,
  check: () => boolean | Promise<boolean>,
  detail: () => string = () => '',
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what} ${detail()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs `body` against a fresh broker process; always stops it and removes its data directory. */
async function with_broker(body: (broker: BrokerProcess, cleanup: Cleanup) => Promise<void>): Promise<void> {
  requests_sent.clear();
  const broker = await start_broker_process();
  const cleanup: Cleanup = [];
  try {
    await body(broker, cleanup);
  } catch (error) {
    if (error instanceof Error) error.message += `\n--- broker output ---\n${broker.output()}`;
    throw error;
  } finally {
    // Close clients newest first, each bounded, and never let a failing close hide the test's error.
    for (const close of cleanup.reverse()) await within(10_000, 'client close', close()).catch(() => undefined);
    const code = await within(20_000, 'broker stop', broker.stop()).catch(async (error: unknown) => {
      await broker.kill();
      throw error;
    });
    fs.rmSync(broker.data_dir, { recursive: true, force: true });
    assert.equal(code, 0, `broker exit code\n${broker.output()}`);
  }
  // The broker logs at warn level: anything it printed besides its ready line (a closed connection,
  // a malformed request, a failed handler) is an interop problem.
  const unexpected = broker
    .output()
    .split('\n')
    .filter((line) => line.trim() !== '' && !/^sluice (ready|stopped)/.test(line));
  assert.deepEqual(unexpected, [], 'broker printed warnings');
  check_versions_used();
}

function admin_client(broker: BrokerProcess, cleanup: Cleanup) {
  const admin = new Admin({ clientId: 'interop-admin', bootstrapBrokers: [broker.bootstrap], ...CLIENT });
  cleanup.push(() => admin.close());
  return admin;
}

function producer_client(broker: BrokerProcess, cleanup: Cleanup) {
  const producer = new Producer<string, string, string, string>({
    clientId: 'interop-producer',
    bootstrapBrokers: [broker.bootstrap],
    serializers: stringSerializers,
    idempotent: true,
    acks: ProduceAcks.ALL,
    ...CLIENT,
  });
  cleanup.push(() => producer.close());
  return producer;
}

function group_consumer(broker: BrokerProcess, cleanup: Cleanup, group: string, client_id: string): StringConsumer {
  const consumer = new Consumer<string, string, string, string>({
    clientId: client_id,
    groupId: group,
    bootstrapBrokers: [broker.bootstrap],
    deserializers: stringDeserializers,
    ...GROUP,
    ...CLIENT,
  });
  cleanup.push(() => consumer.close(true));
  return consumer;
}

/** Creates a topic and returns the id the broker gave it. */
async function create_topic(admin: Admin, topic: string, partitions: number): Promise<string> {
  const created = await admin.createTopics({ topics: [topic], partitions, replicas: 1 });
  assert.equal(created.length, 1);
  assert.equal(created[0]!.name, topic);
  assert.equal(created[0]!.partitions, partitions);
  assert.equal(created[0]!.replicas, 1);
  return created[0]!.id;
}

interface Sent {
  key: string;
  value: string;
  headers: Record<string, string>;
}

/** `count` messages over `keys` keys; the value carries the sequence number per key for order checks. */
function keyed_messages(topic: string, prefix: string, count: number, keys: number): Array<Sent & { topic: string }> {
  const per_key = new Map<string, number>();
  const messages: Array<Sent & { topic: string }> = [];
  for (let i = 0; i < count; i++) {
    const key = `${prefix}-key-${i % keys}`;
    const seq = per_key.get(key) ?? 0;
    per_key.set(key, seq + 1);
    messages.push({
      topic,
      key,
      value: `${prefix}|${key}|${seq}|${'x'.repeat(i % 50)}`,
      headers: { seq: String(seq), source: 'interop', index: String(i) },
    });
  }
  return messages;
}

/** Sends in chunks, sequentially, so per-key order is the send order. */
async function send_all(
  producer: ReturnType<typeof producer_client>,
  messages: Array<Sent & { topic: string }>,
  chunk = 100,
): Promise<void> {
  for (let i = 0; i < messages.length; i += chunk) {
    const result = await within(WAIT_MS, 'producer.send', producer.send({ messages: messages.slice(i, i + chunk) }));
    assert.ok(result.offsets && result.offsets.length > 0, 'send returns offsets');
  }
}

/** A member of `group` consuming with `options`: its consumer, its stream and what the stream delivered. */
async function group_member(
  broker: BrokerProcess,
  cleanup: Cleanup,
  group: string,
  client_id: string,
  options: ConsumeOptions<string, string, string, string>,
  label: string,
) {
  const consumer = group_consumer(broker, cleanup, group, client_id);
  const received: StringMessage[] = [];
  const stream = await within(WAIT_MS, `consume (${label})`, consumer.consume(options));
  stream.on('data', (message) => received.push(message));
  return { consumer, stream, received };
}

/** Whether `consumer`'s group has committed every partition of `topic` up to its end. */
async function commits_cover_all(consumer: StringConsumer, topic: string): Promise<boolean> {
  const committed = (await consumer.listCommittedOffsets({ topics: [{ topic, partitions: [0, 1, 2] }] })).get(topic)!;
  const high = (await consumer.listOffsets({ topics: [topic] })).get(topic)!;
  return committed.every((offset, i) => offset === high[i]);
}

/** Resolves when the stream's next fetch response has been handled. */
function once_fetched(stream: NodeJS.EventEmitter): Promise<void> {
  return new Promise((resolve) => stream.once('fetch', () => resolve()));
}

function headers_of(message: StringMessage): Record<string, string> {
  return Object.fromEntries(message.headers.entries());
}

/** Every sent message received exactly once, intact, in order per key. */
function check_received(sent: Sent[], received: StringMessage[]): void {
  const by_index = new Map<string, StringMessage>();
  for (const message of received) {
    const index = message.headers.get('index')!;
    assert.ok(!by_index.has(`${message.key}/${index}`), `duplicate delivery of ${message.key} #${index}`);
    by_index.set(`${message.key}/${index}`, message);
  }
  assert.equal(received.length, sent.length, 'received count');
  for (const [index, expected] of sent.entries()) {
    const message = by_index.get(`${expected.key}/${index}`);
    assert.ok(message, `message #${index} (${expected.key}) not received`);
    assert.equal(message.key, expected.key);
    assert.equal(message.value, expected.value);
    assert.deepEqual(headers_of(message), expected.headers);
  }
  const last_seq = new Map<string, number>();
  const key_partition = new Map<string, number>();
  for (const message of received) {
    const seq = Number(message.headers.get('seq'));
    assert.equal(seq, (last_seq.get(message.key) ?? -1) + 1, `order of key ${message.key}`);
    last_seq.set(message.key, seq);
    assert.equal(
      key_partition.get(message.key) ?? message.partition,
      message.partition,
      `key ${message.key} stays on one partition`,
    );
    key_partition.set(message.key, message.partition);
  }
}

test('admin: create, list, describe and delete topics', { timeout: TEST_TIMEOUT_MS }, async () => {
  await with_broker(async (broker, cleanup) => {
    const admin = admin_client(broker, cleanup);
    const orders_id = await create_topic(admin, 'orders', 3);
    const audit_id = await create_topic(admin, 'audit', 1);
    assert.notEqual(orders_id, audit_id);
    assert.notEqual(orders_id, '00000000-0000-0000-0000-000000000000', 'CreateTopics v7 answers with the topic id');

    await assert.rejects(admin.createTopics({ topics: ['orders'], partitions: 3, replicas: 1 }), (error: Error) => {
      assert.match(
        JSON.stringify(error, (_, v) => (typeof v === 'bigint' ? String(v) : v)) + String(error),
        /already exists|TOPIC_ALREADY_EXISTS|36/i,
      );
      return true;
    });

    const topics = await admin.listTopics();
    assert.deepEqual([...topics].sort(), ['audit', 'orders']);

    const metadata = await admin.metadata({ topics: ['orders', 'audit'] });
    assert.equal(metadata.brokers.size, 1);
    const [node_id, node] = [...metadata.brokers.entries()][0]!;
    assert.equal(`${node!.host}:${node!.port}`, broker.bootstrap);
    const orders = metadata.topics.get('orders')!;
    assert.equal(orders.id, orders_id);
    assert.equal(orders.partitionsCount, 3);
    assert.deepEqual(
      orders.partitions.map((p) => p.leader),
      [node_id, node_id, node_id],
    );
    assert.equal(metadata.topics.get('audit')!.partitionsCount, 1);
    assert.equal(metadata.topics.get('audit')!.id, audit_id);

    const configs = await admin.describeConfigs({
      resources: [{ resourceType: 2, resourceName: 'orders', configurationKeys: ['cleanup.policy', 'retention.ms'] }],
    });
    assert.equal(configs.length, 1);
    const values = Object.fromEntries(configs[0]!.configs.map((c) => [c.name, c.value]));
    assert.equal(values['cleanup.policy'], 'delete');
    assert.ok(values['retention.ms'] !== undefined);

    // DescribeLogDirs: the broker's data directory with the partitions asked for.
    const [dirs] = await admin.describeLogDirs({ topics: [{ name: 'orders', partitions: [0, 2] }] });
    const dir = dirs!.results[0]!;
    assert.equal(dir.logDir, broker.data_dir);
    assert.deepEqual(
      dir.topics.map((t) => [t.name, t.partitions.map((p) => p.partitionIndex)]),
      [['orders', [0, 2]]],
    );
    assert.ok(Number(dir.usableBytes) > 0, 'usable bytes of the directory');
    assert.ok(Number(dir.totalBytes) >= Number(dir.usableBytes), 'the size of its file system');

    // OffsetDelete: one committed offset of a group without members goes, the other stays.
    const offsets = [0, 1].map((partition) => ({ partition, offset: 5n }));
    await admin.alterConsumerGroupOffsets({
      groupId: 'offset-del',
      topics: [{ name: 'orders', partitionOffsets: offsets }],
    });
    await admin.deleteConsumerGroupOffsets({
      groupId: 'offset-del',
      topics: [{ name: 'orders', partitionIndexes: [0] }],
    });
    const [left] = await admin.listConsumerGroupOffsets({ groups: ['offset-del'] });
    const committed = left!.topics.flatMap((t) => t.partitions.map((p) => [p.partitionIndex, p.committedOffset]));
    assert.deepEqual(
      committed.filter(([, offset]) => offset !== -1n),
      [[1, 5n]],
    );

    await admin.deleteTopics({ topics: ['audit'] });
    await until(WAIT_MS, 'audit deleted', async () => !(await admin.listTopics()).includes('audit'));
    assert.deepEqual(await admin.listTopics(), ['orders']);
  });
});

test(
  '1,000 keyed messages with headers through a consumer group, committed exactly once',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_broker(async (broker, cleanup) => {
      const topic = 'events';
      const group = 'interop-group';
      const admin = admin_client(broker, cleanup);
      await create_topic(admin, topic, 3);

      const producer = producer_client(broker, cleanup);
      const sent = keyed_messages(topic, 'a', 1_000, 37);
      await send_all(producer, sent);

      const manual_commits: ConsumeOptions<string, string, string, string> = {
        topics: [topic],
        mode: 'committed',
        fallbackMode: 'earliest',
        autocommit: false,
      };
      const consumer = group_consumer(broker, cleanup, group, 'interop-consumer-1');
      const stream = await within(WAIT_MS, 'consume', consumer.consume(manual_commits));
      const received: StringMessage[] = [];
      stream.on('data', (message) => received.push(message));
      const stream_errors: Error[] = [];
      stream.on('error', (error) => stream_errors.push(error));
      await until(
        WAIT_MS,
        'all 1,000 received',
        () => received.length >= sent.length || stream_errors.length > 0,
        () => `(${received.length})`,
      );
      assert.deepEqual(stream_errors, []);
      // Nothing beyond the 1,000 may arrive (no duplicates): give further fetches a moment.
      await new Promise((resolve) => setTimeout(resolve, 500));
      check_received(sent, received);

      // Commit the last message of every partition (the client commits offset + 1).
      const last = new Map<number, StringMessage>();
      for (const message of received) last.set(message.partition, message);
      assert.equal(last.size, 3, 'keys spread over all three partitions');
      await within(WAIT_MS, 'commit', Promise.all([...last.values()].map((message) => message.commit())));

      const expected_commits = [0, 1, 2].map((p) => last.get(p)!.offset + 1n);
      const committed = await consumer.listCommittedOffsets({ topics: [{ topic, partitions: [0, 1, 2] }] });
      assert.deepEqual(committed.get(topic), expected_commits);
      const high = await consumer.listOffsets({ topics: [topic] });
      assert.deepEqual(high.get(topic), expected_commits, 'committed offsets are the high watermarks');

      const listed = await admin.listConsumerGroupOffsets({ groups: [group] });
      assert.equal(listed.length, 1);
      const partitions = listed[0]!.topics.find((t) => t.name === topic)!.partitions;
      assert.deepEqual(
        partitions.map((p) => [p.partitionIndex, p.committedOffset]).sort((a, b) => Number(a[0]) - Number(b[0])),
        expected_commits.map((offset, p) => [p, offset]),
      );

      const described = (await admin.describeGroups({ groups: [group] })).get(group)!;
      assert.equal(described.state, 'Stable');
      assert.equal(described.protocolType, 'consumer');
      assert.equal(described.members.size, 1);

      await within(WAIT_MS, 'stream close', stream.close());
      await within(WAIT_MS, 'consumer close', consumer.close());

      // A second consumer of the same group starts at the commits: it gets only what comes after.
      const after = keyed_messages(topic, 'b', 30, 7);
      await send_all(producer, after);
      const second = await group_member(broker, cleanup, group, 'interop-consumer-2', manual_commits, 'second');
      await until(
        WAIT_MS,
        'the 30 new messages received',
        () => second.received.length >= after.length,
        () => `(${second.received.length})`,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      check_received(after, second.received);
      await within(WAIT_MS, 'stream close (second)', second.stream.close());
    });
  },
);

type Member = Awaited<ReturnType<typeof group_member>>;

/** The partitions of `topic` assigned to a member. */
function owned(member: Member, topic: string): number[] {
  return (member.consumer.assignments ?? []).filter((a) => a.topic === topic).flatMap((a) => a.partitions);
}

/**
 * Starts a second member of `group` (`join`) next to `first` and waits for the rebalance: both
 * members assigned, disjoint, covering all partitions, in a new generation, and the group Stable.
 */
async function rebalance_to_two(
  admin: Admin,
  group: string,
  topic: string,
  first: Member,
  join: () => Promise<Member>,
): Promise<Member> {
  const generation_before = first.consumer.generationId;
  const second = await join();
  const assignments = () =>
    `first ${first.consumer.generationId}: ${owned(first, topic)}; ` +
    `second ${second.consumer.generationId}: ${owned(second, topic)}`;
  await until(
    WAIT_MS,
    'both members assigned, disjoint, covering all partitions',
    () => {
      const a = owned(first, topic);
      const b = owned(second, topic);
      const same_generation = first.consumer.generationId === second.consumer.generationId;
      return same_generation && a.length > 0 && b.length > 0 && [...a, ...b].sort().join() === '0,1,2';
    },
    () => `(${assignments()})`,
  );
  assert.ok(first.consumer.generationId > generation_before, 'the rebalance started a new generation');
  // A fetch the first member sent before the rebalance (it long-polls for maxWaitTime) may still be
  // waiting and still name partitions it has since lost; the client would deliver what it returns
  // (at-least-once across a rebalance). Let one fetch of each member finish: the next ones are
  // built from the new assignment.
  const fetched = Promise.all([once_fetched(first.stream), once_fetched(second.stream)]);
  await within(WAIT_MS, 'a fetch round after the rebalance', fetched);
  const described = (await admin.describeGroups({ groups: [group] })).get(group)!;
  assert.equal(described.state, 'Stable');
  const client_ids = [...described.members.values()].map((m) => m.clientId).sort();
  assert.deepEqual(client_ids, ['interop-member-1', 'interop-member-2']);
  return second;
}

/** Once both members' commits landed, `second` leaves and `first` takes every partition back. */
async function rebalance_to_one(topic: string, first: Member, second: Member): Promise<void> {
  await until(WAIT_MS, 'both members commit', () => commits_cover_all(second.consumer, topic));
  const generation_two = first.consumer.generationId;
  await within(WAIT_MS, 'second stream close', second.stream.close());
  await within(WAIT_MS, 'second member close', second.consumer.close());
  await until(
    WAIT_MS,
    'first member owns every partition again',
    () => first.consumer.generationId > generation_two && [...owned(first, topic)].sort().join() === '0,1,2',
    () => `(${first.consumer.generationId}: ${owned(first, topic)})`,
  );
  await within(WAIT_MS, 'a fetch round after the second rebalance', once_fetched(first.stream));
}

test(
  'a second consumer joins: the group rebalances and the two share new messages without loss',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_broker(async (broker, cleanup) => {
      const topic = 'shared';
      const group = 'interop-rebalance';
      const admin = admin_client(broker, cleanup);
      await create_topic(admin, topic, 3);
      const producer = producer_client(broker, cleanup);

      const consume_options: ConsumeOptions<string, string, string, string> = {
        topics: [topic],
        mode: 'committed',
        fallbackMode: 'earliest',
        autocommit: 100,
      };
      const first = await group_member(broker, cleanup, group, 'interop-member-1', consume_options, 'first');
      assert.deepEqual(
        first.consumer.assignments?.map((a) => [a.topic, [...a.partitions].sort()]),
        [[topic, [0, 1, 2]]],
        'a lone member owns every partition',
      );

      const before = keyed_messages(topic, 'before', 300, 11);
      await send_all(producer, before);
      await until(
        WAIT_MS,
        'first member receives the first 300',
        () => first.received.length >= before.length,
        () => `(${first.received.length})`,
      );
      check_received(before, first.received);
      // Autocommit runs every 100 ms; wait until the commits cover everything received.
      await until(WAIT_MS, 'first member commits', () => commits_cover_all(first.consumer, topic));

      // The second member joins; the first rejoins on its next heartbeat and the partitions split.
      const second = await rebalance_to_two(admin, group, topic, first, () =>
        group_member(broker, cleanup, group, 'interop-member-2', consume_options, 'second'),
      );

      // After the rebalance neither member re-reads committed messages; new ones go to their owner.
      const after = keyed_messages(topic, 'after', 300, 11);
      await send_all(producer, after);
      const new_first = () => first.received.slice(before.length);
      await until(
        WAIT_MS,
        'the members receive the next 300 between them',
        () => new_first().length + second.received.length >= after.length,
        () => `(first ${new_first().length}, second ${second.received.length})`,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      check_received(after, [...new_first(), ...second.received]);
      assert.ok(new_first().length > 0 && second.received.length > 0, 'both members receive messages');
      for (const { partition } of new_first()) {
        assert.ok(owned(first, topic).includes(partition), `first member got partition ${partition}`);
      }
      for (const { partition } of second.received) {
        assert.ok(owned(second, topic).includes(partition), `second member got partition ${partition}`);
      }

      // The second member leaves once both members' commits landed; the first takes every partition
      // back and continues from the second's commits.
      await rebalance_to_one(topic, first, second);
      const received_so_far = first.received.length;
      const last = keyed_messages(topic, 'last', 300, 11);
      await send_all(producer, last);
      await until(
        WAIT_MS,
        'first member receives the last 300',
        () => first.received.length - received_so_far >= last.length,
        () => `(${first.received.length - received_so_far})`,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      check_received(last, first.received.slice(received_so_far));

      await within(WAIT_MS, 'first stream close', first.stream.close());
    });
  },
);
