import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GroupCoordinator } from './group_coordinator.ts';
import { CONSUMER_GROUP_SETTINGS_DEFAULT } from './consumer_groups/consumer_group_coordinator.ts';
import { type JoinRequest } from '../core/types.ts';
import { BrokerError } from '../core/errors.ts';
import type { OffsetStore } from './offset_store.ts';
import { SYSTEM_CLOCK } from '../core/clock.ts';

// The coordinator's timers do not keep a process alive (a broker's listener does); tests hold it.
const keep_alive = setInterval(() => undefined, 1000);
test.after(() => clearInterval(keep_alive));

const no_offsets = {
  has_group: () => false,
  group_ids: () => [],
  delete_group: async () => undefined,
} as unknown as OffsetStore;
const settings = {
  session_timeout_ms_min: 10,
  session_timeout_ms_max: 60_000,
  initial_rebalance_delay_ms: 0,
  members_max: 10,
  consumer: CONSUMER_GROUP_SETTINGS_DEFAULT,
};

function join(overrides: Partial<JoinRequest> = {}): JoinRequest {
  return {
    group_id: 'g',
    member_id: '',
    group_instance_id: null,
    client_id: 'c',
    client_host: '127.0.0.1',
    session_timeout_ms: 10_000,
    rebalance_timeout_ms: 300,
    protocol_type: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from('m') }],
    require_known_member_id: false,
    ...overrides,
  };
}

function kind(expected: string) {
  return (error: unknown) => error instanceof BrokerError && error.kind === expected;
}

test('a member without id is given one and must join with it (JoinGroup v4+)', async () => {
  const groups = new GroupCoordinator(no_offsets, settings, SYSTEM_CLOCK);
  let id = '';
  assert.throws(
    () => groups.join(join({ require_known_member_id: true })),
    (error: unknown) => {
      id = (error as { member_id: string }).member_id;
      return kind('member_id_required')(error);
    },
  );
  const joined = await groups.join(join({ member_id: id, require_known_member_id: true }));
  assert.equal(joined.member_id, id);
  assert.equal(joined.leader, id);
  assert.equal(joined.generation_id, 1);
  assert.throws(() => groups.join(join({ member_id: 'stranger' })), kind('unknown_member_id'));
  groups.close();
});

test('two members: one generation, the leader assigns, followers wait for the assignment', async () => {
  const groups = new GroupCoordinator(no_offsets, settings, SYSTEM_CLOCK);
  const first = await groups.join(join());
  // A second member triggers a rebalance; the first re-joins after its heartbeat says so.
  const second_join = groups.join(join({ client_id: 'c2' }));
  assert.throws(() => groups.heartbeat('g', first.member_id, first.generation_id, null), kind('rebalance_in_progress'));
  const first_again = groups.join(join({ member_id: first.member_id }));
  const [a, b] = await Promise.all([first_again, second_join]);
  assert.equal(a.generation_id, 2);
  assert.equal(b.generation_id, 2);
  const leader = a.leader === a.member_id ? a : b;
  const follower = leader === a ? b : a;
  assert.equal(leader.members.length, 2);
  assert.equal(follower.members.length, 0);
  const follower_sync = groups.sync('g', follower.member_id, 2, null, []);
  const leader_sync = await groups.sync('g', leader.member_id, 2, null, [
    { member_id: leader.member_id, assignment: Buffer.from('L') },
    { member_id: follower.member_id, assignment: Buffer.from('F') },
  ]);
  assert.equal(leader_sync.assignment.toString(), 'L');
  assert.equal((await follower_sync).assignment.toString(), 'F');
  assert.equal(groups.describe('g').state, 'stable');
  assert.throws(() => groups.heartbeat('g', follower.member_id, 1, null), kind('illegal_generation'));
  assert.throws(() => groups.validate_commit('g', follower.member_id, 1, null), kind('illegal_generation'));
  groups.validate_commit('g', follower.member_id, 2, null);
  groups.close();
});

test('members that miss their session timeout leave and the group rebalances without them', async () => {
  const groups = new GroupCoordinator(no_offsets, settings, SYSTEM_CLOCK);
  const a = await groups.join(join({ session_timeout_ms: 50 }));
  await groups.sync('g', a.member_id, a.generation_id, null, [
    { member_id: a.member_id, assignment: Buffer.from('x') },
  ]);
  await new Promise((resolve) => setTimeout(resolve, 120));
  assert.equal(groups.describe('g').members.length, 0);
  assert.equal(groups.describe('g').state, 'empty');
  assert.throws(() => groups.heartbeat('g', a.member_id, a.generation_id, null), kind('unknown_member_id'));
  groups.close();
});

