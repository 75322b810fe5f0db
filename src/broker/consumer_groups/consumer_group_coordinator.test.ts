import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerError } from '../../core/errors.ts';
import type { ConsumerHeartbeatRequest, GroupConfigs } from '../../core/types.ts';
import { validate_group_configs } from '../queues/group_config.ts';
import {
  CONSUMER_GROUP_SETTINGS_DEFAULT,
  ConsumerGroupCoordinator,
  type ConsumerGroupSettings,
} from './consumer_group_coordinator.ts';
import { RANGE_ASSIGNOR, UNIFORM_ASSIGNOR } from './assignors.ts';

// The coordinator's timers do not keep a process alive (a broker's listener does); tests hold it.
const keep_alive = setInterval(() => undefined, 1000);
test.after(() => clearInterval(keep_alive));

const TOPICS = new Map([
  ['orders', 6],
  ['payments', 6],
  ['audit', 2],
]);
const topics = {
  get: (name: string) => (TOPICS.has(name) ? { partitions: TOPICS.get(name)! } : undefined),
  list: () => [...TOPICS.keys()].map((name) => ({ name })),
};

function coordinator(settings: Partial<ConsumerGroupSettings> = {}, classic = false) {
  return new ConsumerGroupCoordinator(
    { topics, classic_has_members: () => classic },
    { ...CONSUMER_GROUP_SETTINGS_DEFAULT, ...settings },
  );
}

function beat(overrides: Partial<ConsumerHeartbeatRequest>): ConsumerHeartbeatRequest {
  return {
    group_id: 'g',
    member_id: 'm1',
    member_epoch: 0,
    instance_id: null,
    rack_id: null,
    rebalance_timeout_ms: 60_000,
    subscribed_topic_names: ['orders'],
    subscribed_topic_regex: null,
    server_assignor: null,
    owned: null,
    client_id: 'test',
    client_host: '/127.0.0.1',
    ...overrides,
  };
}

const kind = (expected: string) => (error: unknown) => error instanceof BrokerError && error.kind === expected;
const total = (a: Map<string, number[]> | null) => [...(a ?? new Map()).values()].reduce((n, p) => n + p.length, 0);

/** A member's steady heartbeat: what it owns is what it was last told. */
class Member {
  epoch = 0;
  owned = new Map<string, number[]>();
  constructor(
    private readonly groups: ConsumerGroupCoordinator,
    readonly id: string,
    private readonly extra: Partial<ConsumerHeartbeatRequest> = {},
  ) {}
  beat() {
    const joining = this.epoch === 0;
    const result = this.groups.heartbeat(
      beat({
        member_id: this.id,
        member_epoch: this.epoch,
        owned: joining ? null : this.owned,
        ...(joining ? this.extra : { subscribed_topic_names: null, rebalance_timeout_ms: -1 }),
      }),
    );
    this.epoch = result.member_epoch;
    if (result.assignment) this.owned = new Map([...result.assignment].map(([t, p]) => [t, [...p]]));
    return result;
  }
}

test('members join and the partitions spread without anyone giving up what it keeps', () => {
  const groups = coordinator();
  const a = new Member(groups, 'a');
  a.beat();
  assert.equal(total(a.owned), 6);
  const b = new Member(groups, 'b');
  b.beat();
  // b's partitions are still a's: b waits for them, a is asked to give up three (its epoch stays).
  assert.equal(total(b.owned), 0);
  const before = a.epoch;
  a.beat();
  assert.equal(total(a.owned), 3);
  assert.equal(a.epoch, before, 'a member revoking keeps its epoch');
  assert.equal(groups.describe('g')!.state, 'reconciling');
  a.beat(); // reports it gave them up: it moves to the new epoch
  assert.ok(a.epoch > before);
  b.beat();
  assert.equal(total(b.owned), 3);
  assert.equal(groups.describe('g')!.state, 'stable');
  const mine = (m: Member) => m.owned.get('orders') ?? [];
  assert.deepEqual([...mine(a), ...mine(b)].sort(), [0, 1, 2, 3, 4, 5]);
});

