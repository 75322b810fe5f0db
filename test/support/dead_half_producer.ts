// Half messages written by a producer that dies (SIGKILL) before settling them: half_sender.ts in a
// process of its own, for the check-back tests on one broker and in a cluster.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';

const SENDER = path.join(import.meta.dirname, 'half_sender.ts');

/** Resolves once the producer has had every half message acknowledged and was killed. */
export async function half_messages_of_a_dead_producer(
  bootstrap: string,
  topic: string,
  group: string,
  half_timeout_ms: number,
  values: string[],
): Promise<void> {
  const sender = spawn(
    process.execPath,
    ['--import', 'tsx', SENDER, bootstrap, topic, group, String(half_timeout_ms), ...values],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let sent = '';
  sender.stdout!.on('data', (chunk: Buffer) => (sent += chunk.toString()));
  const exit = await new Promise<NodeJS.Signals | null>((resolve) =>
    sender.once('exit', (_code, signal) => resolve(signal)),
  );
  assert.equal(exit, 'SIGKILL');
  assert.match(sent, /sent/);
}
