import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RecordState, SharePartition, type SharePartitionSettings } from './share_partition.ts';
import { AckType, type AckTypeCode, type AcquiredRange } from '../../core/types.ts';
import { AckError } from '../../core/errors.ts';

const SETTINGS: SharePartitionSettings = {
  delivery_count_limit: 3,
  record_lock_duration_ms: 1000,
  records_in_flight_max: 50,
  retry_backoff_ms: [100, 500],
};

const offsets_of = (ranges: AcquiredRange[]) =>
  ranges.flatMap((r) => Array.from({ length: r.last_offset - r.first_offset + 1 }, (_, i) => r.first_offset + i));

test('acquire hands out new records up to the log end and the window, each to one member', () => {
  const p = new SharePartition(10, SETTINGS);
  assert.deepEqual(p.acquire('a', 5, 30, 0), [{ first_offset: 10, last_offset: 14, delivery_count: 1 }]);
  assert.deepEqual(p.acquire('b', 100, 30, 0), [{ first_offset: 15, last_offset: 29, delivery_count: 1 }]);
  assert.deepEqual(p.acquire('c', 100, 30, 0), [], 'nothing left below the log end');
  assert.equal(p.in_flight, 20);
  const bounded = new SharePartition(0, SETTINGS);
  assert.equal(offsets_of(bounded.acquire('a', 1000, 1000, 0)).length, 50, 'the window bounds records in flight');
  assert.equal(bounded.has_available(1000, 0), false);
});

test('accept finishes records and moves the start; release makes them available again after the backoff', () => {
  const p = new SharePartition(0, SETTINGS);
  p.acquire('a', 4, 4, 0);
  p.acknowledge('a', { first_offset: 0, last_offset: 1 }, [AckType.ACCEPT], 10);
  assert.equal(p.start_offset, 2);
  p.acknowledge('a', { first_offset: 2, last_offset: 3 }, [AckType.RELEASE], 10);
  assert.deepEqual(p.acquire('b', 10, 4, 50), [], 'backoff of 100 ms after the first delivery');
  assert.equal(p.next_available_at(50), 110);
  assert.deepEqual(p.acquire('b', 10, 4, 110), [{ first_offset: 2, last_offset: 3, delivery_count: 2 }]);
  p.acknowledge('b', { first_offset: 2, last_offset: 3 }, [AckType.RELEASE], 120);
  assert.deepEqual(p.acquire('b', 10, 4, 500), [], 'backoff of 500 ms after the second');
  assert.deepEqual(p.acquire('b', 10, 4, 620), [{ first_offset: 2, last_offset: 3, delivery_count: 3 }]);
  p.acknowledge('b', { first_offset: 2, last_offset: 3 }, [AckType.RELEASE], 630, 'handler threw');
  const letters = p.take_dead_letters();
  assert.deepEqual(
    letters.map((l) => [l.offset, l.delivery_count]),
    [
      [2, 3],
      [3, 3],
    ],
  );
  assert.match(letters[0]!.reason, /delivery limit 3 reached; last failure: handler threw/);
  assert.equal(p.start_offset, 2, 'records being dead-lettered hold the start');
  p.dead_lettered([2, 3]);
  assert.equal(p.start_offset, 4);
});

test('per-offset acknowledge types, reject, gaps; a wrong member or state changes nothing', () => {
  const p = new SharePartition(0, SETTINGS);
  p.acquire('a', 3, 3, 0);
  assert.throws(
    () => p.acknowledge('b', { first_offset: 0, last_offset: 2 }, [AckType.ACCEPT], 0),
    (e: unknown) => e instanceof AckError && e.kind === 'invalid_record_state',
  );
  assert.throws(() => p.acknowledge('a', { first_offset: 0, last_offset: 5 }, [AckType.ACCEPT], 0), /not in flight/);
  assert.throws(
    () => p.acknowledge('a', { first_offset: 0, last_offset: 2 }, [AckType.ACCEPT, AckType.ACCEPT], 0),
    (e: unknown) => e instanceof AckError && e.kind === 'invalid_request',
  );
  assert.equal(p.in_flight, 3, 'refused acknowledgements change nothing');
  p.acknowledge(
    'a',
    { first_offset: 0, last_offset: 2 },
    [AckType.GAP, AckType.REJECT, AckType.ACCEPT] as AckTypeCode[],
    0,
    'bad payload',
  );
  assert.deepEqual(p.take_dead_letters(), [{ offset: 1, delivery_count: 1, reason: 'bad payload' }]);
  assert.throws(
    () => p.acknowledge('a', { first_offset: 2, last_offset: 2 }, [AckType.ACCEPT], 0),
    /acknowledged/,
    'twice is refused',
  );
});

