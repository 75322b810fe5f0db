// Interop with librdkafka's KIP-848 consumer (group.protocol=consumer), run by hand:
// `npm run interop:librdkafka`. Debian's librdkafka (2.0.2) predates the protocol; a newer one is
// built here from the source bundled in @confluentinc/kafka-javascript (offline, linked against
// the system's OpenSSL and zlib), once, into .tmp/librdkafka-js. That build takes minutes on two
// cores, which .ci/run's budget has no room for, so this is a script and not a test.
//
// What it checks, against a `sluice start` process: two librdkafka members and an SDK member
// (groupProtocol 'consumer') share one group; as each joins, the members already there keep
// reading the partitions they keep (never left with none); every record is read once; the
// group's commits are where a classic-protocol consumer of the group starts. Exits 1 on a failure.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Sluice } from '../src/sdk/index.ts';
import { start_broker_process } from '../test/support/broker_process.ts';

const VERSION = '1.10.1';
const DIR = path.resolve('.tmp/librdkafka-js');
const TOPIC = 'interop-848';
const GROUP = 'interop-848-group';
const WAIT_MS = 60_000;

interface RdMember {
  name: string;
  read: string[];
  sizes: number[];
  consumer: { disconnect(): Promise<void>; assignment(): Array<{ topic: string; partition: number }> };
  sampler: NodeJS.Timeout;
}

/** The binding, built from source once (CKJS_LINKING=dynamic: no downloads). */
function binding(): { KafkaJS: { Kafka: new (config: unknown) => { consumer(config: unknown): never } } } {
  const entry = path.join(DIR, 'node_modules/@confluentinc/kafka-javascript');
  if (!fs.existsSync(path.join(entry, 'build/Release/confluent-kafka-javascript.node'))) {
    fs.mkdirSync(DIR, { recursive: true });
    if (!fs.existsSync(path.join(DIR, 'package.json'))) fs.writeFileSync(path.join(DIR, 'package.json'), '{}');
    console.log(`building @confluentinc/kafka-javascript ${VERSION} (librdkafka from source; minutes)`);
    execFileSync('npm', ['install', '--no-save', `@confluentinc/kafka-javascript@${VERSION}`], {
      cwd: DIR,
      stdio: 'inherit',
      // The headers of the Node running this (there is no download of them here), and no
      // prebuilt binary: librdkafka is built from the bundled source, linked dynamically.
      env: {
        ...process.env,
        CKJS_LINKING: 'dynamic',
        npm_config_build_from_source: 'true',
        npm_config_nodedir: path.resolve(process.execPath, '../..'),
      },
    });
  }
  return createRequire(path.join(DIR, 'index.js'))('@confluentinc/kafka-javascript');
}

async function until(what: string, check: () => boolean | Promise<boolean>, detail = () => ''): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what} ${detail()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`failed: ${what}`);
  console.log(`ok: ${what}`);
}

async function rd_member(kafka: { consumer(config: unknown): never }, name: string): Promise<RdMember> {
  const consumer = kafka.consumer({
    kafkaJS: { groupId: GROUP, fromBeginning: true, autoCommitInterval: 200 },
    'group.protocol': 'consumer',
    'client.id': name,
  }) as unknown as RdMember['consumer'] & {
    connect(): Promise<void>;
    subscribe(s: unknown): Promise<void>;
    run(r: unknown): Promise<void>;
  };
  const read: string[] = [];
  await consumer.connect();
  await consumer.subscribe({ topics: [TOPIC] });
  await consumer.run({
    eachMessage: async ({ message }: { message: { value: Buffer } }) => void read.push(String(message.value)),
  });
  const sizes: number[] = [];
  const sampler = setInterval(() => sizes.push(consumer.assignment().length), 20);
  const member: RdMember = { name, read, sizes, consumer, sampler };
  return member;
}

async function group_state(sluice: Sluice): Promise<{ state: string; sizes: number[] }> {
  const admin = sluice.admin();
  try {
    const [group] = (await admin.describeConsumerGroups([GROUP])).groups;
    const sizes = group!.members.map((m) => m.assignment.reduce((n, t) => n + t.partitions.length, 0));
    return { state: group!.state, sizes: sizes.sort() };
  } finally {
    await admin.disconnect();
  }
}

