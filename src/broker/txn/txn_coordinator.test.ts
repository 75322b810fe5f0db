// The transaction coordinator's log kept small: rewritten with every id's latest state and cut
// before it, with transactions ending meanwhile; and transactional ids forgotten once expired.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LogClosedError, ManualClock, ReplicaOnlyError } from '../../storage/index.ts';
import { SimFileIO } from '../../storage/sim_file_io.ts';
import { open_sim } from '../../../test/support/storage.ts';
import { open_coordinator, TXN_SETTINGS } from '../../../test/support/txn_coordinator.ts';
import type { TxnCoordinator } from './txn_coordinator.ts';
import { TXN_STATE_TOPIC, TxnLog, type TxnMetadata } from './txn_log.ts';
import type { PartitionLog } from '../../storage/index.ts';
import { BrokerError } from '../../core/errors.ts';

const PARTITION = [{ topic: 't', partition: 0 }];

const open = (log: PartitionLog, clock: ManualClock, rewrite_after = 50) =>
  open_coordinator(new TxnLog(log, rewrite_after), clock);

/** One transaction of `id`: its partition added, then committed. */
async function one_transaction(
  coordinator: TxnCoordinator,
  id: string,
  identity: { producer_id: number; producer_epoch: number },
) {
  await coordinator.add_partitions(id, identity.producer_id, identity.producer_epoch, PARTITION);
  await coordinator.end(id, identity.producer_id, identity.producer_epoch, true);
}