test('lock timeouts release records (counting the delivery); a leaving member releases its records', () => {
  const p = new SharePartition(0, SETTINGS);
  p.acquire('a', 2, 4, 0);
  p.acquire('b', 2, 4, 0);
  assert.equal(p.next_lock_deadline(), 1000);
  assert.equal(p.expire_locks(999), 0);
  assert.equal(p.expire_locks(1000), 4);
  assert.deepEqual(p.acquire('c', 10, 4, 1100), [{ first_offset: 0, last_offset: 3, delivery_count: 2 }]);
  assert.equal(p.release_member('c', 1200), 4);
  assert.equal(p.in_flight, 0);
  assert.deepEqual(p.acquire('d', 10, 4, 1700), [{ first_offset: 0, last_offset: 3, delivery_count: 3 }]);
  assert.equal(p.expire_locks(5000), 4);
  assert.equal(p.take_dead_letters().length, 4, 'the third timeout reaches the delivery limit');
});

test('unacquire gives records back without counting a delivery', () => {
  const p = new SharePartition(0, SETTINGS);
  p.acquire('a', 3, 3, 0);
  p.unacquire([1, 2]);
  assert.deepEqual(p.acquire('b', 10, 3, 0), [{ first_offset: 1, last_offset: 2, delivery_count: 1 }]);
});

test('archive_undelivered: markers and aborted records finish undelivered, never offered or dead-lettered', () => {
  const p = new SharePartition(0, SETTINGS);
  p.acquire('a', 6, 6, 0);
  p.take_delta();
  p.archive_undelivered([0, 1, 3]);
  assert.equal(p.start_offset, 2, 'archived records at the head move the start');
  assert.equal(p.in_flight, 3);
  assert.deepEqual(p.take_delta(), {
    start_offset: 2,
    runs: [{ first_offset: 3, last_offset: 3, state: RecordState.ARCHIVED, delivery_count: 0 }],
  });
  assert.equal(p.census().archived, 1);
  assert.throws(
    () => p.acknowledge('a', { first_offset: 3, last_offset: 3 }, [AckType.RELEASE], 0),
    (e: unknown) => e instanceof AckError && e.kind === 'invalid_record_state',
    'an archived record is no acquisition to settle',
  );
  assert.equal(p.expire_locks(10_000), 3, 'only the records handed out time out');
  assert.deepEqual(
    p.acquire('b', 10, 6, 20_000),
    [
      { first_offset: 2, last_offset: 2, delivery_count: 2 },
      { first_offset: 4, last_offset: 5, delivery_count: 2 },
    ],
    'the archived one is not offered again',
  );
  assert.deepEqual(p.take_dead_letters(), []);
});

test('deltas and snapshots describe the state; restore brings acquired records back available', () => {
  const p = new SharePartition(0, SETTINGS);
  p.acquire('a', 6, 10, 0);
  p.take_delta();
  p.acknowledge('a', { first_offset: 0, last_offset: 0 }, [AckType.ACCEPT], 0);
  p.acknowledge('a', { first_offset: 2, last_offset: 2 }, [AckType.REJECT], 0);
  p.acknowledge('a', { first_offset: 3, last_offset: 3 }, [AckType.RELEASE], 0);
  assert.deepEqual(p.take_delta(), {
    start_offset: 1,
    runs: [
      { first_offset: 2, last_offset: 2, state: RecordState.DEAD_LETTERING, delivery_count: 1 },
      { first_offset: 3, last_offset: 3, state: RecordState.AVAILABLE, delivery_count: 1 },
    ],
  });
  const snapshot = p.snapshot();
  assert.equal(snapshot.end_offset, 6);
  const restored = SharePartition.restore(snapshot.start_offset, snapshot.end_offset, snapshot.runs, SETTINGS, 100);
  assert.deepEqual(
    restored.take_dead_letters().map((l) => l.offset),
    [2],
    'an interrupted dead letter is written again',
  );
  const again = offsets_of(restored.acquire('b', 10, 10, 100));
  assert.deepEqual(again, [1, 3, 4, 5, 6, 7, 8, 9], 'acquired and released records come back; nothing accepted does');
  const counts = restored.acquire('c', 10, 10, 100);
  assert.deepEqual(counts, []);
});

