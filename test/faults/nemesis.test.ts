// Each fault of the fault suite has its effect, seen from outside the broker it hits: a killed
// broker's port refuses, a paused one is stopped, a network fault drops exactly the links it
// names, a degraded one sends through a throttling queue, a stepped clock shows in the broker's
// own log times, a full disk refuses writes until freed, and corrupt, cut or lost tails are really
// in the files, noticed by recovery and repaired by fetching. One lab cluster (3 brokers and etcd
// in network namespaces) for the whole file. Needs root, iproute2, nftables, etcd and
// libfaketime; a failure under CI when one is missing.
import { setTimeout as sleep } from 'node:timers/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { crc32c } from '@node-rs/crc32';
import type { Kafka } from 'kafkajs';
import { LEASE_TTL_MS, LabCluster, etcd_missing, faketime_missing, sweep_disks } from '../../faults/lab_cluster.ts';
import { type Nemesis, batches_in, nemeses, segment_files } from '../../faults/nemesis.ts';
import { network_missing, sweep } from '../../faults/net.ts';
import { TOPIC, create_topic, lab_kafka, wait_for_full_isr } from '../../faults/workload.ts';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { Sluice } from '../../src/sdk/index.ts';
import { connect_from } from '../support/lab_probe.ts';
import { send_produce } from '../cluster/cluster_support.ts';

const missing = (await network_missing()) ?? etcd_missing() ?? faketime_missing();
if (missing && process.env.CI === 'true') throw new Error(`the fault suite cannot run under CI: ${missing}`);

const run = promisify(execFile);
const LAB = 202;
const KAFKA_PORT = 9092;
const ETCD_PORT = 2379;
const NOT_LEADER_OR_FOLLOWER = 6;
/** Every choice a nemesis makes falls on the first candidate: broker 1. */
const first = () => 0;
const nemesis = (name: string): Nemesis => nemeses(LEASE_TTL_MS).find((n) => n.name === name)!;

let cluster: LabCluster;
let kafka: Kafka;
let dir: string;

before(async () => {
  if (missing) return;
  await sweep();
  sweep_disks();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-nemesis-'));
  cluster = await LabCluster.start(LAB, 3, dir);
  kafka = lab_kafka(cluster.bootstrap, 'nemesis-test');
  await create_topic(kafka);
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  for (let i = 0; i < 30; i++)
    await producer.send({ topic: TOPIC, acks: -1, messages: [0, 1, 2].map((p) => ({ partition: p, value: `v${i}` })) });
  await producer.disconnect();
});

after(async () => {
  if (missing) return;
  await cluster?.stop();
  // The brokers' logs stay (a few MB in the system's temporary folder), for a failure's sake.
  process.stdout.write(`# broker logs and data in ${dir}\n`);
});

/** One acks=1 Produce of one record straight to broker `node_id`: its error code. */
async function produce_at(node_id: number, topic: string, partition: number, value_bytes = 16) {
  const address = cluster.brokers.get(node_id)!.address;
  const connection = await Connection.connect(address, KAFKA_PORT, { request_timeout_ms: 10_000 });
  try {
    return (await send_produce(connection, topic, ['p'.repeat(value_bytes)], 1, partition)).error_code;
  } finally {
    connection.close();
  }
}

/** A partition of the fault topic that broker `node_id` leads, waiting for one. */
async function led_by(node_id: number): Promise<number> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    for (let tries = 0; tries < 60; tries++) {
      const { topics } = await admin.fetchTopicMetadata({ topics: [TOPIC] });
      const found = topics[0]!.partitions.find((p) => p.leader === node_id);
      if (found) return found.partitionId;
      await sleep(500);
    }
    throw new Error(`broker ${node_id} leads no partition of ${TOPIC}`);
  } finally {
    await admin.disconnect();
  }
}

const log_of = (host: string) => fs.readFileSync(path.join(dir, `${host}.log`), 'utf8');
const port_of = (host: string) => (host === 'etcd' ? ETCD_PORT : KAFKA_PORT);