async function stable_with(sluice: Sluice, sizes: string): Promise<void> {
  let last = '';
  await until(
    `the group stable with assignments ${sizes}`,
    async () => {
      const group = await group_state(sluice);
      last = `${group.state} ${group.sizes.join(',')}`;
      return group.state === 'Stable' && group.sizes.join(',') === sizes;
    },
    () => last,
  );
}

async function send(sluice: Sluice, prefix: string, count: number): Promise<string[]> {
  const producer = sluice.producer({ idempotent: true });
  const values = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  await producer.send({ topic: TOPIC, acks: -1, messages: values.map((value, i) => ({ key: `k${i % 13}`, value })) });
  await producer.disconnect();
  return values;
}

async function main(): Promise<void> {
  const { KafkaJS } = binding();
  const broker = await start_broker_process({ args: ['--group-consumer-heartbeat-interval-ms', '250'] });
  const sluice = new Sluice({ brokers: [broker.bootstrap], clientId: 'interop' });
  const kafka = new KafkaJS.Kafka({ kafkaJS: { brokers: [broker.bootstrap], logLevel: 1 } });
  const members: RdMember[] = [];
  try {
    const admin = sluice.admin();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 6 }] });
    await admin.disconnect();
    const first = await send(sluice, 'first', 600);
    members.push(await rd_member(kafka, 'rd-1'));
    await until('librdkafka member 1 reads the first 600', () => members[0]!.read.length >= 600);
    await stable_with(sluice, '6');
    const alone = members[0]!.sizes.length;

    const sdk_read: string[] = [];
    const sdk = sluice.consumer({ groupId: GROUP, groupProtocol: 'consumer', maxWaitTimeInMs: 200 });
    await sdk.subscribe({ topics: [TOPIC], fromBeginning: true });
    await sdk.run({
      autoCommitInterval: 200,
      eachMessage: async ({ message }) => void sdk_read.push(String(message.value)),
    });
    await stable_with(sluice, '3,3');
    check(
      !members[0]!.sizes.slice(alone).includes(0),
      'librdkafka member 1 kept 3 partitions while the SDK member joined',
    );

    const before = members[0]!.sizes.length;
    members.push(await rd_member(kafka, 'rd-2'));
    await stable_with(sluice, '2,2,2');
    check(!members[0]!.sizes.slice(before).includes(0), 'librdkafka member 1 kept partitions while member 2 joined');

    const second = await send(sluice, 'second', 600);
    const all = () => [...members.flatMap((m) => m.read), ...sdk_read];
    await until(
      'the three members read the next 600',
      () => all().length >= 1200,
      () => `${all().length}`,
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    check(all().sort().join() === [...first, ...second].sort().join(), 'every record read exactly once');
    for (const member of members) check(member.read.length > 0, `${member.name} read records`);

    await sdk.disconnect();
    for (const member of members) {
      clearInterval(member.sampler);
      await member.consumer.disconnect();
    }
    const classic = sluice.consumer({ groupId: GROUP });
    const after: string[] = [];
    await classic.subscribe({ topics: [TOPIC], fromBeginning: true });
    await classic.run({ eachMessage: async ({ message }) => void after.push(String(message.value)) });
    const third = await send(sluice, 'third', 100);
    await until('the classic consumer reads the next 100', () => after.length >= 100);
    await new Promise((resolve) => setTimeout(resolve, 500));
    check(after.sort().join() === third.sort().join(), 'a classic consumer starts where the KIP-848 members committed');
    await classic.disconnect();
    const warnings = broker
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '' && !/^sluice (ready|stopped)/.test(line));
    check(warnings.length === 0, `the broker printed no warnings${warnings.length ? `: ${warnings.join(' | ')}` : ''}`);
    console.log('librdkafka KIP-848 interop: passed');
  } finally {
    for (const member of members) clearInterval(member.sampler);
    await broker.stop();
    fs.rmSync(broker.data_dir, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