test('truncate_before drops records that left the log', () => {
  const p = new SharePartition(0, SETTINGS);
  p.acquire('a', 5, 5, 0);
  p.truncate_before(3);
  assert.equal(p.start_offset, 3);
  assert.equal(p.in_flight, 2);
  p.truncate_before(100);
  assert.equal(p.start_offset, 100);
  assert.deepEqual(p.acquire('a', 5, 102, 0), [{ first_offset: 100, last_offset: 101, delivery_count: 1 }]);
});

test('random operations keep the invariants: each record accepted at most once, never held by two members', () => {
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const settings = { ...SETTINGS, records_in_flight_max: 30 };
  let p = new SharePartition(0, settings);
  let log_end = 0;
  let now = 0;
  const held = new Map<number, string>(); // offset -> member (our model of acquired records)
  const accepted = new Set<number>();
  const lettered = new Set<number>();
  for (let step = 0; step < 20_000; step++) {
    now += Math.floor(random() * 50);
    const op = random();
    if (op < 0.2) log_end += Math.floor(random() * 5);
    else if (op < 0.5) {
      const member = `m${Math.floor(random() * 4)}`;
      for (const offset of offsets_of(p.acquire(member, 1 + Math.floor(random() * 8), log_end, now))) {
        assert.ok(!held.has(offset), `offset ${offset} handed out while held`);
        assert.ok(!accepted.has(offset) && !lettered.has(offset), `offset ${offset} handed out after it finished`);
        held.set(offset, member);
      }
    } else if (op < 0.85 && held.size > 0) {
      const [offset, member] = [...held][Math.floor(random() * held.size)]!;
      const type = ([AckType.ACCEPT, AckType.ACCEPT, AckType.RELEASE, AckType.REJECT] as const)[
        Math.floor(random() * 4)
      ]!;
      p.acknowledge(member, { first_offset: offset, last_offset: offset }, [type], now);
      held.delete(offset);
      if (type === AckType.ACCEPT) accepted.add(offset);
    } else if (op < 0.9) {
      p.expire_locks(now);
      for (const [offset] of held)
        if (
          p
            .snapshot()
            .runs.some((r) => offset >= r.first_offset && offset <= r.last_offset && r.state !== RecordState.ACQUIRED)
        )
          held.delete(offset);
    } else if (op < 0.95) {
      const snapshot = p.snapshot();
      p = SharePartition.restore(snapshot.start_offset, snapshot.end_offset, snapshot.runs, settings, now);
      held.clear();
    }
    for (const letter of p.take_dead_letters()) {
      assert.ok(!accepted.has(letter.offset));
      lettered.add(letter.offset);
      p.dead_lettered([letter.offset]);
    }
    assert.ok(p.in_flight === held.size, `in flight ${p.in_flight} vs model ${held.size} at step ${step}`);
    assert.ok(p.window_size <= settings.records_in_flight_max);
  }
  assert.ok(accepted.size > 100, `the run made progress (${accepted.size} accepted)`);
});

test('expiry: available dead-lettered (or dropped), acquired once released, ahead of the window brought in', () => {
  const p = new SharePartition(0, SETTINGS);
  p.acquire('a', 2, 10, 0);
  assert.equal(p.expire(1, 'expired', false), 'expired', 'acquired: marked');
  assert.equal(p.expire(5, 'expired', false), 'expired', 'ahead of the window: brought in');
  assert.equal(p.window_size, 6);
  assert.deepEqual(
    p.take_dead_letters().map((l) => l.offset),
    [5],
  );
  p.acknowledge('a', { first_offset: 1, last_offset: 1 }, [AckType.RELEASE], 0);
  assert.deepEqual(
    p.take_dead_letters().map((l) => [l.offset, l.reason]),
    [[1, 'expired']],
    'released after expiring: dead-lettered, not retried',
  );
  assert.equal(p.expire(3, 'expired', true), 'expired');
  assert.deepEqual(p.take_dead_letters(), [], 'dropped, no dead letter');
  assert.deepEqual(offsets_of(p.acquire('b', 10, 10, 1_000)), [2, 4, 6, 7, 8, 9], 'expired records are not offered');
  p.acknowledge('a', { first_offset: 0, last_offset: 0 }, [AckType.ACCEPT], 0);
  assert.equal(p.expire(0, 'expired', false), 'finished');
  assert.equal(p.expire(1_000, 'expired', false), 'later', 'beyond the window bound');
});

