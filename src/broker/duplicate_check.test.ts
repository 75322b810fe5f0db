// A retry is answered with stored offsets only when those offsets hold its records.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matches_stored } from './duplicate_check.ts';
import { SimFileIO } from '../storage/index.ts';
import { make_batch, open_sim } from '../../test/support/storage.ts';

test('duplicate_answered_with_offsets_inside_another_batch: only a batch stored at the offset is a match', async () => {
  const storage = await open_sim(new SimFileIO());
  const log = await storage.create_partition('t-0');
  const first = make_batch('a', 3);
  await log.append(first);
  await log.append(make_batch('b', 4));
  assert.equal(await matches_stored(log, 0, first), true, 'the stored batch itself');
  assert.equal(await matches_stored(log, 3, first), false, 'other records at that offset');
  assert.equal(await matches_stored(log, 5, make_batch('b', 1)), false, 'inside a batch of other records');
  assert.equal(await matches_stored(log, 7, first), false, 'past the end of the log');
  await log.delete_records_before(3);
  assert.equal(await matches_stored(log, 0, make_batch('z', 1)), true, 'deleted: nothing to compare');
  await storage.close();
});
