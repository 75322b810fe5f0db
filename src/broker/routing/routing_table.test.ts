import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RoutingTable, headers_match } from './routing_table.ts';
import { topic_matcher } from './topic_match.ts';
import type { BindingRecord, ExchangeRecord, QueueRecord } from '../../core/types.ts';

const exchange = (name: string, type: ExchangeRecord['type'], args = {}): ExchangeRecord => ({
  name,
  type,
  durable: true,
  auto_delete: false,
  internal: false,
  arguments: args,
  declared_by: 1,
});
const queue = (name: string): QueueRecord => ({
  name,
  topic: name,
  group_id: `amqp.${name}`,
  durable: true,
  exclusive: false,
  auto_delete: false,
  arguments: {},
  owns_topic: true,
  declared_by: 1,
});
const to_queue = (source: string, destination: string, routing_key = '', args = {}): BindingRecord => ({
  source,
  destination,
  destination_type: 'queue',
  routing_key,
  arguments: args,
});

test('topic patterns: * is one word, # is zero or more, anywhere in the pattern', () => {
  const cases: Array<[string, string, boolean]> = [
    ['a.*', 'a.b', true],
    ['a.*', 'a', false],
    ['a.*', 'a.b.c', false],
    ['a.#', 'a', true],
    ['a.#', 'a.b.c', true],
    ['#', '', true],
    ['#', 'x.y', true],
    ['#.z', 'z', true],
    ['a.#.z', 'a.z', true],
    ['a.#.z', 'a.b.c.z', true],
    ['a.#.z', 'a.b.c', false],
    ['*.*', 'a.b', true],
    ['*', '', true],
    ['a.#.#.b', 'a.b', true],
    ['a.b', 'a.b', true],
    ['a.b', 'a.c', false],
  ];
  for (const [pattern, key, expected] of cases)
    assert.equal(topic_matcher(pattern)(key), expected, `${pattern} vs ${JSON.stringify(key)}`);
});

test('headers exchanges: x-match all and any ignore x- keys unless -with-x', () => {
  const headers = { format: 'pdf', type: 'report', 'x-tenant': 't1' };
  assert.equal(headers_match({ 'x-match': 'all', format: 'pdf', type: 'report' }, headers), true);
  assert.equal(headers_match({ 'x-match': 'all', format: 'pdf', type: 'log' }, headers), false);
  assert.equal(headers_match({ 'x-match': 'any', format: 'zip', type: 'report' }, headers), true);
  assert.equal(headers_match({ format: 'pdf' }, headers), true, 'all is the default');
  assert.equal(headers_match({ 'x-match': 'all', 'x-tenant': 't2' }, headers), true, 'x- keys ignored by all');
  assert.equal(headers_match({ 'x-match': 'all-with-x', 'x-tenant': 't2' }, headers), false);
  assert.equal(headers_match({ 'x-match': 'any-with-x', 'x-tenant': 't1' }, headers), true);
  assert.equal(headers_match({ 'x-match': 'all', missing: null }, headers), false, 'a key the message lacks');
});

test('routing follows exchange bindings once each, and an alternate exchange takes what routes nowhere', () => {
  const table = new RoutingTable({
    exchanges: [
      exchange('front', 'direct', { 'alternate-exchange': 'unrouted' }),
      exchange('back', 'fanout'),
      exchange('unrouted', 'fanout'),
    ],
    queues: [queue('q1'), queue('q2'), queue('lost')],
    bindings: [
      to_queue('front', 'q1', 'k'),
      { source: 'front', destination: 'back', destination_type: 'exchange', routing_key: 'k', arguments: {} },
      { source: 'back', destination: 'front', destination_type: 'exchange', routing_key: '', arguments: {} },
      to_queue('back', 'q2'),
      to_queue('unrouted', 'lost'),
    ],
  });
  assert.deepEqual(
    table
      .route('front', 'k', null)
      .map((q) => q.name)
      .sort(),
    ['q1', 'q2'],
  );
  assert.deepEqual(
    table.route('front', 'other', null).map((q) => q.name),
    ['lost'],
  );
  assert.deepEqual(
    table.route('', 'q1', null).map((q) => q.name),
    ['q1'],
    'the default exchange routes by name',
  );
  assert.deepEqual(table.route('', 'nope', null), []);
  assert.deepEqual(table.route('missing', 'k', null), []);
});

test('bindings are added once, removed with their queue, and kept in the definitions', () => {
  const table = new RoutingTable();
  table.exchanges.set('x', exchange('x', 'topic'));
  table.queues.set('q', queue('q'));
  table.add_binding(to_queue('x', 'q', 'a.*'));
  table.add_binding(to_queue('x', 'q', 'a.*'));
  assert.equal(table.bindings().length, 1);
  assert.equal(table.definitions().exchanges.length, 1, 'the standard exchanges are not stored');
  table.remove_bindings_of('q', 'queue');
  assert.equal(table.bindings().length, 0);
  assert.equal(table.bound_to('q', 'queue'), false);
});

test('an auto-delete exchange goes with its last binding, its own bindings with it; one never bound stays', () => {
  const table = new RoutingTable();
  const auto = (name: string): ExchangeRecord => ({ ...exchange(name, 'fanout'), auto_delete: true });
  for (const name of ['a', 'b', 'idle']) table.exchanges.set(name, auto(name));
  table.queues.set('q1', queue('q1'));
  table.queues.set('q2', queue('q2'));
  table.add_binding(to_queue('a', 'q1'));
  table.add_binding(to_queue('a', 'q2'));
  // b's only binding is to a: when a goes, b loses its last binding and goes too.
  table.add_binding({ source: 'b', destination: 'a', destination_type: 'exchange', routing_key: '', arguments: {} });
  table.remove_binding(to_queue('a', 'q1'));
  assert.ok(table.exchanges.has('a'), 'one binding left');
  table.remove_bindings_of('q2', 'queue'); // q2 deleted
  assert.equal(table.exchanges.has('a'), false);
  assert.equal(table.exchanges.has('b'), false);
  assert.deepEqual(table.bindings(), []);
  assert.ok(table.exchanges.has('idle'), 'never bound');
});
