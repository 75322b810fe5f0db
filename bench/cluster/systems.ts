// The two systems the replicated produce benchmark compares, each started fresh: one broker, and
// an etcd with three brokers; and the topic each run writes to, ready once every ISR is full.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Sluice } from '../../src/sdk/index.ts';
import { new_data_dir, type BrokerProcess } from '../../test/support/broker_process.ts';
import { free_port, start_etcd, type EtcdProcess, ETCD_BINARY } from '../../test/support/etcd.ts';
import { live_etcds, start_broker, temp_dirs } from './processes.ts';
import {
  type ClusterBenchOptions,
  ISR_LIMIT_MS,
  READY_LIMIT_MS,
  STOP_LIMIT_MS,
  f0,
  say,
  wait_until,
  within,
} from './support.ts';

export const SYSTEM_IDS = ['single', 'cluster'] as const;
export type SystemId = (typeof SYSTEM_IDS)[number];

export const NODES = 3;
export const CLUSTER_CONFIG = { cluster: { leaseTtlMs: 3000, replicationFactor: 3, replicaLagTimeMaxMs: 10_000 } };
export const MIN_INSYNC = 2;

export interface RunningSystem {
  id: SystemId;
  label: string;
  bootstrap: string[];
  /** Node id (1 for the single broker) to its process. */
  brokers: Map<number, BrokerProcess>;
  etcd: EtcdProcess | null;
  replication_factor: number;
  topic_configs: Array<{ name: string; value: string }>;
}

export function start_system(id: SystemId, options: ClusterBenchOptions): Promise<RunningSystem> {
  return id === 'single' ? start_single(options) : start_cluster(options);
}

async function start_single(options: ClusterBenchOptions): Promise<RunningSystem> {
  const data_dir = new_data_dir('bench-cluster-single');
  temp_dirs.add(data_dir);
  const broker = await start_broker(data_dir, await free_port(), [], options.broker_env);
  return {
    id: 'single',
    label: 'single node',
    bootstrap: [broker.bootstrap],
    brokers: new Map([[1, broker]]),
    etcd: null,
    replication_factor: 1,
    topic_configs: [],
  };
}

async function start_cluster(options: ClusterBenchOptions): Promise<RunningSystem> {
  if (!ETCD_BINARY) throw new Error('etcd is not installed (Debian package etcd-server)');
  const etcd = await start_etcd();
  live_etcds.add(etcd);
  const config_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-cluster-config-'));
  temp_dirs.add(config_dir);
  const config_file = path.join(config_dir, 'config.json');
  fs.writeFileSync(config_file, JSON.stringify(CLUSTER_CONFIG));
  const nodes: Array<{ id: number; port: number; data_dir: string }> = [];
  for (let id = 1; id <= NODES; id++) {
    const data_dir = new_data_dir(`bench-cluster-node${id}`);
    temp_dirs.add(data_dir);
    nodes.push({ id, port: await free_port(), data_dir });
  }
  // All at once; every broker that did start is tracked (live_brokers) even when another failed.
  const started = await Promise.allSettled(
    nodes.map((node) =>
      start_broker(
        node.data_dir,
        node.port,
        ['--etcd', etcd.endpoint, '--node-id', String(node.id), '--config', config_file],
        options.broker_env,
        options.cluster_durability,
      ),
    ),
  );
  const failure = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
  const brokers = new Map(started.map((s, i) => [nodes[i]!.id, (s as PromiseFulfilledResult<BrokerProcess>).value]));
  const durability = options.cluster_durability;
  return {
    id: 'cluster',
    label: durability === 'fsync' ? `${NODES}-node cluster` : `${NODES}-node cluster (durability ${durability})`,
    bootstrap: [...brokers.values()].map((b) => b.bootstrap),
    brokers,
    etcd,
    replication_factor: NODES,
    topic_configs: [{ name: 'min.insync.replicas', value: String(MIN_INSYNC) }],
  };
}

/**
 * Creates the topic and waits until every partition has a leader and a full ISR (so acks=all waits
 * for every replica from the first message measured). Returns how many partitions each node leads.
 */
export async function create_topic(
  system: RunningSystem,
  sluice: Sluice,
  topic: string,
  partitions: number,
): Promise<Map<number, number>> {
  const admin = sluice.admin();
  await within(admin.connect(), READY_LIMIT_MS, 'admin connect');
  try {
    if (system.id === 'cluster') {
      await wait_until(
        `${NODES} brokers registered`,
        READY_LIMIT_MS,
        async () => (await admin.describeCluster()).brokers.length === NODES,
      );
    }
    await wait_until(`topic ${topic} created`, READY_LIMIT_MS, async () => {
      await admin.createTopics({
        topics: [
          {
            topic,
            numPartitions: partitions,
            replicationFactor: system.replication_factor,
            configEntries: system.topic_configs,
          },
        ],
        timeout: 10_000,
      });
      return true;
    });
    let leaders = new Map<number, number>();
    const replicas = system.replication_factor;
    const waited = await wait_until(
      `every partition of ${topic} with ${replicas} in its ISR`,
      ISR_LIMIT_MS,
      async () => {
        const found = (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]?.partitions ?? [];
        if (found.length !== partitions) return false;
        if (!found.every((p) => p.leader >= 0 && p.isr.length === replicas && p.replicas.length === replicas))
          return false;
        leaders = new Map();
        for (const p of found) leaders.set(p.leader, (leaders.get(p.leader) ?? 0) + 1);
        return true;
      },
    );
    if (system.id === 'cluster') {
      const per_node = [...leaders]
        .sort((a, b) => a[0] - b[0])
        .map(([node, count]) => `${node}:${count}`)
        .join(' ');
      say(
        `  ${topic}: ${partitions} partitions, ISR of ${replicas} everywhere after ${f0(waited)} ms; ` +
          `leaders per node: ${per_node}`,
      );
    }
    return leaders;
  } finally {
    await within(admin.disconnect(), STOP_LIMIT_MS, 'admin disconnect').catch(() => undefined);
  }
}