test('a member that does not re-join within the rebalance timeout is dropped from the generation', async () => {
  const groups = new GroupCoordinator(no_offsets, settings, SYSTEM_CLOCK);
  const a = await groups.join(join({ rebalance_timeout_ms: 100 }));
  await groups.sync('g', a.member_id, a.generation_id, null, []);
  const b = await groups.join(join({ rebalance_timeout_ms: 100, client_id: 'b' })); // a never re-joins
  assert.equal(b.generation_id, 2);
  assert.equal(b.leader, b.member_id);
  assert.equal(groups.describe('g').members.length, 1);
  groups.close();
});

test('static membership: a restarted instance takes over its place and fences the old member', async () => {
  const groups = new GroupCoordinator(no_offsets, settings, SYSTEM_CLOCK);
  const old = await groups.join(join({ group_instance_id: 'worker-1' }));
  await groups.sync('g', old.member_id, old.generation_id, 'worker-1', []);
  const renewed = await groups.join(join({ group_instance_id: 'worker-1' }));
  assert.notEqual(renewed.member_id, old.member_id);
  assert.throws(
    () => groups.heartbeat('g', old.member_id, renewed.generation_id, 'worker-1'),
    kind('fenced_instance_id'),
  );
  assert.throws(
    () => groups.join(join({ member_id: old.member_id, group_instance_id: 'worker-1' })),
    kind('fenced_instance_id'),
  );
  const [left] = groups.leave('g', [{ member_id: '', group_instance_id: 'worker-1' }]);
  assert.equal(left, null);
  assert.equal(groups.describe('g').members.length, 0);
  groups.close();
});

test('bad joins are refused with the reason', () => {
  const groups = new GroupCoordinator(no_offsets, settings, SYSTEM_CLOCK);
  assert.throws(() => groups.join(join({ group_id: '' })), kind('invalid_group_id'));
  assert.throws(() => groups.join(join({ session_timeout_ms: 1 })), kind('invalid_session_timeout'));
  void groups.join(join());
  assert.throws(() => groups.join(join({ protocol_type: 'connect' })), kind('inconsistent_group_protocol'));
  assert.throws(
    () => groups.join(join({ protocols: [{ name: 'other', metadata: Buffer.alloc(0) }] })),
    kind('inconsistent_group_protocol'),
  );
  groups.close();
});

/** A consumer protocol subscription (v0): version, the topics, empty user data. */
function subscription(...topics: string[]): Buffer {
  const parts = [Buffer.from([0, 0]), Buffer.alloc(4)];
  parts[1]!.writeInt32BE(topics.length);
  for (const topic of topics) {
    const length = Buffer.alloc(2);
    length.writeInt16BE(Buffer.byteLength(topic));
    parts.push(length, Buffer.from(topic));
  }
  return Buffer.concat([...parts, Buffer.alloc(4)]);
}

test('deleting offsets keeps those of topics a member is subscribed to (group_subscribed_to_topic)', async () => {
  const deleted: Array<{ topic: string; partition: number }> = [];
  const offsets = {
    has_group: () => true,
    group_ids: () => ['g'],
    delete_offsets: async (_group: string, partitions: Array<{ topic: string; partition: number }>) =>
      void deleted.push(...partitions),
  } as unknown as OffsetStore;
  const groups = new GroupCoordinator(offsets, settings, SYSTEM_CLOCK);
  await groups.join(join({ protocols: [{ name: 'range', metadata: subscription('orders') }] }));
  const outcomes = await groups.delete_offsets('g', [
    { topic: 'orders', partition: 0 },
    { topic: 'audit', partition: 1 },
  ]);
  assert.ok(kind('group_subscribed_to_topic')(outcomes[0]));
  assert.equal(outcomes[1], null);
  assert.deepEqual(deleted, [{ topic: 'audit', partition: 1 }]);
  await assert.rejects(
    new GroupCoordinator(no_offsets, settings, SYSTEM_CLOCK).delete_offsets('none', []),
    kind('group_id_not_found'),
  );
  groups.close();
});

test('a group id used by classic members, then KIP-848 ones, is described and listed as what it is now', async () => {
  const groups = new GroupCoordinator(no_offsets, settings, SYSTEM_CLOCK);
  const joined = await groups.join(join());
  groups.leave('g', [{ member_id: joined.member_id, group_instance_id: null }]);
  groups.consumer.heartbeat({
    group_id: 'g',
    member_id: 'x',
    member_epoch: 0,
    instance_id: null,
    rack_id: null,
    rebalance_timeout_ms: 1000,
    subscribed_topic_names: [],
    subscribed_topic_regex: null,
    server_assignor: null,
    owned: null,
    client_id: 'c',
    client_host: 'h',
  });
  const described = groups.describe('g');
  assert.equal(described.protocol_type, 'consumer');
  assert.equal(described.members.length, 1);
  assert.deepEqual(
    groups.list().map((g) => [g.group_id, g.type]),
    [['g', 'consumer']],
  );
  assert.throws(() => groups.join(join()), kind('inconsistent_group_protocol'));
  groups.close();
});
