import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerStats } from './stats.ts';

test('per-partition traffic and totals; counters of deleted partitions are pruned', () => {
  const stats = new BrokerStats((topic) => topic === 'a');
  stats.record_in('a', 0, 3, 100);
  stats.record_in('a', 0, 2, 50);
  stats.record_out('a', 0, 4, 120);
  stats.record_in('b', 1, 1, 10);
  assert.deepEqual(stats.totals, { messages_in: 6, bytes_in: 160, messages_out: 4, bytes_out: 120 });
  assert.deepEqual(
    [...stats.traffic()].map((t) => [t.topic, t.partition, t.messages_in, t.messages_out]),
    [
      ['a', 0, 5, 4],
      ['b', 1, 1, 0],
    ],
  );
  stats.prune();
  assert.deepEqual(
    [...stats.traffic()].map((t) => t.topic),
    ['a'],
  );
  assert.equal(stats.totals.messages_in, 6, 'totals stay: they are since start');
  const seen: string[] = [];
  stats.request_done('Produce', 1);
  stats.observer = { request: (api) => void seen.push(api) };
  stats.request_done('Fetch', 2);
  assert.deepEqual(seen, ['Fetch']);
});
