// The machine's own limits, measured in the same run as the brokers: fsync'd sequential write
// bandwidth (the ceiling for durable ingest) and loopback TCP bandwidth (the ceiling for any
// networked client), plus CPU and memory sampling of server processes.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';

export interface DiskLimit {
  write_bytes: number;
  writes_per_fsync: number;
  mb_per_s: number;
  fsyncs_per_s: number;
}

/** A fresh file, `bytes` written in `write_bytes` writes with an fdatasync every `writes_per_fsync`. */
export function disk_limit(dir: string, bytes: number, write_bytes: number, writes_per_fsync: number): DiskLimit {
  const file = path.join(dir, `disk-limit-${process.pid}-${write_bytes}-${writes_per_fsync}`);
  const chunk = Buffer.alloc(write_bytes, 0x5a);
  const fd = fs.openSync(file, 'w');
  const writes = Math.max(1, Math.floor(bytes / write_bytes));
  let fsyncs = 0;
  const started = performance.now();
  try {
    for (let i = 1; i <= writes; i++) {
      fs.writeSync(fd, chunk);
      if (i % writes_per_fsync === 0 || i === writes) {
        fs.fdatasyncSync(fd);
        fsyncs++;
      }
    }
  } finally {
    fs.closeSync(fd);
    fs.rmSync(file, { force: true });
  }
  const seconds = (performance.now() - started) / 1000;
  return {
    write_bytes,
    writes_per_fsync,
    mb_per_s: (writes * write_bytes) / 1e6 / seconds,
    fsyncs_per_s: fsyncs / seconds,
  };
}

/** Loopback TCP: one connection streaming 64 KiB writes for `duration_ms`. */
export async function loopback_mb_per_s(duration_ms: number): Promise<number> {
  const chunk = Buffer.alloc(64 * 1024, 0x33);
  let received = 0;
  const server = net.createServer((socket) => socket.on('data', (data: Buffer) => (received += data.length)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const client = net.connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => client.once('connect', resolve));
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const pump = () => {
      while (performance.now() - started < duration_ms) {
        if (!client.write(chunk)) return void client.once('drain', pump);
      }
      resolve();
    };
    pump();
  });
  const elapsed = performance.now() - started;
  client.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return received / 1e6 / (elapsed / 1000);
}

export interface MachineFacts {
  cpu_model: string;
  cores: number;
  memory_gib: number;
  node: string;
  kernel: string;
  filesystem: string;
}

export function machine_facts(dir: string): MachineFacts {
  let filesystem = 'unknown';
  try {
    filesystem = execFileSync('df', ['-T', dir], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .pop()!
      .split(/\s+/)
      .slice(0, 2)
      .join(' ');
  } catch {
    // df is missing: leave it unknown
  }
  return {
    cpu_model: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memory_gib: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kernel: `${os.type()} ${os.release()}`,
    filesystem,
  };
}

const CLOCK_TICKS_PER_S = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** CPU seconds (user + system) a process has used so far; 0 when it is gone. */
export function cpu_seconds(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds (user + system) the harness process has used so far: all its threads, plus the
 * children it has reaped (utime, stime, cutime, cstime: fields 14–17 of /proc/self/stat), so a
 * kcat child counts once it has exited. Long-lived children (the brokers) are reaped only when
 * stopped, between steps, and do not count. The process's own part is taken from
 * process.cpuUsage(), the same kernel accounting in microseconds rather than clock ticks (10 ms),
 * which a step of a few tens of milliseconds would not resolve.
 */
export function client_cpu_seconds(): number {
  const own = process.cpuUsage();
  let children = 0;
  try {
    const stat = fs.readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    children = (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_S;
  } catch {
    // no /proc: children are not counted
  }
  return (own.user + own.system) / 1e6 + children;
}

export function rss_bytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples the servers' RSS while a workload runs and measures the CPU time it cost them. */
export class ServerSampler {
  private readonly cpu_before: number;
  private peak = 0;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pids: () => number[],
    interval_ms = 100,
  ) {
    this.cpu_before = this.cpu();
    this.sample();
    this.timer = setInterval(() => this.sample(), interval_ms);
  }

  private cpu(): number {
    return this.pids().reduce((sum, pid) => sum + cpu_seconds(pid), 0);
  }

  private sample(): void {
    this.peak = Math.max(
      this.peak,
      this.pids().reduce((sum, pid) => sum + rss_bytes(pid), 0),
    );
  }

  stop(): { cpu_s: number; peak_rss_bytes: number } {
    clearInterval(this.timer);
    this.sample();
    return { cpu_s: this.cpu() - this.cpu_before, peak_rss_bytes: this.peak };
  }
}
