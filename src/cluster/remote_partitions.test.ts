// A remote partition read through a real broker's Kafka listener: the view names that broker as the
// partition's leader, as a cluster's view would.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { start_broker, type RunningBroker } from '../compose/start_broker.ts';
import { encode_record_batch } from '../protocol/record_batch.ts';
import { OffsetOutOfRangeError, SILENT_LOGGER, SYSTEM_CLOCK } from '../storage/index.ts';
import { temp_dir } from '../../test/support/storage.ts';
import { type ClusterView, empty_view, partition_key } from './model.ts';
import { peer_dialer } from './peer_dialer.ts';
import { RemotePartitions } from './remote_partitions.ts';
import { begin_txn } from '../../test/support/core_txn.ts';

let running: RunningBroker;
let view: ClusterView;
let remotes: RemotePartitions;

const produce = (values: string[], timestamp_ms = Date.now()) =>
  running.broker.partitions.produce(
    'jobs',
    0,
    encode_record_batch(values.map((v) => ({ key: null, value: Buffer.from(v), timestamp_ms }))),
    -1,
  );

const offsets_in = (batches: Buffer[]) => batches.map((b) => Number(b.readBigInt64BE(0)));

before(async () => {
  running = await start_broker({
    data_dir: temp_dir('remote-partitions'),
    kafka: { host: '127.0.0.1', port: 0 },
    http: null,
    auto_create_topics: false,
  });
  await running.broker.topics.create('jobs', 1);
  view = empty_view();
  view.brokers.set(1, { node_id: 1, ...running.kafka_address, started_ms: Date.now(), dir_id: 'test' });
  view.partitions.set(partition_key('jobs', 0), {
    value: { leader: 1, leader_epoch: 0, isr: [1], replicas: [1] },
    mod_revision: '1',
  });
  remotes = new RemotePartitions(2, () => view, SILENT_LOGGER, peer_dialer(null, null), SYSTEM_CLOCK);
});

after(async () => {
  remotes.close();
  await running.close();
});

test('bounds are heard from the leader, batches read from it, and a new high watermark wakes listeners', async () => {
  await produce(['a', 'b', 'c']);
  const remote = await remotes.get('jobs', 0).ready();
  assert.equal(remote.high_watermark, 3);
  assert.equal(remote.log_start_offset, 0);
  assert.deepEqual(offsets_in((await remote.read(0, 1 << 20)).batches), [0]);
  assert.deepEqual((await remote.read(3, 1 << 20)).batches, [], 'nothing at the high watermark');

  const woken = new Promise<number>((resolve) => {
    const off = remote.on_high_watermark((hw) => {
      off();
      resolve(hw);
    });
  });
  await produce(['d', 'e']);
  assert.equal(await woken, 5);
  assert.deepEqual(offsets_in((await remote.read(3, 1 << 20)).batches), [3], 'the watched batch is served');
  assert.deepEqual(offsets_in((await remote.read(0, 1)).batches), [0], 'one batch at least, whatever the budget');
});

test('an offset beyond the high watermark is out of range; a timestamp is looked up on the leader', async () => {
  const remote = await remotes.get('jobs', 0).ready();
  await assert.rejects(remote.read(remote.high_watermark + 10, 1024), OffsetOutOfRangeError);
  const later = Date.now() + 60_000;
  await produce(['late'], later);
  const found = await remote.offset_for_timestamp(later);
  assert.equal(found?.offset, remote.high_watermark - 1);
  assert.equal(await remote.offset_for_timestamp(later + 1), null);
});

test('a partition without a leader is refused with a retriable error once the read deadline passes', async () => {
  await running.broker.topics.create('orphan', 1);
  view.partitions.set(partition_key('orphan', 0), {
    value: { leader: -1, leader_epoch: 1, isr: [], replicas: [1] },
    mod_revision: '1',
  });
  const started = Date.now();
  await assert.rejects(
    remotes.get('orphan', 0).ready(),
    (error: Error & { kind?: string }) => error.kind === 'leader_not_available',
  );
  assert.ok(Date.now() - started >= 4_000, 'retried while leadership might move');
});

test('read_committed through the view: the leader last stable offset, its aborted transactions', async () => {
  await running.broker.topics.create('txns', 1);
  view.partitions.set(partition_key('txns', 0), {
    value: { leader: 1, leader_epoch: 0, isr: [1], replicas: [1] },
    mod_revision: '1',
  });
  const core = running.broker;
  const plain = (value: string) =>
    core.partitions.produce(
      'txns',
      0,
      encode_record_batch([{ key: null, value: Buffer.from(value), timestamp_ms: 1 }]),
      -1,
    );
  const aborted = await begin_txn(core, 'remote-abort', 'txns', 0, ['x']);
  await aborted.end(false); // x at 0, its marker at 1
  await plain('a'); // 2
  const open = await begin_txn(core, 'remote-open', 'txns', 0, ['o']); // 3
  await plain('b'); // 4
  const remote = await remotes.get('txns', 0).ready();
  assert.equal(remote.high_watermark, 5);
  assert.equal(remote.last_stable_offset, 3, 'the open transaction holds it');
  const committed = await remote.read_committed(0, 1 << 20);
  assert.deepEqual(offsets_in(committed.batches), [0, 1, 2], 'nothing at or past the last stable offset');
  assert.deepEqual(
    committed.aborted.map((a) => a.first_offset),
    [0],
  );
  assert.deepEqual(await remote.read_committed(3, 1 << 20), { batches: [], aborted: [] });
  assert.deepEqual(offsets_in((await remote.read(3, 1 << 20)).batches), [3, 4], 'read() reads to the high watermark');

  const woken = new Promise<void>((resolve) => {
    const off = remote.on_high_watermark(() => {
      if (remote.last_stable_offset < 6) return;
      off();
      resolve();
    });
  });
  await open.end(true); // its marker at 5
  await woken;
  assert.equal(remote.last_stable_offset, 6, 'learnt with the high watermark');
  const rest = await remote.read_committed(3, 1 << 20);
  assert.deepEqual(offsets_in(rest.batches), [3, 4, 5]);
  assert.deepEqual(rest.aborted, []);
});
