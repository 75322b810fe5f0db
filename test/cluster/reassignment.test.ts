// Moving partitions between brokers with `sluice topic reassign` and the admin API: onto a broker
// added to the running cluster, and back when a move cannot finish; manual assignments; broker
// configs set through one broker, in force on all; ElectLeaders. Real etcd and broker processes.
import { test } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import assert from 'node:assert/strict';
import type { Producer } from 'kafkajs';
import { ErrorCode } from '../../src/protocol/kafka/error_codes.ts';
import { Sluice } from '../../src/sdk/index.ts';
import {
  type SharedCluster,
  create_replicated_topic,
  missing,
  produce_to,
  read_until,
  run_cli,
  send_produce,
  shared_cluster,
} from './cluster_support.ts';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { ELECT_LEADERS } from '../../src/protocol/kafka/messages/43_elect_leaders.ts';

const shared = shared_cluster();

/** Messages m<from> up to m<to - 1>, twenty to a send, with acks=all. */
async function send_range(producer: Producer, topic: string, from: number, to: number) {
  for (let i = from; i < to; i += 20)
    await producer.send({
      topic,
      acks: -1,
      messages: Array.from({ length: 20 }, (_, j) => ({ value: `m${i + j}` })),
    });
}

/** Two of the three replicas gone: the ISR shrinks to the leader, and acks=all is refused. */
async function assert_acks_all_refused_below_min_isr({ cluster, admin }: SharedCluster, topic: string) {
  const now = await cluster.partition(admin, topic, 0);
  const followers = now.replicas.filter((id) => id !== now.leader);
  for (const id of followers) await cluster.brokers.get(id)!.kill();
  const leader_port = cluster.direct_ports.get(now.leader)!;
  await cluster.wait_for(
    'NOT_ENOUGH_REPLICAS',
    async () =>
      (await produce_to(leader_port, topic, ['too-few-replicas'], -1)).error_code === ErrorCode.NOT_ENOUGH_REPLICAS,
    20_000,
  );
  assert.equal((await produce_to(leader_port, topic, ['acks-one'], 1)).error_code, 0, 'acks=1 still goes through');
  for (const id of followers) await cluster.start(id);
}

test(
  'a new broker takes over a partition by reassignment; acks=all is refused below min.insync.replicas',
  { skip: missing ?? false, timeout: 180_000 },
  async () => {
    const { cluster, admin } = shared;
    const topic = 'moving';
    await create_replicated_topic(shared, topic);
    const producer = cluster.kafka('moving-producer').producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await send_range(producer, topic, 0, 200);
    const before = await cluster.partition(admin, topic, 0);
    const leaving = before.replicas.find((id) => id !== before.leader)!;
    const staying = before.replicas.filter((id) => id !== leaving);
    const added = await cluster.add();
    const wanted = [added, ...staying];
    const bootstrap = cluster.bootstrap[0]!;
    const reassign = await run_cli([
      'topic',
      'reassign',
      topic,
      '--replicas',
      wanted.join(','),
      '--bootstrap',
      bootstrap,
    ]);
    assert.equal(reassign.code, 0, reassign.stderr);
    await cluster.wait_for(
      'the partition on its new replicas',
      async () => {
        const now = await cluster.partition(admin, topic, 0);
        return JSON.stringify([...now.replicas].sort()) === JSON.stringify([...wanted].sort()) && now.isr.length === 3;
      },
      60_000,
    );
    await send_range(producer, topic, 200, 300);
    await producer.disconnect();
    await cluster.wait_for(
      `broker ${leaving} drops its copy`,
      async () => !fs.existsSync(path.join(cluster.brokers.get(leaving)!.data_dir, `${topic}-0`)),
      20_000,
    );
    const status = await run_cli(['cluster', 'status', '--json', '--bootstrap', bootstrap]);
    const described = JSON.parse(status.stdout) as {
      brokers: unknown[];
      under_replicated: unknown[];
      offline: unknown[];
    };
    assert.equal(described.brokers.length, 4);
    assert.deepEqual(described.offline, []);

    // Every message is read back through the new replica set.
    const seen = await read_until(shared, topic, 'moving-check', (values) => new Set(values).size === 300);
    assert.equal(new Set(seen).size, 300);

    await assert_acks_all_refused_below_min_isr(shared, topic);
  },
);