test(
  'kill: the broker is gone (its port refuses) until healed; its partitions fail over before its lease ends',
  { skip: missing ?? false, timeout: 60_000 },
  async () => {
    await wait_for_full_isr(kafka, 3);
    const led = await led_by(1);
    const killed_ms = Date.now();
    const fault = await nemesis('kill').start(cluster, first);
    const address = cluster.brokers.get(1)!.address;
    assert.equal((await connect_from(cluster.lab, 'b2', address, KAFKA_PORT, 2000)).result, 'ECONNREFUSED');
    const admin = kafka.admin();
    await admin.connect();
    let leader = 1;
    while (leader === 1 && Date.now() - killed_ms < 10_000) {
      const { topics } = await admin.fetchTopicMetadata({ topics: [TOPIC] }).catch(() => ({ topics: [] }));
      leader = topics[0]?.partitions.find((p) => p.partitionId === led)?.leader ?? 1;
      if (leader === 1) await sleep(50);
    }
    await admin.disconnect();
    const failover_ms = Date.now() - killed_ms;
    // A follower's refused fetch gets the dead broker's lease revoked (src/cluster/dead_peers.ts).
    assert.ok(failover_ms < LEASE_TTL_MS, `a new leader after ${failover_ms} ms; the lease is ${LEASE_TTL_MS} ms`);
    await fault.heal();
    assert.equal((await connect_from(cluster.lab, 'b2', address, KAFKA_PORT, 2000)).result, 'ok');
  },
);

test('pause: the broker process is stopped until healed', { skip: missing ?? false }, async () => {
  const fault = await nemesis('pause').start(cluster, first);
  const pid = cluster.brokers.get(1)!.child!.pid!;
  const state = () => fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]![0];
  // A signal is delivered after kill() returns: a thread running on the other core stops a moment later.
  const settled = async (stopped: boolean) => {
    for (let i = 0; i < 100 && (state() === 'T') !== stopped; i++) await sleep(10);
    return state();
  };
  assert.equal(await settled(true), 'T');
  await fault.heal();
  assert.notEqual(await settled(false), 'T');
});

test('network faults drop exactly the links they name, both ways', { skip: missing ?? false }, async () => {
  const names = ['etcd', 'b1', 'b2', 'b3'];
  for (const name of ['isolate', 'split', 'bridge', 'etcd_cut']) {
    const fault = await nemesis(name).start(cluster, first);
    try {
      assert.ok(fault.links && fault.links.length > 0, `${name} cuts something`);
      const is_cut = (a: string, b: string) =>
        fault.links!.some(([x, y]) => (x === a && y === b) || (x === b && y === a));
      for (const from of names) {
        for (const to of names.filter((n) => n !== from)) {
          const { result } = await connect_from(cluster.lab, from, cluster.lab.host(to).address, port_of(to), 700);
          assert.equal(result, is_cut(from, to) ? 'timeout' : 'ok', `${fault.what}: ${from} → ${to}`);
        }
      }
    } finally {
      await fault.heal();
    }
    const [a, b] = fault.links![0]!;
    assert.equal((await connect_from(cluster.lab, a, cluster.lab.host(b).address, port_of(b), 2000)).result, 'ok');
  }
});

test('degrade: one broker sends through a slow, lossy queue until healed', { skip: missing ?? false }, async () => {
  const qdisc = async (host: string) => {
    const { namespace, device } = cluster.lab.host(host);
    const { stdout } = await run('ip', ['netns', 'exec', namespace, 'tc', 'qdisc', 'show', 'dev', device]);
    return stdout;
  };
  const fault = await nemesis('degrade').start(cluster, first);
  try {
    const { host, rate_kbit } = fault.degraded!;
    assert.equal(host, 'b1');
    assert.match(await qdisc(host), /tbf .*rate 256Kbit/, `${fault.what}: its queue throttles`);
    assert.doesNotMatch(await qdisc('b2'), /tbf/, 'only that broker');
    assert.equal(rate_kbit, 256);
  } finally {
    await fault.heal();
  }
  assert.doesNotMatch(await qdisc('b1'), /tbf/, 'healed');
  // What a degraded queue and the random loss do to traffic is test/faults/net.test.ts's part.
});

test(
  'clock: the broker lives on the stepped time; a leader stepped back still gives up on time ' +
    '(leader_with_its_clock_stepped_back_steps_down_on_time)',
  { skip: missing ?? false, timeout: 60_000 },
  async () => {
    await wait_for_full_isr(kafka, 3);
    const partition = await led_by(1);
    const fault = await nemesis('clock').start(cluster, first);
    assert.match(fault.what, /set to -120$/);
    const b1 = cluster.brokers.get(1)!;
    // Cut off the moment its clock steps back, as an NTP step before a network fault would.
    await cluster.lab.cut(['etcd', 'b2', 'b3'].map((other) => ['b1', other] as const));
    try {
      await sleep(LEASE_TTL_MS + 2000); // the step shows within a second; the lease ends on time
      assert.equal(await produce_at(1, TOPIC, partition), NOT_LEADER_OR_FOLLOWER, 'still leading after its lease');
      const lost = log_of('b1')
        .split('\n')
        .filter((line) => line.includes('lost the etcd lease'))
        .at(-1);
      assert.ok(lost, 'the broker said it lost its lease');
      const logged_ms = (JSON.parse(lost) as { time: number }).time;
      const behind_ms = Date.now() - logged_ms;
      assert.ok(behind_ms > 110_000 && behind_ms < 130_000, `its log is ${behind_ms} ms behind, not 120 s`);
    } finally {
      await cluster.lab.heal();
      await fault.heal();
    }
    assert.equal(b1.child?.exitCode, null, 'the broker is still running');
  },
);

