import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CheckpointFile, decode_checkpoint, encode_checkpoint } from './checkpoint.ts';
import { SimFileIO } from './sim_file_io.ts';

test('a checkpoint round-trips, and any damage is detected', () => {
  const offsets = new Map([
    ['orders-0', 42],
    ['orders-1', 0],
    ['__consumer_offsets-3', 9_007_199_254_740_000],
  ]);
  const bytes = encode_checkpoint(offsets);
  assert.deepEqual(decode_checkpoint(bytes), offsets);
  for (let i = 0; i < bytes.length; i++) {
    const damaged = Buffer.from(bytes);
    damaged[i]! ^= 0x01;
    assert.equal(decode_checkpoint(damaged), null, `flipped bit in byte ${i}`);
  }
  for (let length = 0; length < bytes.length; length++) {
    assert.equal(decode_checkpoint(bytes.subarray(0, length)), null, `truncated to ${length}`);
  }
});

test('a checkpoint file is replaced atomically: a power loss mid-write leaves the old map', async () => {
  const io = new SimFileIO();
  await io.mkdir('/data');
  await io.fsync_dir('/');
  const file = new CheckpointFile(io, '/data', 'points');
  await file.write(() => new Map([['a-0', 1]]));
  io.inject({ op: 'rename', code: 'EIO' });
  await assert.rejects(file.write(() => new Map([['a-0', 2]])));
  io.crash({ keep_unsynced: false });
  assert.deepEqual((await file.read()).offsets, new Map([['a-0', 1]]));
  await file.write(() => new Map([['a-0', 3]]));
  io.crash({ keep_unsynced: false });
  assert.deepEqual(await file.read(), { offsets: new Map([['a-0', 3]]), damaged: false });
});
