import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InvalidArgumentError, PartitionExistsError, SimFileIO, UnknownPartitionError } from './index.ts';
import { make_batch, open_sim, read_all, settle } from '../../test/support/storage.ts';

test('partitions are created once, deleted durably, and names are checked', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  await storage.create_partition('a-0');
  await assert.rejects(storage.create_partition('a-0'), PartitionExistsError);
  for (const bad of ['', '.', '..', 'a/b', 'x y', 'z.deleted'])
    await assert.rejects(storage.create_partition(bad), InvalidArgumentError);
  const doomed = await storage.create_partition('b-0');
  await doomed.append(make_batch('x', 1));
  await storage.delete_partition('b-0');
  assert.equal(storage.partition('b-0'), undefined);
  await assert.rejects(storage.delete_partition('b-0'), UnknownPartitionError);
  io.crash({ keep_unsynced: false }); // a power loss right after: the deletion holds
  const reopened = await open_sim(io);
  assert.deepEqual(reopened.partition_names(), ['a-0']);
  const again = await reopened.create_partition('b-0');
  assert.equal(again.next_offset, 0, 'a new partition of the same name starts empty');
  await reopened.close();
});

test('a deletion interrupted by a crash is finished at the next open', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('c-0');
  await log.append(make_batch('x', 1));
  io.inject({ op: 'fsync_dir', path_exact: '/data', code: 'EIO' }); // stop between rename and cleanup
  await assert.rejects(storage.delete_partition('c-0'));
  storage.halt();
  io.crash({ keep_unsynced: true });
  const reopened = await open_sim(io);
  assert.deepEqual(reopened.partition_names(), []);
  assert.deepEqual(
    (await io.readdir('/data')).filter((name) => name.endsWith('.deleted')),
    [],
  );
  await reopened.close();
});

test('a damaged checkpoint makes recovery scan everything instead of trusting it', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('d-0');
  await log.append(make_batch('x', 3));
  await storage.close();
  io.poke('/data/recovery-point-offset-checkpoint', 3, Buffer.from('!'));
  const reopened = await open_sim(io);
  assert.deepEqual(
    (await read_all(reopened.require('d-0'))).map((r) => r.value),
    ['x:0', 'x:1', 'x:2'],
  );
  await reopened.close();
});

test('close is clean: appends queued before it are written, later ones refused', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('e-0');
  const queued = [log.append(make_batch('q', 1)), log.append(make_batch('r', 1))];
  const closing = storage.close();
  await assert.rejects(log.append(make_batch('late', 1)), /closed/);
  await Promise.all(queued);
  await closing;
  await settle();
  const reopened = await open_sim(io);
  assert.equal(reopened.require('e-0').high_watermark, 2);
  await reopened.close();
});
