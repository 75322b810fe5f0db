import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encode_record_batch } from '../protocol/record_batch.ts';
import { BrokerStats, records_in_batches } from './stats.ts';

const batch = (n: number) => encode_record_batch(Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${i}`), timestamp_ms: 0 })));

test('records are counted from batch headers, across concatenated batches', () => {
  assert.equal(records_in_batches(batch(1)), 1);
  assert.equal(records_in_batches(batch(7)), 7);
  assert.equal(records_in_batches(Buffer.concat([batch(3), batch(5)])), 8);
  assert.equal(records_in_batches(Buffer.alloc(0)), 0);
});

test('per-partition traffic and totals; counters of deleted partitions are pruned', () => {
  const stats = new BrokerStats();
  stats.record_in('a', 0, 3, 100);
  stats.record_in('a', 0, 2, 50);
  stats.record_out('a', 0, 4, 120);
  stats.record_in('b', 1, 1, 10);
  assert.deepEqual(stats.totals, { messages_in: 6, bytes_in: 160, messages_out: 4, bytes_out: 120 });
  assert.deepEqual([...stats.traffic()].map((t) => [t.topic, t.partition, t.messages_in, t.messages_out]), [['a', 0, 5, 4], ['b', 1, 1, 0]]);
  stats.prune((topic) => topic === 'a');
  assert.deepEqual([...stats.traffic()].map((t) => t.topic), ['a']);
  assert.equal(stats.totals.messages_in, 6, 'totals stay: they are since start');
  const seen: string[] = [];
  stats.request_done('Produce', 1);
  stats.observer = { request: (api) => void seen.push(api) };
  stats.request_done('Fetch', 2);
  assert.deepEqual(seen, ['Fetch']);
});