test('a member leaving frees its partitions for the others', () => {
  const groups = coordinator();
  const a = new Member(groups, 'a');
  const b = new Member(groups, 'b');
  a.beat();
  b.beat();
  a.beat();
  a.beat();
  b.beat();
  groups.heartbeat(beat({ member_id: 'b', member_epoch: -1 }));
  a.beat();
  assert.equal(total(a.owned), 6);
  assert.deepEqual(groups.describe('g')!.members.length, 1);
  groups.heartbeat(beat({ member_id: 'a', member_epoch: -1 }));
  assert.equal(groups.describe('g'), null);
});

test('a wrong epoch is fenced; the previous one is accepted while the member owns only what it has', () => {
  const groups = coordinator();
  const a = new Member(groups, 'a');
  a.beat();
  assert.throws(
    () => groups.heartbeat(beat({ member_id: 'a', member_epoch: a.epoch + 5 })),
    kind('fenced_member_epoch'),
  );
  assert.throws(() => groups.heartbeat(beat({ member_id: 'zz', member_epoch: 3 })), kind('fenced_member_epoch'));
  const b = new Member(groups, 'b');
  b.beat();
  a.beat(); // revoking three
  const previous = a.epoch;
  a.beat(); // new epoch; suppose this answer was lost
  assert.ok(a.epoch > previous);
  const resent = groups.heartbeat(beat({ member_id: 'a', member_epoch: previous, owned: a.owned }));
  assert.equal(resent.member_epoch, a.epoch);
  assert.throws(
    () =>
      groups.heartbeat(
        beat({ member_id: 'a', member_epoch: previous, owned: new Map([['orders', [0, 1, 2, 3, 4, 5]]]) }),
      ),
    kind('fenced_member_epoch'),
  );
});

test('commits and offset fetches are checked against the member epoch', () => {
  const groups = coordinator();
  const a = new Member(groups, 'a');
  a.beat();
  assert.equal(groups.validate_commit('g', 'a', a.epoch), true);
  assert.throws(() => groups.validate_commit('g', 'a', a.epoch - 1), kind('stale_member_epoch'));
  assert.throws(() => groups.validate_commit('g', 'x', a.epoch), kind('unknown_member_id'));
  assert.throws(() => groups.validate_commit('g', '', -1), kind('unknown_member_id'));
  assert.equal(groups.validate_commit('other', '', -1), false, 'not a consumer group: the classic rules apply');
  assert.throws(() => groups.validate_fetch('g', 'a', a.epoch + 1), kind('stale_member_epoch'));
  groups.validate_fetch('g', 'a', a.epoch);
});

test('a static member away keeps its partitions; its next incarnation takes them over without a rebalance', () => {
  const groups = coordinator();
  const a = new Member(groups, 'a1', { instance_id: 'host-a' });
  const b = new Member(groups, 'b');
  a.beat();
  b.beat();
  a.beat();
  a.beat();
  b.beat();
  const epoch = groups.describe('g')!.epoch;
  const held = a.owned;
  groups.heartbeat(beat({ member_id: 'a1', member_epoch: -2, instance_id: 'host-a' }));
  const again = groups.heartbeat(beat({ member_id: 'a2', instance_id: 'host-a' }));
  assert.deepEqual(again.assignment, held);
  assert.ok(again.member_epoch > 0);
  assert.equal(groups.describe('g')!.epoch, epoch, 'no rebalance');
  assert.throws(
    () => groups.heartbeat(beat({ member_id: 'a3', instance_id: 'host-a' })),
    kind('unreleased_instance_id'),
  );
});

test('bad requests: unknown assignor, bad regex, classic members, size limit', () => {
  const groups = coordinator({ members_max: 1 });
  assert.throws(() => groups.heartbeat(beat({ server_assignor: 'sticky' })), kind('unsupported_assignor'));
  assert.throws(() => groups.heartbeat(beat({ subscribed_topic_regex: '(' })), kind('invalid_regular_expression'));
  assert.throws(() => groups.heartbeat(beat({ subscribed_topic_names: null })), kind('invalid_request'));
  assert.throws(() => groups.heartbeat(beat({ rebalance_timeout_ms: -1 })), kind('invalid_request'));
  groups.heartbeat(beat({}));
  assert.throws(() => groups.heartbeat(beat({ member_id: 'm2' })), kind('group_max_size_reached'));
  assert.throws(() => coordinator({}, true).heartbeat(beat({})), kind('inconsistent_group_protocol'));
  assert.equal(groups.describe('nothing'), null);
});

