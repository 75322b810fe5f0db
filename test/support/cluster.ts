// A real cluster for tests: an etcd on loopback and broker processes (`sluice start --etcd`), each
// on a fixed port and data directory so a killed broker can be restarted as itself.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { type EtcdProcess, free_port, start_etcd } from './etcd.ts';
import { type BrokerProcess, new_data_dir, start_broker_process } from './broker_process.ts';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { type TcpProxy, start_tcp_proxy } from './tcp_proxy.ts';
import { METADATA } from '../../src/protocol/kafka/messages/03_metadata.ts';
import type { ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import type { TestCa } from './test_ca.ts';

export interface ClusterSettings {
  lease_ttl_ms?: number;
  replica_lag_time_max_ms?: number;
  replication_factor?: number;
  /** The controller's preferred-leader interval (the tests' default is short, so it runs often). */
  leader_rebalance_interval_ms?: number;
  /** SASL on every listener: these users, brokers logging in to each other as `inter_broker_user`. */
  sasl?: { users: Record<string, string>; inter_broker_user: string };
  /** More arguments for every broker (`--authorization`, ...). */
  args?: string[];
  /** TLS on every listener, client certificates required: the brokers' files, and what kafka() clients present. */
  tls?: { broker: TestCa; ca_file: string; client: TlsConnectionOptions };
}

interface PartitionState {
  leader: number;
  isr: number[];
  replicas: number[];
}

export interface TestCluster {
  etcd: EtcdProcess;
  /** By node id; a killed broker's entry is replaced when it restarts. */
  brokers: Map<number, BrokerProcess>;
  /** The port each broker advertises: a proxy in front of it, so tests can cut it off. */
  ports: Map<number, number>;
  /** The port each broker listens on itself, reachable whatever the proxy does. */
  direct_ports: Map<number, number>;
  proxies: Map<number, TcpProxy>;
  bootstrap: string[];
  config_file: string;
  kafka(client_id?: string): Kafka;
  start(node_id: number): Promise<BrokerProcess>;
  /** Starts one more broker (the next node id) with its own port and data directory. */
  add(): Promise<number>;
  /** Leader and ISR of a partition, as Metadata reports them (-1 while none). */
  partition(admin: Admin, topic: string, partition: number): Promise<PartitionState>;
  /** The same, asked of one broker directly (when others may not answer). */
  partition_at(node_id: number, topic: string, partition: number): Promise<PartitionState>;
  wait_for(what: string, check: () => Promise<boolean>, timeout_ms?: number): Promise<number>;
  stop(): Promise<void>;
}

/** Writes the brokers' config file (and the SASL users file) into a new directory; the arguments for both. */
function write_config(count: number, settings: ClusterSettings): { config_file: string; security_args: string[] } {
  const config_file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cluster-')), 'config.json');
  fs.writeFileSync(
    config_file,
    JSON.stringify({
      cluster: {
        leaseTtlMs: settings.lease_ttl_ms ?? 2000,
        replicationFactor: settings.replication_factor ?? Math.min(3, count),
        replicaLagTimeMaxMs: settings.replica_lag_time_max_ms ?? 5000,
        leaderRebalanceIntervalMs: settings.leader_rebalance_interval_ms ?? 3000,
        ...(settings.sasl ? { interBrokerUser: settings.sasl.inter_broker_user } : {}),
      },
    }),
  );
  const security_args: string[] = [];
  if (settings.sasl) {
    const users_file = path.join(path.dirname(config_file), 'users.json');
    fs.writeFileSync(users_file, JSON.stringify({ users: settings.sasl.users }), { mode: 0o600 });
    security_args.push('--sasl-users', users_file);
  }
  if (settings.tls) {
    const { broker, ca_file } = settings.tls;
    security_args.push('--tls-cert', broker.cert_file, '--tls-key', broker.key_file, '--tls-ca', ca_file);
    security_args.push('--tls-client-auth', 'required');
  }
  security_args.push(...(settings.args ?? []));
  return { config_file, security_args };
}

function cluster_kafka(ports: Map<number, number>, client_id: string, ssl?: TlsConnectionOptions): Kafka {
  return new Kafka({
    clientId: client_id,
    ...(ssl ? { ssl } : {}),
    brokers: [...ports.values()].map((port) => `127.0.0.1:${port}`),
    logLevel: logLevel.NOTHING,
    retry: { initialRetryTime: 100, maxRetryTime: 500, retries: 120 },
    connectionTimeout: 1000,
    requestTimeout: 10_000,
  });
}

async function partition_via_admin(admin: Admin, topic: string, partition: number): Promise<PartitionState> {
  const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
  const found = metadata.topics[0]!.partitions.find((p) => p.partitionId === partition)!;
  return { leader: found.leader, isr: found.isr, replicas: found.replicas };
}

/** A partition's state as the broker listening on `port` reports it in Metadata. */
async function partition_at_port(port: number, topic: string, partition: number): Promise<PartitionState> {
  const connection = await Connection.connect('127.0.0.1', port, { request_timeout_ms: 5000 });
  try {
    const request = {
      topics: [{ name: topic }],
      allow_auto_topic_creation: false,
      include_topic_authorized_operations: false,
    };
    const response = (await connection.call(METADATA, 12, request)) as {
      topics: Array<{
        partitions: Array<{ partition_index: number; leader_id: number; isr_nodes: number[]; replica_nodes: number[] }>;
      }>;
    };
    const found = response.topics[0]!.partitions.find((p) => p.partition_index === partition)!;
    return { leader: found.leader_id, isr: found.isr_nodes, replicas: found.replica_nodes };
  } finally {
    connection.close();
  }
}

/** Polls `check` until it is true (errors count as not yet); returns how long that took. */
async function wait_for(what: string, check: () => Promise<boolean>, timeout_ms = 30_000): Promise<number> {
  const started = Date.now();
  for (;;) {
    try {
      if (await check()) return Date.now() - started;
    } catch {
      // not yet
    }
    if (Date.now() - started > timeout_ms) throw new Error(`${what}: not within ${timeout_ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Ports tried for a broker whose chosen port another process took first. */
const PORT_ATTEMPTS = 3;

export async function start_cluster(count: number, settings: ClusterSettings = {}): Promise<TestCluster> {
  const etcd = await start_etcd();
  const { config_file, security_args } = write_config(count, settings);
  const ports = new Map<number, number>();
  const direct_ports = new Map<number, number>();
  const proxies = new Map<number, TcpProxy>();
  const data_dirs = new Map<number, string>();
  const prepare = async (id: number) => {
    direct_ports.set(id, await free_port());
    const proxy = await start_tcp_proxy(direct_ports.get(id)!);
    proxies.set(id, proxy);
    ports.set(id, proxy.port);
    data_dirs.set(id, new_data_dir(`node${id}`));
  };
  for (let id = 1; id <= count; id++) await prepare(id);
  const brokers = new Map<number, BrokerProcess>();
  const cluster: TestCluster = {
    etcd,
    brokers,
    ports,
    direct_ports,
    proxies,
    bootstrap: [...ports.values()].map((port) => `127.0.0.1:${port}`),
    config_file,
    kafka: (client_id = 'cluster-test') => cluster_kafka(ports, client_id, settings.tls?.client),
    start: async (node_id) => {
      const advertised = `127.0.0.1:${ports.get(node_id)!}`;
      const args = ['--etcd', etcd.endpoint, '--node-id', String(node_id), '--advertise', advertised];
      args.push('--config', config_file, '--log-level', 'info', ...security_args);
      for (let attempt = 1; ; attempt++) {
        try {
          const port = direct_ports.get(node_id)!;
          const broker = await start_broker_process({ data_dir: data_dirs.get(node_id)!, port, args });
          brokers.set(node_id, broker);
          return broker;
        } catch (error) {
          // The port was free when chosen; another process took it before the broker listened
          // (tests run in parallel): another one, behind the same proxy.
          if (attempt >= PORT_ATTEMPTS || !String(error).includes('EADDRINUSE')) throw error;
          direct_ports.set(node_id, await free_port());
          proxies.get(node_id)!.retarget(direct_ports.get(node_id)!);
        }
      }
    },
    add: async () => {
      const id = ports.size + 1;
      await prepare(id);
      await cluster.start(id);
      return id;
    },
    partition: partition_via_admin,
    partition_at: (node_id, topic, partition) => partition_at_port(direct_ports.get(node_id)!, topic, partition),
    wait_for,
    stop: async () => {
      for (const broker of brokers.values()) await broker.stop().catch(() => undefined);
      for (const proxy of proxies.values()) await proxy.close();
      await etcd.stop();
      for (const dir of data_dirs.values()) fs.rmSync(dir, { recursive: true, force: true });
      fs.rmSync(path.dirname(config_file), { recursive: true, force: true });
    },
  };
  try {
    for (let id = 1; id <= count; id++) await cluster.start(id);
  } catch (error) {
    await cluster.stop();
    throw error;
  }
  return cluster;
}

/** The concatenated segment files of a partition in a data directory: its log as bytes. */
export function partition_bytes(data_dir: string, partition: string): Buffer {
  const dir = path.join(data_dir, partition);
  const files = fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.log'))
    .sort();
  return Buffer.concat(files.map((name) => fs.readFileSync(path.join(dir, name))));
}

/** The first batch where replica copies differ, each as base offset, leader epoch and CRC. */
export function first_difference(copies: Buffer[]): string {
  const batches = copies.map((copy) => {
    const out: string[] = [];
    for (let at = 0; at + 61 <= copy.length; at += copy.readInt32BE(at + 8) + 12) {
      const offset = Number(copy.readBigInt64BE(at));
      out.push(`offset ${offset} epoch ${copy.readInt32BE(at + 12)} crc ${copy.readUInt32BE(at + 17)}`);
    }
    return out;
  });
  const longest = Math.max(...batches.map((b) => b.length));
  for (let i = 0; i < longest; i++) {
    if (batches.some((b) => b[i] !== batches[0]![i])) {
      return `batch ${i}: ${batches.map((b) => b[i] ?? 'none').join(' | ')}`;
    }
  }
  return 'same batches';
}
