// Transaction version 2 (KIP-890) on the coordinator: EndTxn ending under the next epoch, a retry of
// it answered again, zombies of the old epoch fenced, a new producer id once the epochs run out,
// and partitions joining with their produce (one record for the partitions of one request).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../../storage/index.ts';
import { SimFileIO } from '../../storage/sim_file_io.ts';
import { open_sim } from '../../../test/support/storage.ts';
import { open_coordinator } from '../../../test/support/txn_coordinator.ts';
import type { TxnCoordinator } from './txn_coordinator.ts';
import { TXN_STATE_TOPIC, TxnLog, type TxnMetadata } from './txn_log.ts';
import type { Marker } from '../../protocol/control_records.ts';
import { BrokerError } from '../../core/errors.ts';

const T0 = { topic: 't', partition: 0 };
const T1 = { topic: 't', partition: 1 };
const T2 = { topic: 't', partition: 2 };

async function with_coordinator(
  body: (coordinator: TxnCoordinator, markers: Marker[], log: TxnLog) => Promise<void>,
): Promise<void> {
  const storage = await open_sim(new SimFileIO());
  const log = new TxnLog(await storage.create_partition(`${TXN_STATE_TOPIC}-0`));
  const markers: Marker[] = [];
  const coordinator = await open_coordinator(log, new ManualClock(), {
    write_marker: async (_partition, marker) => void markers.push(marker),
  });
  try {
    await body(coordinator, markers, log);
  } finally {
    coordinator.close();
    await storage.close();
  }
}

const is_error = (kind: string) => (error: unknown) => error instanceof BrokerError && error.kind === kind;

test('an EndTxn of version 2 ends under the next epoch, its markers carrying it, and answers with it', () =>
  with_coordinator(async (coordinator, markers) => {
    const first = await coordinator.init_producer_id('v2', 60_000, null);
    await coordinator.join('v2', first.producer_id, first.producer_epoch, T0);
    const next = await coordinator.end('v2', first.producer_id, first.producer_epoch, true, true);
    assert.deepEqual(next, { producer_id: first.producer_id, producer_epoch: first.producer_epoch + 1 });
    assert.deepEqual(
      markers.map((m) => [m.producer_epoch, m.commit]),
      [[next.producer_epoch, true]],
    );
    // The next transaction under the new epoch; the old one can neither join nor end it.
    await assert.rejects(
      coordinator.join('v2', first.producer_id, first.producer_epoch, T1),
      is_error('invalid_producer_epoch'),
    );
    await coordinator.join('v2', next.producer_id, next.producer_epoch, T1);
    const third = await coordinator.end('v2', next.producer_id, next.producer_epoch, false, true);
    assert.equal(third.producer_epoch, next.producer_epoch + 1);
    assert.equal(coordinator.describe('v2')?.state, 'complete_abort');
  }));

test('a retry of a version 2 EndTxn under the epoch it ended is answered with the same next epoch', () =>
  with_coordinator(async (coordinator, markers) => {
    const first = await coordinator.init_producer_id('retry', 60_000, null);
    await coordinator.join('retry', first.producer_id, first.producer_epoch, T0);
    const next = await coordinator.end('retry', first.producer_id, first.producer_epoch, true, true);
    const again = await coordinator.end('retry', first.producer_id, first.producer_epoch, true, true);
    assert.deepEqual(again, next);
    assert.equal(markers.length, 1, 'the retry wrote no marker');
    // The opposite decision is not a retry.
    await assert.rejects(
      coordinator.end('retry', first.producer_id, first.producer_epoch, false, true),
      is_error('invalid_txn_state'),
    );
    // Once the next transaction began, the old epoch is fenced, retry or not.
    await coordinator.join('retry', next.producer_id, next.producer_epoch, T0);
    await assert.rejects(
      coordinator.end('retry', first.producer_id, first.producer_epoch, true, true),
      is_error('invalid_producer_epoch'),
    );
    // An end under the current epoch with nothing begun is no transaction to end.
    await coordinator.end('retry', next.producer_id, next.producer_epoch, true, true);
    const latest = coordinator.describe('retry')!;
    await assert.rejects(
      coordinator.end('retry', latest.producer_id, latest.producer_epoch, true, true),
      is_error('invalid_txn_state'),
    );
  }));

test('the partitions of one produce request join with one record of the transaction log', () =>
  with_coordinator(async (coordinator, _markers, log) => {
    const { producer_id, producer_epoch } = await coordinator.init_producer_id('joins', 60_000, null);
    const written: TxnMetadata[] = [];
    const write = log.write.bind(log);
    log.write = (metadata, on_durable) => {
      written.push(metadata);
      return write(metadata, on_durable);
    };
    await Promise.all([T0, T1, T2].map((p) => coordinator.join('joins', producer_id, producer_epoch, p)));
    assert.equal(written.length, 1);
    assert.deepEqual(written[0]!.partitions, [T0, T1, T2]);
    // Already in the transaction: nothing written.
    await coordinator.join('joins', producer_id, producer_epoch, T1);
    assert.equal(written.length, 1);
  }));

test('a producer whose epochs run out under version 2 gets a new producer id at epoch 0', () =>
  with_coordinator(async (coordinator, markers) => {
    const first = await coordinator.init_producer_id('worn', 60_000, null);
    // As after 32,766 transactions: one more end would leave no epoch to fence the producer with.
    (coordinator.describe('worn') as { producer_epoch: number }).producer_epoch = 32_766;
    const identity = { producer_id: first.producer_id, producer_epoch: 32_766 };
    await coordinator.join('worn', identity.producer_id, identity.producer_epoch, T0);
    const next = await coordinator.end('worn', identity.producer_id, identity.producer_epoch, true, true);
    assert.notEqual(next.producer_id, first.producer_id);
    assert.equal(next.producer_epoch, 0);
    assert.equal(markers.at(-1)!.producer_epoch, 32_767, 'the markers fence the last epoch of the old id');
    assert.deepEqual(await coordinator.end('worn', first.producer_id, 32_766, true, true), next, 'a retry');
    await coordinator.join('worn', next.producer_id, next.producer_epoch, T0);
    await coordinator.end('worn', next.producer_id, next.producer_epoch, true, true);
  }));

test('a version 1 EndTxn keeps the epoch, and its retry is answered under it', () =>
  with_coordinator(async (coordinator) => {
    const first = await coordinator.init_producer_id('v1', 60_000, null);
    await coordinator.add_partitions('v1', first.producer_id, first.producer_epoch, [T0]);
    assert.deepEqual(await coordinator.end('v1', first.producer_id, first.producer_epoch, true), first);
    assert.deepEqual(await coordinator.end('v1', first.producer_id, first.producer_epoch, true), first);
  }));
