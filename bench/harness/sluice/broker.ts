// Runs `sluice start` as a child process for the benchmarks: a fresh data directory under the
// harness's workdir, an ephemeral loopback port read from the ready line, SIGTERM to stop (SIGKILL
// after a bound), and the data directory removed afterwards.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..', '..', '..');
const READY_TIMEOUT_MS = 30_000;
const STOP_TIMEOUT_MS = 30_000;
const KILL_TIMEOUT_MS = 5_000;
/** Output kept for error messages (the tail), bounded. */
const OUTPUT_KEPT_BYTES = 64 * 1024;

export interface BrokerOptions {
  /** Value of --durability: 'fsync', 'interval:MS' or 'none'. */
  durability: string;
  /** Extra node flags for the broker process (e.g. --cpu-prof --cpu-prof-dir=DIR). */
  node_args?: string[];
  log_level?: string;
  /** Serve AMQP on an ephemeral loopback port too (amqp_port once ready). */
  amqp?: boolean;
}

export class BrokerProcess {
  private constructor(
    private readonly output: { text: string },
    readonly child: ChildProcess,
    readonly data_dir: string,
    readonly host: string,
    readonly port: number,
    private readonly exited: Promise<void>,
    /** The AMQP listener's port; 0 when it is off. */
    readonly amqp_port: number,
  ) {}

  get pid(): number {
    return this.child.pid!;
  }

  get bootstrap(): string {
    return `${this.host}:${this.port}`;
  }

  static async start(workdir: string, label: string, options: BrokerOptions): Promise<BrokerProcess> {
    fs.mkdirSync(workdir, { recursive: true });
    const data_dir = fs.mkdtempSync(path.join(workdir, `${label}-data-`));
    const args = [
      ...(options.node_args ?? []),
      path.join(ROOT, 'bin', 'sluice.js'),
      'start',
      '--data',
      data_dir,
      '--kafka',
      '127.0.0.1:0',
      '--amqp',
      options.amqp ? '127.0.0.1:0' : 'off',
      '--http',
      'off',
      '--durability',
      options.durability,
      '--log-level',
      options.log_level ?? 'warn',
    ];
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = { text: '' };
    const keep = (chunk: Buffer) => {
      output.text += chunk.toString();
      if (output.text.length > OUTPUT_KEPT_BYTES) output.text = output.text.slice(-OUTPUT_KEPT_BYTES);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let port: number;
    try {
      port = await new Promise<number>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`sluice not ready within ${READY_TIMEOUT_MS} ms:\n${output.text}`)),
          READY_TIMEOUT_MS,
        );
        const check = () => {
          const match = /ready kafka=[^:\s]+:(\d+)/.exec(output.text);
          if (match) {
            clearTimeout(timer);
            resolve(Number(match[1]));
          }
        };
        child.stdout!.on('data', check);
        child.once('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
        void exited.then(() => {
          clearTimeout(timer);
          reject(
            new Error(`sluice exited with ${child.exitCode ?? child.signalCode} before it was ready:\n${output.text}`),
          );
        });
      });
    } catch (error) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      fs.rmSync(data_dir, { recursive: true, force: true });
      throw error;
    }
    const amqp_port = Number(/ amqp=[^:\s]+:(\d+)/.exec(output.text)?.[1] ?? 0);
    return new BrokerProcess(output, child, data_dir, '127.0.0.1', port, exited, amqp_port);
  }

  /** The tail of what the broker printed. */
  recent_output(): string {
    return this.output.text;
  }

  /** SIGTERM, then SIGKILL if it has not exited within STOP_TIMEOUT_MS; removes the data directory. */
  async stop(): Promise<void> {
    const running = () => this.child.exitCode === null && this.child.signalCode === null;
    const wait = (ms: number) =>
      new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => resolve(false), ms);
        void this.exited.then(() => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    try {
      if (running()) {
        this.child.kill('SIGTERM');
        if (!(await wait(STOP_TIMEOUT_MS))) {
          this.child.kill('SIGKILL');
          await wait(KILL_TIMEOUT_MS);
        }
      }
    } finally {
      fs.rmSync(this.data_dir, { recursive: true, force: true });
    }
  }
}
