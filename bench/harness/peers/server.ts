// A peer broker's server process on loopback: free ports, spawning it with its output in a log
// file, waiting until it is ready, stopping it (SIGTERM, then SIGKILL) and its process tree, and its
// temporary directory. Server processes still running are killed if this Node process exits.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { tail } from './install.ts';

/** How long a server may take to accept connections after it was spawned. */
export const START_TIMEOUT_MS = 60_000;

/** SIGTERM, then SIGKILL after this long. */
export const STOP_GRACE_MS = 15_000;

/** A free TCP port on 127.0.0.1 (bound, read, released). */
export async function free_port(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('could not obtain a free port'))));
    });
  });
}

/** n distinct free ports. */
export async function free_ports(n: number): Promise<number[]> {
  const ports = new Set<number>();
  for (let attempt = 0; ports.size < n && attempt < n * 20; attempt++) ports.add(await free_port());
  if (ports.size < n) throw new Error(`could not obtain ${n} distinct free ports`);
  return [...ports];
}

/** True once something accepts a TCP connection on 127.0.0.1:port. */
export async function port_accepts(port: number, timeout_ms = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeout_ms, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Server processes still running, killed with SIGKILL if this Node process exits first. */
const live_pids = new Set<number>();

let exit_hook_installed = false;

function install_exit_hook(): void {
  if (exit_hook_installed) return;
  exit_hook_installed = true;
  process.on('exit', () => {
    for (const pid of live_pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  });
}

export function track_pid(pid: number): void {
  install_exit_hook();
  live_pids.add(pid);
}

export function untrack_pid(pid: number): void {
  live_pids.delete(pid);
}

export function pid_alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie still answers kill(0); treat it as gone.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true;
  }
}

/** SIGTERM, wait up to grace_ms, then SIGKILL and wait a little more. */
export async function kill_pid(pid: number, grace_ms = STOP_GRACE_MS): Promise<void> {
  if (!pid_alive(pid)) {
    untrack_pid(pid);
    return;
  }
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    /* gone */
  }
  const term_deadline = performance.now() + grace_ms;
  while (pid_alive(pid) && performance.now() < term_deadline) await sleep(50);
  if (pid_alive(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
    const kill_deadline = performance.now() + 5000;
    while (pid_alive(pid) && performance.now() < kill_deadline) await sleep(50);
  }
  untrack_pid(pid);
}

/** Child pids of pid, from /proc (Linux). */
export function child_pids(pid: number): number[] {
  const children: number[] = [];
  try {
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        const text = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
        if (text)
          children.push(
            ...text
              .split(/\s+/)
              .map(Number)
              .filter((n) => n > 0),
          );
      } catch {
        /* task ended */
      }
    }
  } catch {
    /* process ended */
  }
  return children;
}

/** Descendants of pid (breadth first, bounded). */
export function descendant_pids(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0 && out.length < 1000) {
    const next = queue.shift()!;
    for (const child of child_pids(next)) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

export function process_name(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

export interface SpawnedServer {
  child: ChildProcess;
  pid: number;
  log_file: string;
  /** Set once the process has exited. */
  exited: () => boolean;
}

/** Spawns a server with stdout and stderr appended to log_file; tracked for cleanup on exit. */
export function spawn_server(
  file: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; log_file: string },
): SpawnedServer {
  const fd = fs.openSync(options.log_file, 'a');
  let exited = false;
  let child: ChildProcess;
  try {
    child = spawn(file, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', fd, fd] });
  } finally {
    fs.closeSync(fd);
  }
  child.on('exit', () => {
    exited = true;
  });
  child.on('error', () => {
    exited = true;
  });
  if (child.pid === undefined) throw new Error(`could not spawn ${file}`);
  track_pid(child.pid);
  return { child, pid: child.pid, log_file: options.log_file, exited: () => exited };
}

/** Stops a spawned server (SIGTERM, then SIGKILL) and waits briefly until Node has reaped it. */
export async function stop_server(server: SpawnedServer, grace_ms = STOP_GRACE_MS): Promise<void> {
  await kill_pid(server.pid, grace_ms);
  const deadline = performance.now() + 2000;
  while (!server.exited() && performance.now() < deadline) await sleep(10);
}

/** Waits until `ready()` holds, failing early when the server exits; bounded by timeout_ms. */
export async function wait_until_ready(
  what: string,
  server: SpawnedServer,
  ready: () => Promise<boolean>,
  timeout_ms = START_TIMEOUT_MS,
): Promise<void> {
  const deadline = performance.now() + timeout_ms;
  let attempts = 0;
  while (performance.now() < deadline && attempts < 100_000) {
    attempts++;
    if (server.exited()) throw new Error(`${what} exited during start-up; log tail:\n${read_tail(server.log_file)}`);
    if (await ready()) return;
    await sleep(200);
  }
  throw new Error(`${what} did not become ready within ${timeout_ms} ms; log tail:\n${read_tail(server.log_file)}`);
}

export function read_tail(file: string, chars = 2000): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return tail(text, chars);
  } catch {
    return '';
  }
}

/** A fresh directory under workdir, named after the system. */
export function make_temp_dir(workdir: string, id: string): string {
  fs.mkdirSync(workdir, { recursive: true });
  return fs.mkdtempSync(path.join(path.resolve(workdir), `${id}-`));
}

export function remove_dir(dir: string | undefined): void {
  if (!dir) return;
  try {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    /* best effort */
  }
}