test('the transaction log is rewritten and cut while transactions end, and loads the same', async () => {
  const clock = new ManualClock();
  const storage = await open_sim(new SimFileIO());
  const log = await storage.create_partition(`${TXN_STATE_TOPIC}-0`);
  const coordinator = await open(log, clock);
  const ids = ['a', 'b', 'c', 'd'];
  const identities = await Promise.all(ids.map((id) => coordinator.init_producer_id(id, 60_000, null)));
  // Four ids at once, 60 transactions each (three records apiece): rewrites run among their writes.
  await Promise.all(
    ids.map(async (id, i) => {
      for (let n = 0; n < 60; n++) await one_transaction(coordinator, id, identities[i]!);
    }),
  );
  await coordinator.add_partitions('a', identities[0]!.producer_id, identities[0]!.producer_epoch, PARTITION);
  for (let i = 0; i < 20 && log.log_start_offset === 0; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.ok(log.log_start_offset > 0, 'records before a rewrite are deleted');
  assert.ok(log.next_offset - log.log_start_offset < 200, `${log.next_offset - log.log_start_offset} records left`);
  const loaded = await new TxnLog(log).load();
  assert.deepEqual(
    [...loaded.values()].sort((x, y) => x.transactional_id.localeCompare(y.transactional_id)),
    ids.map((id) => coordinator.describe(id)),
    'the log holds each id as the coordinator knows it',
  );
  assert.equal(loaded.get('a')?.state, 'ongoing');
  coordinator.close();
  await storage.close();
});

test('a transactional id with no transaction past its expiry is forgotten', async () => {
  const clock = new ManualClock();
  const storage = await open_sim(new SimFileIO());
  const log = await storage.create_partition(`${TXN_STATE_TOPIC}-0`);
  const coordinator = await open(log, clock, 1_000_000);
  const idle = await coordinator.init_producer_id('idle', 60_000, null);
  await one_transaction(coordinator, 'idle', idle);
  const open_one = await coordinator.init_producer_id('open', 60_000, null);
  await coordinator.add_partitions('open', open_one.producer_id, open_one.producer_epoch, PARTITION);
  clock.advance(TXN_SETTINGS.id_expiration_ms + 1);
  await coordinator.init_producer_id('fresh', 60_000, null); // a write: the expiry check runs
  for (let i = 0; i < 50 && log.log_start_offset === 0; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(coordinator.describe('idle'), undefined, 'the idle id is forgotten');
  assert.equal(coordinator.describe('open')?.state, 'ongoing', 'an id with a transaction open is kept');
  const loaded = await new TxnLog(log).load();
  assert.deepEqual([...loaded.keys()].sort(), ['fresh', 'open']);
  const again = await coordinator.init_producer_id('idle', 60_000, null);
  assert.notEqual(again.producer_id, idle.producer_id, 'the id starts again with a new producer id');
  coordinator.close();
  await storage.close();
});

/** A transaction log whose first write of an abort fails, as on a disk that filled. */
class AbortFailsOnce extends TxnLog {
  failed = false;
  override async write(metadata: TxnMetadata, on_durable: () => void): Promise<void> {
    if (metadata.state === 'prepare_abort' && !this.failed) {
      this.failed = true;
      throw new Error('injected: the abort record could not be written');
    }
    return super.write(metadata, on_durable);
  }
}

test('unresolved_half_message_copied_again_while_its_abort_failed: copied once, aborted on a later tick', async () => {
  const clock = new ManualClock();
  const storage = await open_sim(new SimFileIO());
  const log = new AbortFailsOnce(await storage.create_partition(`${TXN_STATE_TOPIC}-0`));
  let checks = 0;
  let copies = 0;
  const coordinator = await open_coordinator(log, clock, {
    allocate_producer_id: async () => 7,
    settings: { ...TXN_SETTINGS, checks_max: 1 },
    half: { publish_check: async () => void checks++, copy_unresolved: async () => ++copies },
  });
  const id = '__sluice_half/shop/one';
  const identity = await coordinator.init_producer_id(id, 1_000, null);
  await coordinator.add_partitions(id, identity.producer_id, identity.producer_epoch, PARTITION);
  clock.advance(1_001);
  const deadline = Date.now() + 15_000;
  while (coordinator.describe(id)?.state !== 'complete_abort' && Date.now() < deadline) {
    if (checks > 0) clock.advance(1_001); // the next check falls due
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.equal(coordinator.describe(id)?.state, 'complete_abort', 'aborted once its record could be written');
  assert.ok(log.failed, 'the first abort failed');
  assert.equal(checks, 1);
  assert.equal(copies, 1, 'copied to the unresolved topic once');
  coordinator.close();
  await storage.close();
});

/** A transaction log whose leadership has just moved to another broker. */
/** A `__transaction_state` log that fails every write with `error`, as one whose leadership moved. */
class LeadershipLost extends TxnLog {
  constructor(
    log: PartitionLog,
    private readonly error: () => Error,
  ) {
    super(log);
  }

  override async write(): Promise<void> {
    throw this.error();
  }
}

const LEADERSHIP_LOSSES: Array<[string, () => Error]> = [
  ['is led by another broker', () => new BrokerError('not_leader_or_follower', 'led elsewhere')],
  ['is a follower copy now', () => new ReplicaOnlyError(`${TXN_STATE_TOPIC}-0`)],
  ['is closed', () => new LogClosedError(`${TXN_STATE_TOPIC}-0`)],
];

for (const [how, error] of LEADERSHIP_LOSSES) {
  test(`coordinator_lost_its_log_answered_not_leader: its log ${how}, a client is told not_coordinator`, async () => {
    const storage = await open_sim(new SimFileIO());
    const log = new LeadershipLost(await storage.create_partition(`${TXN_STATE_TOPIC}-0`), error);
    const coordinator = await open_coordinator(log, new ManualClock(), { allocate_producer_id: async () => 7 });
    await assert.rejects(
      () => coordinator.init_producer_id('moved', 60_000, null),
      (error: unknown) => error instanceof BrokerError && error.kind === 'not_coordinator',
    );
    coordinator.close();
    await storage.close();
  });
}

test('coordinator_closed_while_writing_markers_answered_not_leader: a client is told not_coordinator', async () => {
  const storage = await open_sim(new SimFileIO());
  const log = new TxnLog(await storage.create_partition(`${TXN_STATE_TOPIC}-0`));
  const coordinator = await open_coordinator(log, new ManualClock(), {
    write_marker: async () => {
      throw new BrokerError('not_leader_or_follower', 't-0 is led by a broker that just died');
    },
  });
  const { producer_id, producer_epoch } = await coordinator.init_producer_id('closing', 60_000, null);
  await coordinator.add_partitions('closing', producer_id, producer_epoch, PARTITION);
  const ending = coordinator.end('closing', producer_id, producer_epoch, true);
  await new Promise((resolve) => setTimeout(resolve, 50)); // its markers fail and are retried
  coordinator.close(); // the log's leadership moved
  await assert.rejects(ending, (error: unknown) => error instanceof BrokerError && error.kind === 'not_coordinator');
  await storage.close();
});
