import { test } from 'node:test';
import assert from 'node:assert/strict';
import { open_core } from './start_broker.ts';
import { ManualClock, SimFileIO } from '../storage/index.ts';
import { decode_record_batch, encode_record_batch } from '../protocol/record_batch.ts';

const batch = (values: string[], timestamp_ms: number) =>
  encode_record_batch(values.map((v) => ({ key: null, value: Buffer.from(v), timestamp_ms })));

async function values_of(core: Awaited<ReturnType<typeof open_core>>, topic: string): Promise<string[]> {
  const source = core.partitions.consumer_source(topic, 0);
  const { batches } = await source.read(0, 1024 * 1024);
  return batches.flatMap((b) => decode_record_batch(b).map((r) => r.value!.toString()));
}

test('the broker core on a simulated disk and a manual clock: what is acknowledged survives power loss', async () => {
  const io = new SimFileIO();
  const clock = new ManualClock(1_800_000_000_000);
  const options = { data_dir: '/sim/sluice-data', io, clock };
  let core = await open_core(options);
  const created = await core.topics.create('orders', 1, {});
  assert.equal(created.created_ms, clock.now_ms(), 'the topic takes its time from the injected clock');
  const acked = await core.partitions.produce('orders', 0, batch(['a', 'b'], clock.now_ms()), -1);
  assert.equal(acked.base_offset, 0);
  const pid = await core.partitions.allocate_producer_id();
  await core.close();

  core = await open_core(options);
  assert.deepEqual(await values_of(core, 'orders'), ['a', 'b'], 'a clean restart on the same simulated disk');
  assert.ok((await core.partitions.allocate_producer_id()) > pid, 'producer ids are not handed out twice');
  await core.partitions.produce('orders', 0, batch(['c'], clock.now_ms()), -1);
  // Power loss: everything not fsynced is gone, and the broker starts again on what is left.
  io.crash({ keep_unsynced: false });
  core = await open_core(options);
  assert.deepEqual(await values_of(core, 'orders'), ['a', 'b', 'c'], 'acknowledged under fsync, so still there');
  assert.equal(core.topics.get('orders')?.partitions, 1);
  await core.close();
});
