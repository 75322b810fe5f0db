import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SimFileIO } from './index.ts';
import { make_batch, open_sim, read_all, values_of } from '../../test/support/storage.ts';

test('appends get consecutive offsets and read back byte for byte', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('orders-0');
  const first = await log.append(make_batch('a', 3));
  const second = await log.append(make_batch('b', 2));
  assert.deepEqual([first.base_offset, first.last_offset, second.base_offset, second.last_offset], [0, 2, 3, 4]);
  assert.equal(log.high_watermark, 5);
  const { batches } = await log.read(0, 1 << 20);
  assert.deepEqual(values_of(batches), ['a:0', 'a:1', 'a:2', 'b:0', 'b:1']);
  const tail = await log.read(4, 1);
  assert.equal(tail.batches.length, 1, 'a read inside a batch returns that whole batch');
  assert.deepEqual(values_of(tail.batches), ['b:0', 'b:1']);
  await storage.close();
  const reopened = await open_sim(io);
  const again = reopened.require('orders-0');
  assert.equal(again.high_watermark, 5);
  assert.deepEqual((await read_all(again)).map((r) => r.value), ['a:0', 'a:1', 'a:2', 'b:0', 'b:1']);
  await reopened.close();
});
