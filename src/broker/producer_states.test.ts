// Producer state across a restart: the snapshot, replayed batches, a log cut below the snapshot,
// and a log cut and copied again from a new leader after it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProducerStates } from './producer_states.ts';
import { SILENT_LOGGER, SimFileIO, type PartitionLog } from '../storage/index.ts';
import { encode_record_batch } from '../protocol/record_batch.ts';
import { open_sim } from '../../test/support/storage.ts';
import { ATTRIBUTE_TRANSACTIONAL } from '../format/batch_layout.ts';
import { encode_marker } from '../protocol/control_records.ts';

function producer_batch(base_sequence: number, count: number): Buffer {
  const records = Array.from({ length: count }, (_, i) => ({
    key: null,
    value: Buffer.from(`v${base_sequence + i}`),
    timestamp_ms: 1_700_000_000_000,
  }));
  return encode_record_batch(records, { producer_id: 7, producer_epoch: 0, base_sequence });
}

/** The producer states of a broker holding `log`, its snapshot read and the log replayed. */
async function loaded_states(io: SimFileIO, log: PartitionLog): Promise<ProducerStates> {
  const states = new ProducerStates(io, '/data', SILENT_LOGGER, () => [log]);
  await states.open();
  await states.load(log);
  return states;
}

test('producer_state_past_a_recovery_cut: batches the log lost are not duplicates after a restart', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('t-0');
  const states = await loaded_states(io, log);
  for (const sequence of [0, 2, 4]) await log.append(producer_batch(sequence, 2));
  states.record_batches(log, Buffer.concat((await log.read(0, 1 << 20, 'log_end')).batches));
  assert.equal(log.flushed_offset, 6);
  await states.close();
  // The restart finds the log cut at 4 (the last batch failed its checks) below the snapshot.
  await log.truncate_to(4);
  const again = await loaded_states(io, log); // the restart
  const producers = again.of('t-0');
  assert.notEqual(producers.check(7, 0, 2, 3), null, 'a stored batch is still recognised');
  assert.equal(producers.check(7, 0, 4, 5), null, 'the lost batch is new again');
  await again.close();
  await storage.close();
});

test('marker_lost_to_a_stale_snapshot: a tail copied again after the snapshot is replayed on restart', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('t-0');
  const states = await loaded_states(io, log);
  // As a follower under leader epoch 1: producer 9's transaction opens at 0; at 1 a record of that
  // leader which the next leader never got.
  await log.epochs.assign(1, 0);
  const open_txn = encode_record_batch([{ key: null, value: Buffer.from('t'), timestamp_ms: 1 }], {
    producer_id: 9,
    producer_epoch: 0,
    base_sequence: 0,
    attributes: ATTRIBUTE_TRANSACTIONAL,
  });
  await log.append(open_txn);
  await log.append(producer_batch(0, 1));
  states.record_batches(log, Buffer.concat((await log.read(0, 1 << 20, 'log_end')).batches));
  await states.close(); // the snapshot covers [0, 2)
  // The divergent tail is cut and copied again from the new leader (epoch 2): the transaction's
  // ABORT marker at 1. The broker is killed before its next snapshot.
  await log.truncate_to(1);
  await log.epochs.assign(2, 1);
  const marker = { producer_id: 9, producer_epoch: 1, commit: false, coordinator_epoch: 0, timestamp_ms: 2 };
  await log.append(encode_marker(marker), { checked: true });
  const again = await loaded_states(io, log); // the restart
  assert.equal(again.of('t-0').txns.has_open(9), false, 'the marker copied again ended the transaction');
  assert.equal(again.of('t-0').check(7, 0, 0, 0), null, "the old leader's record is no duplicate");
  await again.close();
  await storage.close();
});