test('a regex subscription follows the topics that match it', () => {
  const groups = coordinator();
  const result = groups.heartbeat(beat({ subscribed_topic_names: [], subscribed_topic_regex: 'or.*|aud.t' }));
  assert.deepEqual([...result.assignment!.keys()].sort(), ['audit', 'orders']);
  // Only topics its principal may describe (ACLs) are matched.
  const limited = coordinator().heartbeat(
    beat({ subscribed_topic_names: [], subscribed_topic_regex: '.*', may_describe: (topic) => topic !== 'audit' }),
  );
  assert.deepEqual([...limited.assignment!.keys()].sort(), ['orders', 'payments']);
});

test('the session timeout removes a silent member, the rebalance timeout one keeping revoked partitions', async () => {
  const groups = coordinator({ session_timeout_ms: 60 });
  const a = new Member(groups, 'a');
  a.beat();
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.equal(groups.describe('g'), null);
  const slow = coordinator();
  const x = new Member(slow, 'x', { rebalance_timeout_ms: 50 });
  x.beat();
  new Member(slow, 'y').beat();
  x.beat(); // asked to revoke
  await new Promise((resolve) => setTimeout(resolve, 120));
  assert.deepEqual(
    slow.describe('g')!.members.map((m) => m.member_id),
    ['y'],
  );
});

test('uniform spreads evenly and keeps partitions in place; range gives co-partitioned ranges', () => {
  const members = ['a', 'b', 'c'].map((id) => ({
    member_id: id,
    instance_id: null,
    topics: ['orders', 'payments'],
    current: new Map<string, number[]>(),
  }));
  const count = (name: string) => TOPICS.get(name)!;
  const range = RANGE_ASSIGNOR.assign(members, count);
  assert.deepEqual(range.get('a')!.get('orders'), [0, 1]);
  assert.deepEqual(range.get('a')!.get('payments'), [0, 1]);
  assert.deepEqual(range.get('c')!.get('payments'), [4, 5]);
  const first = UNIFORM_ASSIGNOR.assign(members.slice(0, 2), count);
  assert.deepEqual([total(first.get('a')!), total(first.get('b')!)], [6, 6]);
  const grown = UNIFORM_ASSIGNOR.assign(
    members.map((m) => ({ ...m, current: first.get(m.member_id) ?? new Map() })),
    count,
  );
  assert.deepEqual(
    ['a', 'b', 'c'].map((id) => total(grown.get(id)!)),
    [4, 4, 4],
  );
  let moved = 0;
  for (const id of ['a', 'b'])
    for (const [topic, partitions] of first.get(id)!)
      moved += partitions.filter((p) => !(grown.get(id)!.get(topic) ?? []).includes(p)).length;
  assert.equal(moved, 4, 'only what the new member gets moves');
});

test("a group's own configs set its members' heartbeat interval and session timeout", async () => {
  const configs: Record<string, GroupConfigs> = {
    quick: { 'consumer.heartbeat.interval.ms': '700', 'consumer.session.timeout.ms': '1000' },
  };
  const groups = new ConsumerGroupCoordinator(
    { topics, classic_has_members: () => false, group_configs: (id) => configs[id] ?? {} },
    { ...CONSUMER_GROUP_SETTINGS_DEFAULT, session_timeout_ms: 60_000 },
  );
  assert.equal(groups.heartbeat(beat({ group_id: 'quick' })).heartbeat_interval_ms, 700);
  assert.equal(groups.heartbeat(beat({ group_id: 'other' })).heartbeat_interval_ms, 5_000);
  await new Promise((resolve) => setTimeout(resolve, 1_200));
  assert.equal(groups.describe('quick'), null, 'its member timed out after 1 s');
  assert.equal(groups.describe('other')!.members.length, 1);
  groups.close();
  assert.throws(
    () => validate_group_configs({ 'consumer.session.timeout.ms': '10' }),
    (error: unknown) => error instanceof BrokerError && error.kind === 'invalid_config',
  );
  validate_group_configs({ 'consumer.heartbeat.interval.ms': '250' });
});