test(
  'full disk: writes fail with ENOSPC, the broker stays up, and writes resume once freed',
  { skip: missing ?? false, timeout: 60_000 },
  async () => {
    await wait_for_full_isr(kafka, 3);
    const partition = await led_by(1);
    const b1 = cluster.brokers.get(1)!;
    const fault = await nemesis('full_disk').start(cluster, first);
    try {
      assert.throws(() => fs.writeFileSync(path.join(b1.data_dir, 'probe'), Buffer.alloc(4096)), { code: 'ENOSPC' });
      // 16 KiB: more than the free part of the segment's last page, which a full tmpfs still takes.
      assert.notEqual(await produce_at(1, TOPIC, partition, 16 * 1024), 0, 'a write on the full disk is refused');
      assert.equal(b1.child?.exitCode, null, 'the broker is still running');
    } finally {
      await fault.heal();
    }
    let code = -1;
    for (let tries = 0; tries < 40 && code !== 0; tries++) {
      code = await produce_at(1, TOPIC, partition);
      if (code !== 0) await sleep(250);
    }
    assert.equal(code, 0, 'writes resume once space is back');
  },
);

test(
  'full disk on the only live broker: it stays up, retrying the roles and coordinators it cannot take up yet',
  { skip: missing ?? false, timeout: 90_000 },
  async () => {
    await wait_for_full_isr(kafka, 3);
    // Share-group state to load on taking over: a queue consumer accepts a few records.
    const sluice = new Sluice({ brokers: cluster.bootstrap, clientId: 'nemesis-queue' });
    const queue = sluice.queueConsumer({ groupId: 'nemesis-queue' });
    await queue.subscribe({ topics: [TOPIC] });
    let accepted = 0;
    await queue.run({ eachMessage: async () => void accepted++ });
    while (accepted < 5) await sleep(100);
    await queue.disconnect();

    const b1 = cluster.brokers.get(1)!;
    const log_before = log_of('b1').length;
    const fault = await nemesis('full_disk').start(cluster, first);
    try {
      // Broker 1 alone, its disk full: it must take over every partition and coordinator.
      await cluster.kill(2);
      await cluster.kill(3);
      await sleep(LEASE_TTL_MS + 5000);
      assert.equal(b1.child?.exitCode, null, 'broker 1 stopped on a full disk');
      assert.match(log_of('b1').slice(log_before), /coordinator could not start here|could not take up the role/);
    } finally {
      await fault.heal();
      await cluster.start_broker(2);
      await cluster.start_broker(3);
    }
    await wait_for_full_isr(kafka, 3);
  },
);

/** The newest segment of each partition of the fault topic on broker 1: its bytes. */
const newest_segments = () =>
  segment_files(cluster.brokers.get(1)!.data_dir, TOPIC).map((files) => fs.readFileSync(files.at(-1)!));
const crc_failures = (file: Buffer) =>
  batches_in(file).filter(({ at, bytes }) => crc32c(file.subarray(at + 21, at + bytes)) !== file.readUInt32BE(at + 17))
    .length;

for (const [name, changed] of [
  [
    'corrupt',
    (before: Buffer[], now: Buffer[]) =>
      now.some((file, i) => crc_failures(file) > 0 && file.length === before[i]!.length),
  ],
  ['truncate', (before: Buffer[], now: Buffer[]) => now.some((file, i) => file.length < before[i]!.length)],
  ['lost_writes', (before: Buffer[], now: Buffer[]) => now.every((file, i) => file.length < before[i]!.length)],
] as const) {
  test(
    `${name}: the files change while the broker is down; recovery cuts them and the replica catches up`,
    { skip: missing ?? false, timeout: 90_000 },
    async () => {
      await wait_for_full_isr(kafka, 3);
      const before_bytes = newest_segments();
      const log_before = log_of('b1').length;
      const fault = await nemesis(name).start(cluster, first);
      assert.ok(changed(before_bytes, newest_segments()), `${fault.what}: the files are not as the fault says`);
      await fault.heal();
      const since = log_of('b1').slice(log_before);
      assert.match(since, /truncating log tail that failed recovery checks/);
      if (name === 'corrupt') assert.match(since, /"why":"crc"/);
      await wait_for_full_isr(kafka, 3);
    },
  );
}
