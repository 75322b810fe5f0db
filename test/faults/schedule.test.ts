// The fault schedule's rule on disk damage: corrupt, truncate and lost_writes are one family, so no
// two disks are damaged at once (seed 2323 damaged both in-sync copies of a partition together).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fault_family, nemeses } from '../../faults/nemesis.ts';

test('two_disks_damaged_at_once: the disk-damaging faults are one family, the others their own', () => {
  const families = new Map(nemeses(3_000).map((n) => [n.name, fault_family(n.name)]));
  assert.deepEqual(
    ['corrupt', 'truncate', 'lost_writes'].map((name) => families.get(name)),
    ['disk', 'disk', 'disk'],
  );
  assert.equal(families.get('full_disk'), 'full_disk', 'a full disk loses nothing written');
  assert.equal(families.get('isolate'), 'network');
  assert.notEqual(families.get('kill'), 'disk');
});
