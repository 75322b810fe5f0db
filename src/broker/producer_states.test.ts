// Producer state across a restart: the snapshot, replayed batches, and a log cut below the snapshot.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProducerStates } from './producer_states.ts';
import { SILENT_LOGGER, SimFileIO } from '../storage/index.ts';
import { encode_record_batch } from '../protocol/record_batch.ts';
import { open_sim } from '../../test/support/storage.ts';

function producer_batch(base_sequence: number, count: number): Buffer {
  const records = Array.from({ length: count }, (_, i) => ({
    key: null,
    value: Buffer.from(`v${base_sequence + i}`),
    timestamp_ms: 1_700_000_000_000,
  }));
  return encode_record_batch(records, { producer_id: 7, producer_epoch: 0, base_sequence });
}

test('producer_state_past_a_recovery_cut: batches the log lost are not duplicates after a restart', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('t-0');
  const states = new ProducerStates(io, '/data', SILENT_LOGGER, () => [log]);
  await states.open();
  await states.load(log);
  for (const sequence of [0, 2, 4]) await log.append(producer_batch(sequence, 2));
  states.record_batches(log, Buffer.concat((await log.read(0, 1 << 20, 'log_end')).batches));
  assert.equal(log.flushed_offset, 6);
  await states.close();
  // The restart finds the log cut at 4 (the last batch failed its checks) below the snapshot.
  await log.truncate_to(4);
  const again = new ProducerStates(io, '/data', SILENT_LOGGER, () => [log]);
  await again.open();
  await again.load(log);
  const producers = again.of('t-0');
  assert.notEqual(producers.check(7, 0, 2, 3), null, 'a stored batch is still recognised');
  assert.equal(producers.check(7, 0, 4, 5), null, 'the lost batch is new again');
  await again.close();
  await storage.close();
});
