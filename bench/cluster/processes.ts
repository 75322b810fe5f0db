// The replicated produce benchmark's processes and directories: every broker, etcd and temporary
// directory it starts is tracked so that it is removed at the end, also on errors and on
// SIGINT/SIGTERM; and the CPU time a process has used, from /proc.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { start_broker_process, type BrokerProcess } from '../../test/support/broker_process.ts';
import type { EtcdProcess } from '../../test/support/etcd.ts';
import { STOP_LIMIT_MS, say, within } from './support.ts';

const live_brokers = new Set<BrokerProcess>();
export const live_etcds = new Set<EtcdProcess>();
export const temp_dirs = new Set<string>();

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU seconds of a process so far, or NaN when it is gone. */
export function cpu_seconds(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

export async function start_broker(
  data_dir: string,
  port: number,
  extra: string[],
  env: NodeJS.ProcessEnv,
  durability = 'fsync',
): Promise<BrokerProcess> {
  const broker = await start_broker_process({
    data_dir,
    port,
    args: ['--durability', durability, '--http', 'off', ...extra],
    env,
  });
  live_brokers.add(broker);
  return broker;
}

export async function stop_broker(broker: BrokerProcess): Promise<void> {
  try {
    await within(broker.stop(), STOP_LIMIT_MS, 'broker stop');
  } catch {
    await broker.kill().catch(() => undefined);
  } finally {
    live_brokers.delete(broker);
  }
}

export async function stop_etcd(etcd: EtcdProcess): Promise<void> {
  await etcd.stop().catch(() => undefined);
  live_etcds.delete(etcd);
}

export async function cleanup(): Promise<void> {
  await Promise.all([...live_brokers].map((broker) => stop_broker(broker)));
  for (const etcd of live_etcds) await stop_etcd(etcd);
  kill_stray_children();
  remove_temp_dirs();
}

/**
 * Child processes of this one that are still running: a broker or etcd whose start timed out is
 * never handed back by its helper, so it is found here by its parent pid.
 */
function kill_stray_children(): void {
  let entries: string[] = [];
  try {
    entries = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return;
  }
  for (const name of entries) {
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid) process.kill(Number(name), 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

export function remove_temp_dirs(): void {
  for (const dir of temp_dirs) fs.rmSync(dir, { recursive: true, force: true });
  temp_dirs.clear();
}

/** Last resort on a signal or an exit that skipped `cleanup`: kill what is left, synchronously. */
function kill_everything_now(): void {
  for (const broker of live_brokers) broker.child.kill('SIGKILL');
  for (const etcd of live_etcds) {
    etcd.child.kill('SIGCONT');
    etcd.child.kill('SIGKILL');
  }
  kill_stray_children();
  for (const dir of temp_dirs) fs.rmSync(dir, { recursive: true, force: true });
}

/** On exit, SIGINT and SIGTERM nothing the benchmark started is left behind. */
export function clean_up_on_exit(): void {
  process.on('exit', kill_everything_now);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      say(`\n${signal}: stopping`);
      within(cleanup(), STOP_LIMIT_MS, 'cleanup')
        .catch(() => undefined)
        .finally(() => process.exit(130));
    });
  }
}
