// The fault suite's librdkafka workload: kcat (Debian's librdkafka command-line client) as an
// idempotent producer (acks=all) writing unique values to one partition of the fault topic. kcat
// reports each message's delivery on stderr, in the order the messages were given it (one
// partition, idempotence keeps the order), so the n-th report belongs to the n-th line written.
// kcat serves its delivery reports only between lines it reads, so each kcat is given a bounded
// run of lines and then the end of its input, and reports the rest as it flushes and exits; then
// the next one starts. Messages a kcat never reported on (it gave up: all brokers down) are
// unknown.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import type { HistoryOp, WriteOp } from './checker/history.ts';
import { TOPIC } from './workload.ts';

const PROCESS = 'kcat';
const PARTITION = 0;
const KEYS = 4;
/** Messages one kcat is given before the end of its input. */
const LINES_PER_KCAT = 200;
/** Pause before the next kcat after one that gave up early (all brokers down). */
const GAVE_UP_PAUSE_MS = 1000;
/** Pause between two messages: about 100 a second at most. */
const PACE_MS = 10;
/** librdkafka's own bound on a message (retries included) before it reports it failed. */
const MESSAGE_TIMEOUT_MS = 10_000;

const DELIVERED = /Message delivered to partition (\d+) \(offset (\d+)\)/;
const FAILED = /Delivery failed for message/;

/** One kcat process: up to LINES_PER_KCAT lines while `until()`, then the end of its input and of kcat. */
async function run_kcat(
  bootstrap: string[],
  started_ms: number,
  until: () => boolean,
  first_n: number,
  history: HistoryOp[],
  journal: fs.WriteStream,
): Promise<number> {
  const child = spawn(
    'kcat',
    [
      ...['-P', '-b', bootstrap.join(','), '-t', TOPIC, '-p', String(PARTITION), '-K', ':'],
      ...['-X', 'enable.idempotence=true', '-X', 'acks=all', '-X', `message.timeout.ms=${MESSAGE_TIMEOUT_MS}`],
      ...['-v', '-v', '-v'],
    ],
    { stdio: ['pipe', 'ignore', 'pipe'] },
  );
  const pending: WriteOp[] = [];
  const at = () => Date.now() - started_ms;
  const settle = (op: WriteOp, outcome: WriteOp['outcome'], offset?: number) => {
    op.outcome = outcome;
    if (offset !== undefined) op.offset = offset;
    op.completed_ms = at();
    history.push(op);
  };
  readline.createInterface({ input: child.stderr }).on('line', (line) => {
    const delivered = DELIVERED.exec(line);
    const reported = delivered || FAILED.test(line) ? pending.shift() : undefined;
    if (!reported) journal.write(`${line}\n`);
    else if (delivered) settle(reported, 'ok', Number(delivered[2]));
    else settle(reported, 'unknown'); // a message that timed out may still have been stored
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  let live = true;
  void exited.then(() => (live = false));
  child.stdin.on('error', () => undefined); // a kcat that died: what it did not report stays unknown
  let n = first_n;
  while (until() && live && n < first_n + LINES_PER_KCAT) {
    const value = `${PROCESS}-${n}`;
    const key = `c${n % KEYS}`;
    n++;
    const invoked_ms = at();
    pending.push({
      kind: 'write',
      process: PROCESS,
      topic: TOPIC,
      partition: PARTITION,
      key,
      value,
      outcome: 'unknown',
      invoked_ms,
      completed_ms: 0,
    });
    child.stdin.write(`${key}:${value}\n`);
    await sleep(PACE_MS);
  }
  child.stdin.end();
  const code = await exited;
  if (code !== 0) journal.write(`kcat exited with ${code}\n`);
  for (const op of pending.splice(0)) settle(op, 'unknown');
  return n;
}

/** kcats producing one after another until `until()` is false. */
export async function kcat_producer(
  bootstrap: string[],
  started_ms: number,
  until: () => boolean,
  history: HistoryOp[],
  log_file: string,
): Promise<void> {
  const journal = fs.createWriteStream(log_file);
  try {
    for (let n = 0; until();) {
      const first_n = n;
      n = await run_kcat(bootstrap, started_ms, until, n, history, journal);
      if (n - first_n < LINES_PER_KCAT && until()) await sleep(GAVE_UP_PAUSE_MS);
    }
  } finally {
    journal.end();
  }
}

export function kcat_missing(): string | null {
  const found = (process.env.PATH ?? '').split(':').some((dir) => fs.existsSync(`${dir}/kcat`));
  return found ? null : 'kcat is not installed (Debian package kcat)';
}
