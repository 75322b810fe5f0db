// A librdkafka transactional client against a broker process: Debian's python3-confluent-kafka
// commits and aborts transactions; aborted records are invisible to read_committed consumers and
// visible to read_uncommitted ones.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';

// Debian's interpreter, where python3-confluent-kafka installs (a python3 earlier on PATH may lack it).
const PYTHON = '/usr/bin/python3';
const CLIENT = path.join(import.meta.dirname, 'confluent_txn_client.py');

function client_missing(): string | null {
  const probe = spawnSync(PYTHON, ['-c', 'import confluent_kafka'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error || probe.status !== 0) {
    const why = probe.error?.message ?? probe.stderr.trim();
    return `python3-confluent-kafka is not available (${why}): apt-get install it`;
  }
  return null;
}

const why_not = client_missing();
if (why_not && process.env.CI === 'true')
  throw new Error(`the librdkafka transaction test cannot run under CI: ${why_not}`);

let broker: BrokerProcess;

before(async () => {
  if (!why_not) broker = await start_broker_process({ args: ['--partitions', '3'] });
});

after(async () => {
  await broker?.stop();
});

test(
  'librdkafka commits and aborts transactions; read_committed readers see only the committed',
  { skip: why_not ?? false },
  () => {
    const run = spawnSync(PYTHON, [CLIENT, broker.bootstrap, 'librdkafka-txn'], { encoding: 'utf8', timeout: 120_000 });
    assert.equal(run.status, 0, run.stderr);
    const result = JSON.parse(run.stdout.trim().split('\n').pop()!) as Record<string, string[]>;
    const committed = [...[0, 1, 2, 3, 4].map((i) => `committed-${i}`), 'committed-after-abort'].sort();
    assert.deepEqual(result.read_committed, committed);
    assert.deepEqual(result.read_uncommitted, [...committed, 'aborted-0', 'aborted-1', 'aborted-2'].sort());
  },
);
