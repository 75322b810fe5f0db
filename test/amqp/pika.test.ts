// A second, independent AMQP client against a broker process: Debian's python3-pika publishes with
// publisher confirms and consumes with manual acks (one message rejected and redelivered).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';

// Debian's interpreter, where python3-pika installs (a python3 earlier on PATH may lack it).
const PYTHON = '/usr/bin/python3';
const CLIENT = path.join(import.meta.dirname, 'pika_client.py');
const MESSAGES = 200;

function pika_missing(): string | null {
  const probe = spawnSync(PYTHON, ['-c', 'import pika'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error || probe.status !== 0)
    return `python3-pika is not available (${probe.error?.message ?? probe.stderr.trim()}): apt-get install it`;
  return null;
}

const why_not = pika_missing();
if (why_not && process.env.CI === 'true') throw new Error(`the pika interop test cannot run under CI: ${why_not}`);

let broker: BrokerProcess;

before(async () => {
  if (!why_not) broker = await start_broker_process();
});

after(async () => {
  await broker?.stop();
});

test('python3-pika publishes with confirms and consumes with manual acks', { skip: why_not ?? false }, () => {
  const [host, port] = broker.amqp!.split(':') as [string, string];
  const run = spawnSync(PYTHON, [CLIENT, host, port, 'pika-queue', String(MESSAGES)], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(run.status, 0, run.stderr);
  const result = JSON.parse(run.stdout.trim().split('\n').pop()!) as {
    confirmed: number;
    seen: Array<{ body: string; redelivered: boolean; n: number }>;
  };
  assert.equal(result.confirmed, MESSAGES);
  assert.equal(result.seen.length, MESSAGES);
  assert.deepEqual(new Set(result.seen.map((m) => m.n)).size, MESSAGES, 'each message once, headers kept');
  const first = result.seen.find((m) => m.body === 'pika 0');
  assert.equal(first?.redelivered, true, 'the rejected message came back marked redelivered');
});
