// KIP-848 consumer groups against a real `sluice start` child process: @platformatic/kafka with
// groupProtocol 'consumer' and the SDK's groupProtocol option in one group. Members that come and
// go move only the partitions that change owner (nobody is left with nothing in between), the
// group is described by ConsumerGroupDescribe, and what they committed is where a classic-protocol
// consumer of the same group starts. Every wait is bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Admin as PltAdmin, Consumer as PltConsumer, stringDeserializers, type Message } from '@platformatic/kafka';
import { ConfigResourceTypes, Sluice, type Consumer } from '../../src/sdk/index.ts';
import { AssignerProtocol } from '../../src/sdk/assignors.ts';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';

const TEST_TIMEOUT_MS = 120_000;
const WAIT_MS = 30_000;
const TOPIC = 'ledger';
const GROUP = 'reconcilers';
const PARTITIONS = 6;
const CLIENT = { timeout: 5_000, connectTimeout: 5_000, retries: 5, retryDelay: 200 } as const;

type Cleanup = Array<() => Promise<unknown>>;

async function until(ms: number, what: string, check: () => boolean | Promise<boolean>, detail = () => '') {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms: ${what} ${detail()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A platformatic consumer on the consumer protocol; its assignment sizes are sampled every 20 ms. */
async function platformatic_member(broker: BrokerProcess, cleanup: Cleanup, client_id: string) {
  const consumer = new PltConsumer<string, string, string, string>({
    clientId: client_id,
    groupId: GROUP,
    groupProtocol: 'consumer',
    bootstrapBrokers: [broker.bootstrap],
    deserializers: stringDeserializers,
    maxWaitTime: 200,
    ...CLIENT,
  });
  const received: Array<Message<string, string, string, string>> = [];
  const sizes: number[] = [];
  const sampler = setInterval(() => {
    const owned = consumer.assignments?.reduce((n, a) => n + a.partitions.length, 0);
    if (owned !== undefined) sizes.push(owned);
  }, 20);
  cleanup.push(async () => {
    clearInterval(sampler);
    await consumer.close(true);
  });
  const stream = await consumer.consume({
    topics: [TOPIC],
    mode: 'committed',
    fallbackMode: 'earliest',
    autocommit: 100,
  });
  stream.on('data', (message) => received.push(message));
  const owned = () => (consumer.assignments ?? []).flatMap((a) => a.partitions).sort((a, b) => a - b);
  return { consumer, stream, received, sizes, owned };
}

/** An SDK consumer on the consumer protocol, recording every assignment change. */
async function sdk_member(sluice: Sluice, cleanup: Cleanup, events: string[]) {
  const consumer: Consumer = sluice.consumer({
    groupId: GROUP,
    groupProtocol: 'consumer',
    groupRemoteAssignor: 'uniform',
    maxWaitTimeInMs: 200,
    onPartitionsAssigned: (tps) => void events.push(`+${tps.flatMap((t) => t.partitions).join(',')}`),
    onPartitionsRevoked: (tps) => void events.push(`-${tps.flatMap((t) => t.partitions).join(',')}`),
  });
  const received: string[] = [];
  cleanup.push(() => consumer.disconnect());
  await consumer.subscribe({ topics: [TOPIC], fromBeginning: true });
  await consumer.run({
    autoCommitInterval: 100,
    eachMessage: async ({ message }) => void received.push(message.value!.toString()),
  });
  return { consumer, received };
}

async function send(sluice: Sluice, cleanup: Cleanup, prefix: string, count: number): Promise<string[]> {
  const producer = sluice.producer({ idempotent: true });
  cleanup.push(() => producer.disconnect());
  const values = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  await producer.send({ topic: TOPIC, acks: -1, messages: values.map((value, i) => ({ key: `k${i % 17}`, value })) });
  return values;
}

async function with_broker(body: (broker: BrokerProcess, sluice: Sluice, cleanup: Cleanup) => Promise<void>) {
  const broker = await start_broker_process({
    args: ['--group-consumer-heartbeat-interval-ms', '200', '--group-consumer-session-timeout-ms', '10000'],
  });
  const sluice = new Sluice({ brokers: [broker.bootstrap], clientId: 'kip848' });
  const cleanup: Cleanup = [];
  try {
    await body(broker, sluice, cleanup);
  } catch (error) {
    if (error instanceof Error) error.message += `\n--- broker output ---\n${broker.output()}`;
    throw error;
  } finally {
    for (const close of cleanup.reverse()) await close().catch(() => undefined);
    assert.equal(await broker.stop(), 0, broker.output());
    fs.rmSync(broker.data_dir, { recursive: true, force: true });
  }
}

type Platformatic = Awaited<ReturnType<typeof platformatic_member>>;
type SdkMember = Awaited<ReturnType<typeof sdk_member>>;

/** A second member joins: member a gives up half its partitions and keeps reading the others. */
async function join_second(sluice: Sluice, cleanup: Cleanup, a: Platformatic, events: string[]): Promise<SdkMember> {
  const admin = sluice.admin();
  cleanup.push(() => admin.disconnect());
  const held_alone = a.sizes.length;
  const b = await sdk_member(sluice, cleanup, events);
  const stable = async () => {
    const [group] = (await admin.describeConsumerGroups([GROUP])).groups;
    return group!.state === 'Stable' && group!.members.length === 2;
  };
  await until(WAIT_MS, 'the group settles with two members', stable);
  const shared_b = sdk_owned(b);
  assert.equal(a.owned().length, 3);
  assert.deepEqual([...a.owned(), ...shared_b].sort(), [0, 1, 2, 3, 4, 5]);
  assert.ok(!a.sizes.slice(held_alone).includes(0), `member a was left with nothing: ${a.sizes.join(',')}`);
  assert.deepEqual(events, [`+${shared_b.join(',')}`]);
  const [group] = (await admin.describeConsumerGroups([GROUP])).groups;
  assert.equal(group!.assignor, 'uniform');
  assert.ok(group!.groupEpoch >= 2 && group!.assignmentEpoch === group!.groupEpoch);
  for (const member of group!.members) {
    assert.equal(member.memberEpoch, group!.groupEpoch);
    assert.deepEqual(member.assignment, member.targetAssignment);
    assert.deepEqual(member.subscribedTopics, [TOPIC]);
  }
  // DescribeGroups, the classic API, shows the members' assignments in the classic format.
  const [described] = (await admin.describeGroups([GROUP])).groups;
  assert.equal(described!.protocolType, 'consumer');
  const assigned = described!.members.flatMap(
    (m) => AssignerProtocol.MemberAssignment.decode(m.memberAssignment)?.assignment[TOPIC] ?? [],
  );
  assert.deepEqual(assigned.sort(), [0, 1, 2, 3, 4, 5]);
  return b;
}

const sdk_owned = (b: SdkMember) =>
  b.consumer
    .assignments()
    .flatMap((t) => t.partitions)
    .sort((x, y) => x - y);

/** Member b leaves: a takes its partitions back without giving up its own, and reads on. */
async function leave_second(sluice: Sluice, cleanup: Cleanup, a: Platformatic, b: SdkMember, events: string[]) {
  const shared_b = sdk_owned(b);
  const before_leave = a.sizes.length;
  await b.consumer.disconnect();
  await until(WAIT_MS, 'member a owns every partition again', () => a.owned().length === PARTITIONS);
  assert.ok(!a.sizes.slice(before_leave).includes(0), 'member a kept its partitions while b left');
  assert.deepEqual(events.at(-1), `-${shared_b.join(',')}`);
  const a_before = a.received.length;
  const third = await send(sluice, cleanup, 'third', 300);
  await until(WAIT_MS, 'member a reads the last 300', () => a.received.length >= a_before + 300);
  const values = a.received.slice(a_before).map((m) => m.value);
  assert.deepEqual(values.sort(), [...third].sort());
}

/** Their commits cover everything: a classic consumer of the group reads only what comes next. */
async function classic_reads_on(sluice: Sluice, cleanup: Cleanup) {
  const classic = sluice.consumer({ groupId: GROUP });
  cleanup.push(() => classic.disconnect());
  const after: string[] = [];
  await classic.subscribe({ topics: [TOPIC], fromBeginning: true });
  await classic.run({ eachMessage: async ({ message }) => void after.push(message.value!.toString()) });
  const fourth = await send(sluice, cleanup, 'fourth', 100);
  await until(WAIT_MS, 'the classic consumer reads the next 100', () => after.length >= 100);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.deepEqual(after.sort(), [...fourth].sort(), `re-read: ${after.filter((v) => !v.startsWith('fourth'))}`);
}

/** The group's own heartbeat interval (a group config); its session timeout is the broker's. */
async function group_configs(admin: ReturnType<Sluice['admin']>) {
  const resource = { type: ConfigResourceTypes.GROUP, name: GROUP };
  await admin.incrementalAlterConfigs({
    resources: [
      { ...resource, configEntries: [{ name: 'consumer.heartbeat.interval.ms', value: '150', operation: 0 }] },
    ],
  });
  const described = await admin.describeConfigs({
    resources: [{ ...resource, configNames: ['consumer.heartbeat.interval.ms', 'consumer.session.timeout.ms'] }],
  });
  const values = described.resources[0]!.configEntries.map((e) => [e.configName, e.configValue]);
  assert.deepEqual(values, [
    ['consumer.session.timeout.ms', '10000'],
    ['consumer.heartbeat.interval.ms', '150'],
  ]);
  const refused = admin.incrementalAlterConfigs({
    resources: [{ ...resource, configEntries: [{ name: 'consumer.session.timeout.ms', value: '5', operation: 0 }] }],
  });
  await assert.rejects(refused, /INVALID_CONFIG/);
}

test(
  'platformatic and SDK members share a KIP-848 group incrementally; a classic consumer reads on from their commits',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_broker(async (broker, sluice, cleanup) => {
      const admin = sluice.admin();
      cleanup.push(() => admin.disconnect());
      await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: PARTITIONS }] });
      await group_configs(admin);
      const first = await send(sluice, cleanup, 'first', 600);
      const a = await platformatic_member(broker, cleanup, 'member-a');
      await until(WAIT_MS, 'member a reads the first 600', () => a.received.length >= 600);
      assert.deepEqual(a.owned(), [0, 1, 2, 3, 4, 5]);
      assert.deepEqual(new Set(a.received.map((m) => m.value)), new Set(first));

      // ListGroups v5 names the group's type, and filters by it.
      const plt_admin = new PltAdmin({ clientId: 'kip848-admin', bootstrapBrokers: [broker.bootstrap], ...CLIENT });
      cleanup.push(() => plt_admin.close());
      const listed = await plt_admin.listGroups({ types: ['consumer'] });
      assert.deepEqual(
        [...listed.values()].map((g) => [g.id, g.groupType, g.state]),
        [[GROUP, 'consumer', 'Stable']],
      );
      assert.equal((await plt_admin.listGroups({ types: ['classic'] })).size, 0);

      // A classic member cannot join while the group is on the consumer protocol.
      const classic_early = sluice.consumer({ groupId: GROUP });
      await classic_early.subscribe({ topics: [TOPIC] });
      await assert.rejects(classic_early.run({ eachMessage: async () => undefined }), /INCONSISTENT_GROUP_PROTOCOL/);
      await classic_early.disconnect();

      const events: string[] = [];
      const b = await join_second(sluice, cleanup, a, events);
      const second = await send(sluice, cleanup, 'second', 600);
      const a_second = () => a.received.slice(600).map((m) => m.value);
      await until(
        WAIT_MS,
        'the two members read the next 600 between them',
        () => a_second().length + b.received.length >= 600,
        () => `a ${a_second().length}, b ${b.received.length}`,
      );
      assert.deepEqual([...a_second(), ...b.received].sort(), [...second].sort());

      await leave_second(sluice, cleanup, a, b, events);
      await a.stream.close();
      await a.consumer.close(true);
      await classic_reads_on(sluice, cleanup);
    });
  },
);
