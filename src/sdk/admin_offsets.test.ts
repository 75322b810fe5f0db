// The admin client's topic offsets against an in-process broker: watermarks, offsets by
// timestamp, deleteTopicRecords.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AdminError } from './admin.ts';
import { TEST_TIMEOUT_MS, T0, admin, produce, rejects_with, start, stop } from './admin_test_support.ts';

describe('Admin', () => {
  before(start);
  after(stop);
  test(
    'offsets of a topic: watermarks, by timestamp, deleteTopicRecords',
    { timeout: TEST_TIMEOUT_MS },
    reads_topic_offsets,
  );
});

async function reads_topic_offsets(): Promise<void> {
  await admin.createTopics({ topics: [{ topic: 'off', numPartitions: 2 }] });
  assert.deepEqual(await admin.fetchTopicOffsets('off'), [
    { partition: 0, offset: '0', high: '0', low: '0' },
    { partition: 1, offset: '0', high: '0', low: '0' },
  ]);
  await produce('off', 0, 10);
  await produce('off', 1, 4);
  assert.deepEqual(await admin.fetchTopicOffsets('off'), [
    { partition: 0, offset: '10', high: '10', low: '0' },
    { partition: 1, offset: '4', high: '4', low: '0' },
  ]);

  // Message i has timestamp T0 + i s: the first at or after T0 + 3.5 s is offset 4 in partition 0;
  // partition 1 has none that late, so its high watermark.
  assert.deepEqual(await admin.fetchTopicOffsetsByTimestamp('off', T0 + 3500), [
    { partition: 0, offset: '4' },
    { partition: 1, offset: '4' },
  ]);
  assert.deepEqual(await admin.fetchTopicOffsetsByTimestamp('off', T0), [
    { partition: 0, offset: '0' },
    { partition: 1, offset: '0' },
  ]);
  assert.deepEqual(await admin.fetchTopicOffsetsByTimestamp('off'), [
    { partition: 0, offset: '10' },
    { partition: 1, offset: '4' },
  ]);

  await admin.deleteTopicRecords({
    topic: 'off',
    partitions: [
      { partition: 0, offset: '4' },
      { partition: 1, offset: '-1' },
    ],
  });
  assert.deepEqual(await admin.fetchTopicOffsets('off'), [
    { partition: 0, offset: '10', high: '10', low: '4' },
    { partition: 1, offset: '4', high: '4', low: '4' },
  ]);

  const errors = await rejects_with(
    admin.deleteTopicRecords({
      topic: 'off',
      partitions: [
        { partition: 0, offset: '11' },
        { partition: 1, offset: 4 },
      ],
    }),
    'OFFSET_OUT_OF_RANGE',
  );
  assert.ok(errors instanceof AdminError);
  assert.deepEqual(
    errors.failures.map((f) => f.resource),
    ['partition 0 of "off"'],
  );
  await rejects_with(
    admin.deleteTopicRecords({ topic: 'off', partitions: [{ partition: 7, offset: '1' }] }),
    'UNKNOWN_TOPIC_OR_PARTITION',
  );
}