test(
  'a reassignment that cannot finish is cancelled: the partition goes back to its replicas from before',
  { skip: missing ?? false, timeout: 120_000 },
  async () => {
    const { cluster, admin } = shared;
    const topic = 'stuck';
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 2 }] });
    await cluster.wait_for('ISR of 2', async () => (await cluster.partition(admin, topic, 0)).isr.length === 2);
    const before = await cluster.partition(admin, topic, 0);
    const outsider = [...cluster.brokers.keys()].find((id) => !before.replicas.includes(id))!;
    // The new replica is paused before the move starts: it stays registered for a lease, long enough
    // to be accepted, and never catches up.
    const sdk = new Sluice({ brokers: cluster.bootstrap, clientId: 'stuck-admin' }).admin();
    // While the outsider is paused, nothing may ask it: metadata and the CLI go to a replica from before.
    const asked = before.replicas[0]!;
    const reachable = `127.0.0.1:${cluster.direct_ports.get(asked)!}`;
    cluster.brokers.get(outsider)!.child.kill('SIGSTOP');
    try {
      await sdk.alterPartitionReassignments({
        topics: [{ topic, partitions: [{ partition: 0, replicas: [outsider, before.replicas[0]!] }] }],
      });
      await cluster.wait_for('the move under way', async () =>
        (await cluster.partition_at(asked, topic, 0)).replicas.includes(outsider),
      );
      const leaving = before.replicas.find((id) => id !== before.replicas[0])!;
      const listed = await run_cli(['topic', 'reassign', topic, '--list', '--bootstrap', reachable]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.match(
        listed.stdout,
        new RegExp(`stuck partition 0: replicas [0-9,]+; adding ${outsider}; removing ${leaving}`),
      );
      const cancel = await run_cli(['topic', 'reassign', topic, '--cancel', '--bootstrap', reachable]);
      assert.equal(cancel.code, 0, cancel.stderr);
      assert.match(cancel.stdout, /cancelled the reassignment of stuck partition\(s\) 0/);
      const after = await cluster.partition_at(asked, topic, 0);
      assert.deepEqual([...after.replicas].sort(), [...before.replicas].sort());
      const again = await run_cli([
        'topic',
        'reassign',
        topic,
        '--cancel',
        '--partition',
        '0',
        '--bootstrap',
        reachable,
      ]);
      assert.notEqual(again.code, 0, 'nothing left to cancel');
      assert.match(again.stderr, /NO_REASSIGNMENT_IN_PROGRESS/);
      assert.match(
        (await run_cli(['topic', 'reassign', topic, '--list', '--bootstrap', reachable])).stdout,
        /no partition of stuck is being reassigned/,
      );
      const producer = cluster.kafka('stuck-producer').producer();
      await producer.connect();
      await producer.send({ topic, acks: -1, messages: [{ value: 'still served' }] });
      await producer.disconnect();
    } finally {
      cluster.brokers.get(outsider)!.child.kill('SIGCONT');
    }
  },
);

test(
  'manual assignments: CreateTopics and CreatePartitions place replicas where asked; a wrong one is refused',
  { skip: missing ?? false, timeout: 60_000 },
  async () => {
    const { cluster, admin } = shared;
    const [a, b, c] = [...cluster.brokers.keys()].sort((x, y) => x - y) as [number, number, number];
    const replicaAssignment = [
      { partition: 0, replicas: [b, c] },
      { partition: 1, replicas: [c, a] },
    ];
    await admin.createTopics({ topics: [{ topic: 'placed', replicaAssignment }] });
    await cluster.wait_for('both partitions with their replicas', async () => {
      const [p0, p1] = [await cluster.partition(admin, 'placed', 0), await cluster.partition(admin, 'placed', 1)];
      return p0.replicas.join() === `${b},${c}` && p1.replicas.join() === `${c},${a}` && p0.leader === b;
    });
    await admin.createPartitions({ topicPartitions: [{ topic: 'placed', count: 3, assignments: [[a, b]] }] });
    await cluster.wait_for(
      'the new partition on its replicas',
      async () => (await cluster.partition(admin, 'placed', 2)).replicas.join() === `${a},${b}`,
    );
    // Refusals through the SDK, whose errors carry the broker's reason (kafkajs's only the code's name).
    const sdk = new Sluice({ brokers: cluster.bootstrap, clientId: 'placing-admin' }).admin();
    const refused = async (work: Promise<unknown>, reason: RegExp) =>
      assert.rejects(work, (error: Error) => {
        assert.match(error.message, /INVALID_REPLICA_ASSIGNMENT/);
        assert.match(error.message, reason);
        return true;
      });
    const unknown = [{ partition: 0, replicas: [a, 99] }];
    await refused(sdk.createTopics({ topics: [{ topic: 'nowhere', replicaAssignment: unknown }] }), /99/);
    const twice = [{ partition: 0, replicas: [a, a] }];
    await refused(sdk.createTopics({ topics: [{ topic: 'twice', replicaAssignment: twice }] }), /twice/);
    const uneven = [
      { partition: 0, replicas: [a, b] },
      { partition: 1, replicas: [c] },
    ];
    await refused(sdk.createTopics({ topics: [{ topic: 'uneven', replicaAssignment: uneven }] }), /1 replicas/);
    const wider = [[a, b, c]];
    await refused(
      sdk.createPartitions({ topicPartitions: [{ topic: 'placed', count: 4, assignments: wider }] }),
      /2 replicas/,
    );
    assert.deepEqual(
      (await admin.listTopics()).filter((t) => ['nowhere', 'twice', 'uneven'].includes(t)),
      [],
      'nothing refused was created',
    );
    await sdk.disconnect();
  },
);

