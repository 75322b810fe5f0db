import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import { DefaultPartitioner, murmur2, partition_for_key, type PartitionMetadata } from './partitioner.ts';

function metadata(count: number, leaderless: number[] = []): PartitionMetadata[] {
  return Array.from({ length: count }, (_, i) => ({
    partitionErrorCode: 0,
    partitionId: i,
    leader: leaderless.includes(i) ? -1 : 1,
    replicas: [1],
    isr: [1],
  }));
}

test('murmur2 matches the Java client on known keys', () => {
  // Values from org.apache.kafka.common.utils.UtilsTest.testMurmur2.
  const cases: Array<[string, number]> = [
    ['21', -973932308],
    ['foobar', -790332482],
    ['a-little-bit-long-string', -985981536],
    ['a-little-bit-longer-string', -1486304829],
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971],
    ['abc', 479470107],
  ];
  for (const [key, hash] of cases) assert.equal(murmur2(Buffer.from(key)), hash, key);
});

test('keyed messages land where kafkajs DefaultPartitioner puts them (1,000 random keys, 1-50 partitions)', () => {
  const ours = DefaultPartitioner();
  const theirs = Partitioners.DefaultPartitioner();
  const keys: Array<string | Buffer> = [];
  for (let i = 0; i < 1000; i++) {
    const bytes = randomBytes(randomInt(0, 40));
    // Strings (with multi-byte characters) and raw buffers of every length mod 4.
    keys.push(i % 2 === 0 ? bytes : `${bytes.toString('base64')}-é-${i}`);
  }
  for (let count = 1; count <= 50; count++) {
    const partitionMetadata = metadata(count);
    for (const key of keys) {
      const expected = theirs({ topic: 't', partitionMetadata, message: { key, value: 'v' } });
      assert.equal(
        ours({ topic: 't', partitionMetadata, message: { key, value: 'v' } }),
        expected,
        `key ${String(key)} with ${count} partitions`,
      );
      assert.equal(partition_for_key(key, count), expected);
    }
  }
});

test('an explicit partition wins; unkeyed messages go round-robin over partitions with a leader', () => {
  const partitioner = DefaultPartitioner();
  const partitionMetadata = metadata(4, [2]);
  assert.equal(partitioner({ topic: 't', partitionMetadata, message: { key: 'k', value: null, partition: 3 } }), 3);
  const seen = Array.from({ length: 30 }, () =>
    partitioner({ topic: 't', partitionMetadata, message: { value: 'v' } }),
  );
  assert.ok(!seen.includes(2), 'the leaderless partition is skipped');
  for (const p of [0, 1, 3]) assert.equal(seen.filter((x) => x === p).length, 10, `partition ${p} gets a third`);
  for (let i = 1; i < seen.length; i++) assert.notEqual(seen[i], seen[i - 1], 'consecutive messages rotate');
  // With no leader anywhere it still picks a partition.
  const none = metadata(3, [0, 1, 2]);
  const p = partitioner({ topic: 'u', partitionMetadata: none, message: { value: 'v' } });
  assert.ok(p >= 0 && p < 3);
});
