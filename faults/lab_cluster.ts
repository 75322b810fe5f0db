// A Sluice cluster inside the network lab: one etcd member and N brokers, each in its own
// namespace with its own address, each broker's output kept in the run's results folder. Brokers
// can be killed (SIGKILL), restarted as themselves (same node id, data directory and address),
// paused (SIGSTOP) and resumed (SIGCONT); the lab cuts their network.
import fs from 'node:fs';
import path from 'node:path';
import { type ChildProcess, execFileSync } from 'node:child_process';
import { NetworkLab } from './net.ts';
import { AMQP_PORT, type AmqpTarget } from './amqp_workload.ts';
import { PLAIN_PORT, SECURE_PORT, lab_security, type LabSecurity } from './lab_security.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const SLUICE_BIN = path.join(ROOT, 'bin', 'sluice.js');
const ETCD_BINARY = ['/usr/bin/etcd', '/usr/local/bin/etcd'].find((file) => fs.existsSync(file)) ?? null;
const ETCD_PORT = 2379;
const READY_TIMEOUT_MS = 30_000;
/** The brokers' lease: a pause longer than this costs the paused broker its leaderships. */
export const LEASE_TTL_MS = 2000;
/** Leadership goes back to preferred replicas this often: more leader changes to test. */
const REBALANCE_INTERVAL_MS = 5000;
/**
 * Checks of a half message before it goes to the unresolved topic (default 15): with the check-back
 * workload's 2 s timeout, one nobody answers is given up within seconds, during the run.
 */
const TRANSACTION_CHECKS_MAX = 3;
/** Each broker's data directory is a tmpfs of this size, so one disk can be filled on its own. */
const DISK_BYTES = 256 * 1024 * 1024;
/** libfaketime, which the clock faults run the brokers under (Debian package faketime). */
const FAKETIME_LIBRARY = ['/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1'].find((f) => fs.existsSync(f));

export function faketime_missing(): string | null {
  return FAKETIME_LIBRARY ? null : 'libfaketime is not installed (Debian package faketime)';
}

export function etcd_missing(): string | null {
  return ETCD_BINARY ? null : 'etcd is not installed (Debian package etcd-server)';
}

/** Unmounts brokers' data disks a run that died left behind (their mount points end in disk/node<id>). */
export function sweep_disks(): void {
  for (const line of fs.readFileSync('/proc/mounts', 'utf8').split('\n')) {
    const [source, mount_point] = line.split(' ');
    if (source === 'tmpfs' && mount_point && /\/disk\/node\d+$/.test(mount_point))
      execFileSync('umount', ['-l', mount_point]);
  }
}

export interface LabBroker {
  node_id: number;
  host: string;
  address: string;
  child: ChildProcess | null;
  paused: boolean;
  /** Its data directory: a tmpfs of its own. */
  data_dir: string;
  /** What libfaketime reads as the broker's wall clock offset ("+0", "-30", "+0 x1.5"). */
  clock_file: string;
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
  /** Flags every broker starts with beside its own (none when every setting is at its default). */
  private broker_flags: string[] = [];
  /** TLS, users and ACLs (lab_security.ts); none when every setting is at its default. */
  security: LabSecurity | null = null;

  private constructor(
    readonly lab: NetworkLab,
    private readonly dir: string,
  ) {}