test('ordered by key: a key is never in flight twice, and a retried record holds its key back', () => {
  const keys = ['A', 'B', 'A', 'C', 'B', null, 'A'];
  const key_of = (offset: number) =>
    keys[offset] === null || keys[offset] === undefined ? undefined : keys[offset]!.charCodeAt(0);
  const p = new SharePartition(0, SETTINGS);
  assert.deepEqual(
    offsets_of(p.acquire('m1', 10, 7, 0, key_of)),
    [0, 1, 3, 5],
    'the first record of each key, and the keyless one',
  );
  assert.deepEqual(
    offsets_of(p.acquire('m2', 10, 7, 0, key_of)),
    [],
    'every other record waits for an earlier one of its key',
  );
  p.acknowledge('m1', { first_offset: 1, last_offset: 1 }, [AckType.ACCEPT], 0);
  assert.deepEqual(offsets_of(p.acquire('m2', 10, 7, 0, key_of)), [4], "B's next record");
  p.acknowledge('m1', { first_offset: 0, last_offset: 0 }, [AckType.RELEASE], 0);
  assert.deepEqual(
    offsets_of(p.acquire('m2', 10, 7, 50, key_of)),
    [],
    'A waits for its released record (backoff 100 ms)',
  );
  assert.deepEqual(offsets_of(p.acquire('m2', 10, 7, 100, key_of)), [0], 'the retry comes first');
  p.acknowledge('m2', { first_offset: 0, last_offset: 0 }, [AckType.ACCEPT], 100);
  assert.deepEqual(offsets_of(p.acquire('m3', 10, 7, 100, key_of)), [2]);
  p.acknowledge('m3', { first_offset: 2, last_offset: 2 }, [AckType.ACCEPT], 100);
  assert.deepEqual(offsets_of(p.acquire('m3', 10, 7, 100, key_of)), [6]);
});

test('ordered by key, random operations: a record is handed out only once every earlier one of its key is done', () => {
  let seed = 99;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const key_count = 5;
  const key_of = (offset: number) => (offset * 7919) % key_count;
  const settings = { ...SETTINGS, records_in_flight_max: 40, retry_backoff_ms: [0] };
  const p = new SharePartition(0, settings);
  const held = new Map<number, string>();
  const finished = new Set<number>();
  let log_end = 0;
  let now = 0;
  for (let step = 0; step < 10_000; step++) {
    now += 1;
    const op = random();
    if (op < 0.2) log_end += 3;
    else if (op < 0.6) {
      const member = `m${Math.floor(random() * 3)}`;
      for (const offset of offsets_of(p.acquire(member, 1 + Math.floor(random() * 5), log_end, now, key_of))) {
        for (const [other] of held)
          assert.notEqual(key_of(other), key_of(offset), `key ${key_of(offset)} in flight twice`);
        for (let earlier = offset - 1; earlier >= 0; earlier--) {
          if (key_of(earlier) === key_of(offset))
            assert.ok(finished.has(earlier), `offset ${offset} handed out before ${earlier} of its key finished`);
        }
        held.set(offset, member);
      }
    } else if (held.size > 0) {
      const [offset, member] = [...held][Math.floor(random() * held.size)]!;
      const type = random() < 0.7 ? AckType.ACCEPT : AckType.RELEASE;
      p.acknowledge(member, { first_offset: offset, last_offset: offset }, [type], now);
      held.delete(offset);
      if (type === AckType.ACCEPT) finished.add(offset);
    }
    for (const letter of p.take_dead_letters()) {
      finished.add(letter.offset);
      p.dead_lettered([letter.offset]);
    }
  }
  assert.ok(finished.size > 200, `progress: ${finished.size} finished`);
});