test(
  'a cluster-wide broker default set through one broker is in force on every broker; per-broker configs stay its own',
  { skip: missing ?? false, timeout: 60_000 },
  async () => {
    const { cluster, admin } = shared;
    await admin.createTopics({ topics: [{ topic: 'defaulted', numPartitions: 3, replicationFactor: 3 }] });
    const leaders = new Set<number>();
    for (let p = 0; p < 3; p++) {
      await cluster.wait_for('a leader', async () => (await cluster.partition(admin, 'defaulted', p)).leader > 0);
      leaders.add((await cluster.partition(admin, 'defaulted', p)).leader);
    }
    const sdk = new Sluice({ brokers: cluster.bootstrap, clientId: 'configs-admin' }).admin();
    const [first] = [...cluster.brokers.keys()].sort((x, y) => x - y) as [number];
    const alter = (name: string, entries: Array<{ name: string; value?: string; operation: 'SET' | 'DELETE' }>) =>
      sdk.incrementalAlterConfigs({ resources: [{ type: 4, name, configEntries: entries }] });
    await alter('', [{ name: 'message.max.bytes', value: '2000', operation: 'SET' }]);
    await alter(String(first), [{ name: 'max.connections.per.ip', value: '500', operation: 'SET' }]);
    const big = 'x'.repeat(5000);
    const refused_by_every_leader = async () => {
      for (const id of leaders) {
        const port = cluster.direct_ports.get(id)!;
        for (let partition = 0; partition < 3; partition++) {
          if ((await cluster.partition(admin, 'defaulted', partition)).leader !== id) continue;
          const connection = await Connection.connect('127.0.0.1', port);
          const answer = await send_produce(connection, 'defaulted', [big], 1, partition).finally(() =>
            connection.close(),
          );
          if (answer.error_code !== ErrorCode.MESSAGE_TOO_LARGE) return false;
        }
      }
      return true;
    };
    await cluster.wait_for('message.max.bytes in force on every leader', refused_by_every_leader, 20_000);
    const described = await admin.describeConfigs({
      resources: [...cluster.brokers.keys()].map((id) => ({
        type: 4,
        name: String(id),
        configNames: ['message.max.bytes', 'max.connections.per.ip'],
      })),
      includeSynonyms: false,
    });
    for (const resource of described.resources) {
      const by_name = new Map(resource.configEntries.map((e) => [e.configName, e]));
      assert.deepEqual(
        [by_name.get('message.max.bytes')?.configValue, by_name.get('message.max.bytes')?.configSource],
        ['2000', 3],
      );
      const own = resource.resourceName === String(first);
      assert.equal(by_name.get('max.connections.per.ip')?.configValue, own ? '500' : '0', resource.resourceName);
    }
    await alter('', [{ name: 'message.max.bytes', operation: 'DELETE' }]);
    await alter(String(first), [{ name: 'max.connections.per.ip', operation: 'DELETE' }]);
    await cluster.wait_for('the default gone everywhere', async () => !(await refused_by_every_leader()), 20_000);
    await sdk.disconnect();
  },
);

test(
  'ElectLeaders: no preferred leader while it is down; an unclean election revives a partition whose ISR died',
  { skip: missing ?? false, timeout: 120_000 },
  async () => {
    const { cluster, admin } = shared;
    const [a, b, c] = [...cluster.brokers.keys()].sort((x, y) => x - y) as [number, number, number];
    await admin.createTopics({
      topics: [{ topic: 'revived', replicaAssignment: [{ partition: 0, replicas: [a, b] }] }],
    });
    // Asked of c, which stays up (the admin client's cached brokers are killed here).
    const state = () => cluster.partition_at(c, 'revived', 0);
    await cluster.wait_for(
      'ISR of both, a leading',
      async () => (await state()).isr.length === 2 && (await state()).leader === a,
    );
    await cluster.brokers.get(b)!.kill();
    await cluster.wait_for('b out of the ISR', async () => (await state()).isr.join() === String(a));
    await cluster.brokers.get(a)!.kill();
    await cluster.wait_for('no leader', async () => (await state()).leader < 0);
    const connection = await Connection.connect('127.0.0.1', cluster.direct_ports.get(c)!, {
      request_timeout_ms: 30_000,
    });
    const elect = async (election_type: number) => {
      const response = await connection.call(ELECT_LEADERS, 2, {
        election_type,
        topic_partitions: [{ topic: 'revived', partitions: [0] }],
        timeout_ms: 30_000,
      });
      return response.replica_election_results[0]!.partition_result[0]!.error_code;
    };
    try {
      assert.equal(await elect(1), ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE, 'both replicas down');
      assert.equal(await elect(0), ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE);
      await cluster.start(b);
      assert.equal((await state()).leader, -1, 'b is out of the ISR: no clean election');
      await cluster.wait_for(
        'an unclean election, once b is registered',
        async () => (await elect(1)) === ErrorCode.NONE,
      );
      assert.equal((await state()).leader, b);
      assert.equal(await elect(1), ErrorCode.ELECTION_NOT_NEEDED, 'a live leader');
    } finally {
      connection.close();
      await cluster.start(a);
    }
  },
);