  /**
   * Starts etcd and `count` brokers in a new lab numbered `lab_number`; results go to `dir`. The
   * brokers run with the suite's short lease, frequent leader handback and security on, or with
   * every setting at its default (`defaults`), as a failover measurement needs.
   */
  static async start(lab_number: number, count: number, dir: string, defaults = false): Promise<LabCluster> {
    const names = ['etcd', ...Array.from({ length: count }, (_, i) => `b${i + 1}`)];
    const lab = await NetworkLab.create(lab_number, names);
    const cluster = new LabCluster(lab, dir);
    if (!defaults) {
      // The log cleaner every second: the compacted topic's segments are rewritten all through a run.
      // KIP-848 members heartbeat every second, as the classic members do.
      cluster.broker_flags = [
        '--transaction-checks-max',
        String(TRANSACTION_CHECKS_MAX),
        '--cleaner-interval-ms',
        '1000',
        '--group-consumer-heartbeat-interval-ms',
        '1000',
      ];
      const addresses = names.slice(1).map((name) => lab.host(name).address);
      cluster.security = lab_security(path.join(dir, 'security'), addresses);
    }
    const settings = defaults
      ? { replicationFactor: Math.min(3, count) }
      : {
          leaseTtlMs: LEASE_TTL_MS,
          replicationFactor: Math.min(3, count),
          leaderRebalanceIntervalMs: REBALANCE_INTERVAL_MS,
          ...cluster.security!.cluster_settings,
        };
    try {
      fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ cluster: settings }));
      await cluster.start_etcd();
      for (let id = 1; id <= count; id++) {
        const data_dir = path.join(dir, 'disk', `node${id}`);
        fs.mkdirSync(data_dir, { recursive: true });
        execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${DISK_BYTES}`, 'tmpfs', data_dir]);
        const clock_file = path.join(dir, `clock-b${id}`);
        fs.writeFileSync(clock_file, '+0\n');
        cluster.brokers.set(id, {
          node_id: id,
          host: `b${id}`,
          address: lab.host(`b${id}`).address,
          child: null,
          paused: false,
          data_dir,
          clock_file,
        });
        await cluster.start_broker(id);
      }
    } catch (error) {
      await cluster.stop();
      throw error;
    }
    return cluster;
  }

  /** Every broker's AMQP listener in node-id order, for the harness's AMQP clients. */
  get amqp_targets(): AmqpTarget[] {
    return [...this.brokers.values()].map((b) => ({ host: b.address, ca: this.security?.ca ?? null }));
  }

  /** HOST:PORT of every broker's PLAINTEXT listener, for clients in the harness. */
  get bootstrap(): string[] {
    return [...this.brokers.values()].map((b) => `${b.address}:${PLAIN_PORT}`);
  }

  /** HOST:PORT of every broker's SASL_SSL listener (security on). */
  get secure_bootstrap(): string[] {
    return [...this.brokers.values()].map((b) => `${b.address}:${SECURE_PORT}`);
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
    if (broker.child && broker.child.exitCode === null) return; // two faults healed: already back
    const etcd = `http://${this.lab.host('etcd').address}:${ETCD_PORT}`;
    const args = [SLUICE_BIN, 'start', '--data', broker.data_dir];
    if (this.security) args.push(...this.security.flags(broker.address));
    else args.push('--kafka', `${broker.address}:${PLAIN_PORT}`);
    args.push('--http', 'off', '--log-level', 'info');
    // The harness's AMQP clients are not on loopback: guest is let in from anywhere here.
    args.push('--amqp', `${broker.address}:${AMQP_PORT}`, '--amqp-guest', 'anywhere');
    args.push('--etcd', etcd, '--node-id', String(node_id), '--config', path.join(this.dir, 'config.json'));
    args.push(...this.broker_flags);
    const child = this.lab.spawn(broker.host, process.execPath, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: ROOT,
      env: { ...process.env, ...clock_environment(broker.clock_file) },
    });
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

  /** Every broker killed (resumed first), etcd left running. */
  async stop_brokers(): Promise<void> {
    for (const broker of this.brokers.values()) {
      this.resume(broker.node_id);
      await this.kill(broker.node_id).catch(() => undefined);
    }
  }

  async stop(): Promise<void> {
    await this.stop_brokers();
    if (this.etcd && this.etcd.exitCode === null) {
      const exited = new Promise((resolve) => this.etcd!.once('exit', resolve));
      this.etcd.kill('SIGKILL');
      await exited;
    }
    await this.lab.destroy();
    // The data directories outlive the run in the results folder, for a look at what went wrong.
    for (const broker of this.brokers.values()) {
      const kept = path.join(this.dir, 'data', `node${broker.node_id}`);
      fs.cpSync(broker.data_dir, kept, { recursive: true });
      execFileSync('umount', [broker.data_dir]);
    }
    fs.rmSync(path.join(this.dir, 'disk'), { recursive: true, force: true });
  }
}

/**
 * The broker's wall clock is what `clock_file` says, read again every 2 s; its monotonic
 * clock stays the machine's, as it does when NTP steps a real clock (drift is faked on the wall
 * clock alone).
 */
function clock_environment(clock_file: string): Record<string, string> {
  if (!FAKETIME_LIBRARY) return {};
  return {
    LD_PRELOAD: FAKETIME_LIBRARY,
    FAKETIME_TIMESTAMP_FILE: clock_file,
    FAKETIME_CACHE_DURATION: '1',
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
    NO_FAKE_STAT: '1',
  };
}
