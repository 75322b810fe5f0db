// Runs a real etcd (Debian's etcd-server) on loopback with a temporary data directory, for cluster
// tests. Ports are picked free; the process is killed and its directory removed on stop().
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const READY_TIMEOUT_MS = 20_000;
export const ETCD_BINARY = ['/usr/bin/etcd', '/usr/local/bin/etcd'].find((file) => fs.existsSync(file)) ?? null;

/** Why cluster tests cannot run here, or null. Under CI a missing etcd fails instead of skipping. */
export function etcd_missing(): string | null {
  if (ETCD_BINARY) return null;
  if (process.env.CI === 'true')
    throw new Error('etcd is required under CI (Debian package etcd-server; .ci/run installs it)');
  return 'etcd not installed (Debian package etcd-server)';
}

export interface EtcdProcess {
  endpoint: string;
  child: ChildProcess;
  stop(): Promise<void>;
  /** SIGSTOP / SIGCONT: etcd stops answering without closing connections. */
  pause(): void;
  resume(): void;
}

export async function free_port(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });
}

export async function start_etcd(): Promise<EtcdProcess> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-etcd-'));
  const client = await free_port();
  const peer = await free_port();
  const endpoint = `http://127.0.0.1:${client}`;
  const child = spawn(
    ETCD_BINARY!,
    [
      '--name',
      'test',
      '--data-dir',
      dir,
      '--listen-client-urls',
      endpoint,
      '--advertise-client-urls',
      endpoint,
      '--listen-peer-urls',
      `http://127.0.0.1:${peer}`,
      '--initial-advertise-peer-urls',
      `http://127.0.0.1:${peer}`,
      '--initial-cluster',
      `test=http://127.0.0.1:${peer}`,
      '--heartbeat-interval',
      '50',
      '--election-timeout',
      '500',
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ETCD_UNSUPPORTED_ARCH: process.arch === 'x64' ? '' : process.arch },
    },
  );
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`etcd not ready within ${READY_TIMEOUT_MS} ms:\n${output}`)),
      READY_TIMEOUT_MS,
    );
    const check = () => {
      if (/ready to serve client requests/.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`etcd exited before it was ready:\n${output}`));
    });
  });
  return {
    endpoint,
    child,
    pause: () => child.kill('SIGSTOP'),
    resume: () => child.kill('SIGCONT'),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGCONT');
        child.kill('SIGKILL');
        await exited;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
