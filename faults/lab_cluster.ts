// A Sluice cluster inside the network lab: one etcd member and N brokers, each in its own
// namespace with its own address, each broker's output kept in the run's results folder. Brokers
// can be killed (SIGKILL), restarted as themselves (same node id, data directory and address),
// paused (SIGSTOP) and resumed (SIGCONT); the lab cuts their network.
import fs from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { NetworkLab } from './net.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SLUICE_BIN = path.join(ROOT, 'bin', 'sluice.js');
const ETCD_BINARY = ['/usr/bin/etcd', '/usr/local/bin/etcd'].find((file) => fs.existsSync(file)) ?? null;
const KAFKA_PORT = 9092;
const ETCD_PORT = 2379;
const READY_TIMEOUT_MS = 30_000;
/** The brokers' lease: a pause longer than this costs the paused broker its leaderships. */
export const LEASE_TTL_MS = 2000;

export function etcd_missing(): string | null {
  return ETCD_BINARY ? null : 'etcd is not installed (Debian package etcd-server)';
}

export interface LabBroker {
  node_id: number;
  host: string;
  address: string;
  child: ChildProcess | null;
  paused: boolean;
}

/** Waits until `child` printed `pattern` (in its log file), or fails. */
function ready(child: ChildProcess, log: fs.WriteStream, pattern: RegExp, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => reject(new Error(`${what} not ready within ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
    const look = (chunk: Buffer) => {
      seen = (seen + chunk.toString()).slice(-4096);
      if (pattern.test(seen)) {
        clearTimeout(timer);
        resolve();
      }
    };
    for (const stream of [child.stdout!, child.stderr!]) {
      stream.on('data', look);
      stream.pipe(log, { end: false });
    }
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${what} exited with ${code} before it was ready`));
    });
  });
}

export class LabCluster {
  readonly brokers = new Map<number, LabBroker>();
  private etcd: ChildProcess | null = null;

  private constructor(
    readonly lab: NetworkLab,
    private readonly dir: string,
  ) {}

  /** Starts etcd and `count` brokers in a new lab numbered `lab_number`; results go to `dir`. */
  static async start(lab_number: number, count: number, dir: string): Promise<LabCluster> {
    const names = ['etcd', ...Array.from({ length: count }, (_, i) => `b${i + 1}`)];
    const lab = await NetworkLab.create(lab_number, names);
    const cluster = new LabCluster(lab, dir);
    try {
      fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
      fs.writeFileSync(
        path.join(dir, 'config.json'),
        JSON.stringify({ cluster: { leaseTtlMs: LEASE_TTL_MS, replicationFactor: Math.min(3, count) } }),
      );
      await cluster.start_etcd();
      for (let id = 1; id <= count; id++) {
        cluster.brokers.set(id, {
          node_id: id,
          host: `b${id}`,
          address: lab.host(`b${id}`).address,
          child: null,
          paused: false,
        });
        await cluster.start_broker(id);
      }
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** HOST:PORT of every broker, for clients in the harness. */
  get bootstrap(): string[] {
    return [...this.brokers.values()].map((b) => `${b.address}:${KAFKA_PORT}`);
  }

  private log(name: string): fs.WriteStream {
    return fs.createWriteStream(path.join(this.dir, `${name}.log`), { flags: 'a' });
  }

  private async start_etcd(): Promise<void> {
    const address = this.lab.host('etcd').address;
    const client = `http://${address}:${ETCD_PORT}`;
    const peer = `http://${address}:2380`;
    const args = ['--name', 'lab', '--data-dir', path.join(this.dir, 'etcd'), '--listen-client-urls', client];
    args.push('--advertise-client-urls', client, '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer);
    args.push('--initial-cluster', `lab=${peer}`, '--heartbeat-interval', '50', '--election-timeout', '500');
    this.etcd = this.lab.spawn('etcd', ETCD_BINARY!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    await ready(this.etcd, this.log('etcd'), /ready to serve client requests|serving client traffic/, 'etcd');
  }

  /** Starts (or restarts, as itself) broker `node_id`. */
  async start_broker(node_id: number): Promise<void> {
    const broker = this.brokers.get(node_id)!;
    const etcd = `http://${this.lab.host('etcd').address}:${ETCD_PORT}`;
    const args = [SLUICE_BIN, 'start', '--data', path.join(this.dir, 'data', `node${node_id}`)];
    args.push('--kafka', `${broker.address}:${KAFKA_PORT}`, '--http', 'off', '--log-level', 'info');
    args.push('--etcd', etcd, '--node-id', String(node_id), '--config', path.join(this.dir, 'config.json'));
    const child = this.lab.spawn(broker.host, process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], cwd: ROOT });
    broker.child = child;
    broker.paused = false;
    await ready(child, this.log(broker.host), /ready kafka=/, `broker ${node_id}`);
  }

  /** SIGKILL: a crash; the broker's process is gone until start_broker. */
  async kill(node_id: number): Promise<void> {
    const broker = this.brokers.get(node_id)!;
    const child = broker.child;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
    broker.child = null;
    broker.paused = false;
  }

  pause(node_id: number): void {
    const broker = this.brokers.get(node_id)!;
    if (broker.child && !broker.paused) broker.child.kill('SIGSTOP');
    broker.paused = true;
  }

  resume(node_id: number): void {
    const broker = this.brokers.get(node_id)!;
    if (broker.child && broker.paused) broker.child.kill('SIGCONT');
    broker.paused = false;
  }

  /** Every broker running and resumed, the network whole. */
  async restore(): Promise<void> {
    await this.lab.heal();
    for (const broker of this.brokers.values()) {
      if (broker.paused) this.resume(broker.node_id);
      if (!broker.child) await this.start_broker(broker.node_id);
    }
  }

  async stop(): Promise<void> {
    for (const broker of this.brokers.values()) {
      this.resume(broker.node_id);
      await this.kill(broker.node_id).catch(() => undefined);
    }
    if (this.etcd && this.etcd.exitCode === null) {
      const exited = new Promise((resolve) => this.etcd!.once('exit', resolve));
      this.etcd.kill('SIGKILL');
      await exited;
    }
    await this.lab.destroy();
  }
}
