// Runs `sluice start` as a real child process for cross-process tests, on a free port and a
// temporary data directory, and stops it with SIGTERM (or SIGKILL to simulate a crash).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SLUICE_CLI } from './cli.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const READY_TIMEOUT_MS = 30_000;

export interface BrokerProcess {
  /** HOST:PORT of the Kafka listener. */
  bootstrap: string;
  port: number;
  /** HOST:PORT of the HTTP listener (admin API, metrics), from the ready line; null with --http off. */
  http: string | null;
  /** HOST:PORT of the AMQP listener, from the ready line; null with --amqp off. */
  amqp: string | null;
  data_dir: string;
  child: ChildProcess;
  /** Everything the process printed (stdout and stderr). */
  output(): string;
  /** SIGTERM and wait for a clean exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** SIGKILL (a crash) and wait for the exit. */
  kill(): Promise<void>;
}

export function new_data_dir(prefix = 'broker'): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `sluice-${prefix}-`));
}

export async function start_broker_process(
  options: { data_dir?: string; port?: number; args?: string[]; env?: NodeJS.ProcessEnv } = {},
): Promise<BrokerProcess> {
  const data_dir = options.data_dir ?? new_data_dir();
  // Free HTTP and AMQP ports each time: tests run in parallel and the defaults 8080 and 5672 would collide.
  const args = [
    ...SLUICE_CLI,
    'start',
    '--data',
    data_dir,
    '--kafka',
    `127.0.0.1:${options.port ?? 0}`,
    '--http',
    '127.0.0.1:0',
    '--amqp',
    '127.0.0.1:0',
    '--log-level',
    'warn',
    ...(options.args ?? []),
  ];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`broker not ready within ${READY_TIMEOUT_MS} ms:\n${output}`)),
      READY_TIMEOUT_MS,
    );
    const check = () => {
      const match = /ready kafka=[^:\s]+:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    };
    child.stdout!.on('data', check);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`broker exited with ${code} before it was ready:\n${output}`));
    });
  });
  const http = /ready kafka=\S+ http=(\S+)/.exec(output)?.[1];
  const amqp = / amqp=(\S+)/.exec(output)?.[1];
  return {
    bootstrap: `127.0.0.1:${port}`,
    port,
    http: http === undefined || http === 'off' ? null : http,
    amqp: amqp === undefined || amqp === 'off' ? null : amqp,
    data_dir,
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
}
