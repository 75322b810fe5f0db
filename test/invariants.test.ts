// A broken invariant stops the broker: logged, and the process exits, instead of answering
// UNKNOWN_SERVER_ERROR or going on with state it can no longer trust.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { start_broker } from '../src/compose/start_broker.ts';
import { INVARIANT_EXIT_CODE, InvariantError, set_invariant_stopper } from '../src/core/invariants.ts';
import { Connection } from '../src/protocol/kafka/client_connection.ts';
import { PRODUCE } from '../src/protocol/kafka/messages/00_produce.ts';
import { encode_record_batch } from '../src/protocol/record_batch.ts';
import { temp_dir } from './support/storage.ts';

function run_child(script: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test('a write the disk puts elsewhere fails its read-back: the broker stops, logged, and acks nothing', async () => {
  const { code, stdout, stderr } = await run_child(
    path.join(import.meta.dirname, 'support', 'misdirected_write_broker.ts'),
  );
  assert.equal(code, INVARIANT_EXIT_CODE, stderr);
  assert.match(stderr, /does not hold the batch just written/);
  assert.match(stderr, /invariant broken: stopping the broker/);
  assert.doesNotMatch(stdout, /acknowledged/);
});

test('a broken invariant while answering a request stops the process, no UNKNOWN_SERVER_ERROR answer', async () => {
  const data_dir = temp_dir('invariant');
  const running = await start_broker({ data_dir, kafka: { host: '127.0.0.1', port: 0 } });
  const stopped: Error[] = [];
  const restore = set_invariant_stopper({ stop: (error) => void stopped.push(error) });
  try {
    await running.broker.topics.create('orders', 1, {});
    running.broker.produce_path.produce = () => {
      throw new InvariantError('planted: offsets went back');
    };
    const connection = await Connection.connect(running.kafka_address.host, running.kafka_address.port);
    const records = encode_record_batch([{ key: null, value: Buffer.from('x'), timestamp_ms: Date.now() }]);
    const produce = connection.call(PRODUCE, 9, {
      acks: -1,
      timeout_ms: 5000,
      topic_data: [{ name: 'orders', partition_data: [{ index: 0, records }] }],
    });
    await assert.rejects(produce, /connection closed/, 'no answer: the connection closes');
    assert.equal(stopped.length, 1);
    assert.match(stopped[0]!.message, /planted: offsets went back/);
    connection.close();
  } finally {
    restore();
    await running.close();
  }
});
