// The KIP-932 share-group membership APIs on bad input, sent as raw protocol requests to a real
// broker process: malformed joins and stale member epochs (ShareGroupHeartbeat), fetches by members
// that never joined, describing groups that do not exist, and group configs with a bad value. Each
// case asserts the exact error code, that the refused request changed nothing it should not have,
// and that the broker still serves well-formed requests afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/kafka/error_codes.ts';
import { DESCRIBE_CONFIGS } from '../../../src/protocol/kafka/messages/32_describe_configs.ts';
import { INCREMENTAL_ALTER_CONFIGS } from '../../../src/protocol/kafka/messages/44_incremental_alter_configs.ts';
import { SHARE_GROUP_DESCRIBE } from '../../../src/protocol/kafka/messages/77_share_group_describe.ts';
import {
  ACCEPT,
  CANARY_TOPIC,
  V,
  acquired_ranges,
  acquired_values,
  assert_refused,
  batch,
  partition_row,
  share_bad_input_broker,
  type Row,
} from './support.ts';

const broker = share_bad_input_broker();
const { heartbeat, join, share_fetch, topic_with, assert_broker_healthy } = broker;

const describe_groups = (group_ids: string[]) =>
  broker.conn.call(SHARE_GROUP_DESCRIBE, V.describe, { group_ids, include_authorized_operations: false });

// ---------------------------------------------------------------- 1. heartbeats

test('1. ShareGroupHeartbeat: empty member id, a join without topics, a stale epoch, an unknown member', async () => {
  const GROUP = 'hb-group';
  const TOPIC = 'hb-topic';
  const topic_id = await topic_with(TOPIC, ['hb-0']);

  // The consumer generates its member id: an empty one is refused, and nobody joins.
  const empty = await heartbeat(GROUP, '', 0, [TOPIC]);
  assert.equal(empty.error_code, ErrorCode.INVALID_REQUEST);
  assert.equal(empty.member_epoch, -1);
  assert.equal(empty.assignment, null);

  // A join must name the topics it subscribes to.
  const no_topics = await heartbeat(GROUP, 'hb-a', 0, null);
  assert.equal(no_topics.error_code, ErrorCode.INVALID_REQUEST);
  assert.equal(no_topics.member_epoch, -1);

  // A share group needs a name.
  assert.equal((await heartbeat('', 'hb-a', 0, [TOPIC])).error_code, ErrorCode.INVALID_GROUP_ID);

  const joined = await heartbeat(GROUP, 'hb-a', 0, [TOPIC]);
  assert.equal(joined.error_code, 0);
  const first_epoch = joined.member_epoch as number;
  assert.ok(first_epoch >= 1);
  assert.deepEqual(joined.assignment, { topic_partitions: [{ topic_id, partitions: [0] }] });
  // Changing the subscription moves the member to a new epoch (twice, to have stale ones below it).
  const widened = await heartbeat(GROUP, 'hb-a', first_epoch, [TOPIC, CANARY_TOPIC]);
  assert.equal(widened.error_code, 0);
  assert.ok((widened.member_epoch as number) > first_epoch);
  const narrowed = await heartbeat(GROUP, 'hb-a', widened.member_epoch as number, [TOPIC]);
  assert.equal(narrowed.error_code, 0);
  const epoch = narrowed.member_epoch as number;
  assert.ok(epoch > (widened.member_epoch as number));
  assert.deepEqual(narrowed.assignment, { topic_partitions: [{ topic_id, partitions: [0] }] });

  // A known member with an epoch that is not its current one is fenced, above or below it.
  for (const wrong of [epoch + 1, epoch + 5, first_epoch, widened.member_epoch as number, -2]) {
    const fenced = await heartbeat(GROUP, 'hb-a', wrong, null);
    assert.equal(fenced.error_code, ErrorCode.FENCED_MEMBER_EPOCH, `epoch ${wrong} (current ${epoch})`);
    assert.equal(fenced.member_epoch, -1);
    assert.equal(fenced.assignment, null);
  }

  // A member the group does not know, with a non-zero epoch.
  const ghost = await heartbeat(GROUP, 'hb-ghost', 5, null);
  assert.equal(ghost.error_code, ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(ghost.member_epoch, -1);

  // None of it disturbed the member: its epoch still holds, and the group has only it.
  const again = await heartbeat(GROUP, 'hb-a', epoch, null);
  assert.equal(again.error_code, 0);
  assert.equal(again.member_epoch, epoch);
  const described = await describe_groups([GROUP]);
  const [group] = described.groups as Row[];
  assert.equal(group!.error_code, 0);
  assert.deepEqual(
    (group!.members as Row[]).map((m) => [m.member_id, m.member_epoch]),
    [['hb-a', epoch]],
  );
  // ... and it still fetches.
  const fetched = await share_fetch({ group: GROUP, member: 'hb-a', epoch: 0, partitions: [{ topic_id }] });
  assert.deepEqual(acquired_values(partition_row(fetched, topic_id)), ['hb-0']);
  await assert_broker_healthy();
});

// ---------------------------------------------------------------- 2. strangers

test('2. ShareFetch by a member that never joined is refused with UNKNOWN_MEMBER_ID and acquires nothing', async () => {
  const GROUP = 'stranger-group';
  const TOPIC = 'stranger-topic';
  const topic_id = await topic_with(TOPIC, ['s-0', 's-1']);

  // A group that does not exist at all.
  const nowhere = await share_fetch({
    group: 'no-such-share-group',
    member: 'stranger',
    epoch: 0,
    partitions: [{ topic_id }],
  });
  assert_refused(nowhere, ErrorCode.UNKNOWN_MEMBER_ID, 'no such group');

  // A group that exists, by a member that is not in it (and with an acknowledgement piggybacked).
  const epoch = await join(GROUP, 'member', [TOPIC]);
  assert.ok(epoch >= 1);
  const partitions = [{ topic_id, acks: [batch(0, 0, ACCEPT)] }];
  const stranger = await share_fetch({ group: GROUP, member: 'stranger', epoch: 0, partitions });
  assert_refused(stranger, ErrorCode.UNKNOWN_MEMBER_ID, 'a stranger in a live group');

  // Nothing was acquired or accepted on the stranger's behalf: the member gets both records, first delivery.
  const fetched = await share_fetch({ group: GROUP, member: 'member', epoch: 0, partitions: [{ topic_id }] });
  assert.equal(fetched.error_code, 0);
  assert.deepEqual(acquired_ranges(partition_row(fetched, topic_id)), [[0, 1, 1]]);
  assert.deepEqual(acquired_values(partition_row(fetched, topic_id)), ['s-0', 's-1']);
  await assert_broker_healthy();
});

// ---------------------------------------------------------------- 9. describe

/** The fields of a described member that the test compares. */
function member_view(m: Row): Row {
  return {
    member_id: m.member_id,
    member_epoch: m.member_epoch,
    client_id: m.client_id,
    subscribed_topic_names: m.subscribed_topic_names,
    assignment: m.assignment,
  };
}

test('9. ShareGroupDescribe: unknown group is GROUP_ID_NOT_FOUND, a live one is Stable with its members', async () => {
  const GROUP = 'described-group';
  const TOPIC = 'described-topic';
  const topic_id = await topic_with(TOPIC, ['d-0']);

  const unknown = await describe_groups(['never-seen-group']);
  const [missing] = unknown.groups as Row[];
  assert.equal(missing!.group_id, 'never-seen-group');
  assert.equal(missing!.error_code, ErrorCode.GROUP_ID_NOT_FOUND);
  assert.equal(missing!.group_state, 'Dead');
  assert.deepEqual(missing!.members, []);

  const epoch_x = await join(GROUP, 'member-x', [TOPIC]);
  const epoch_y = await join(GROUP, 'member-y', [TOPIC]);
  const both = await describe_groups(['never-seen-group', GROUP]);
  const [still_missing, live] = both.groups as Row[];
  assert.equal(still_missing!.error_code, ErrorCode.GROUP_ID_NOT_FOUND, 'one unknown group does not fail the others');
  assert.equal(live!.error_code, 0);
  assert.equal(live!.error_message, null);
  assert.equal(live!.group_id, GROUP);
  assert.equal(live!.group_state, 'Stable');
  assert.equal(live!.group_epoch, epoch_y);
  const members = (live!.members as Row[]).map(member_view);
  members.sort((a, b) => String(a.member_id).localeCompare(String(b.member_id)));
  const assignment = { topic_partitions: [{ topic_id, topic_name: TOPIC, partitions: [0] }] };
  const client_id = 'share-bad-input-test';
  assert.deepEqual(members, [
    { member_id: 'member-x', member_epoch: epoch_x, client_id, subscribed_topic_names: [TOPIC], assignment },
    { member_id: 'member-y', member_epoch: epoch_y, client_id, subscribed_topic_names: [TOPIC], assignment },
  ]);

  // When every member has left, the group is Empty (not gone).
  for (const member of ['member-x', 'member-y']) {
    assert.equal((await heartbeat(GROUP, member, -1, null)).error_code, 0);
  }
  const [emptied] = (await describe_groups([GROUP])).groups as Row[];
  assert.equal(emptied!.error_code, 0);
  assert.equal(emptied!.group_state, 'Empty');
  assert.deepEqual(emptied!.members, []);
  await assert_broker_healthy();
});

// ---------------------------------------------------------------- 12. group configs

test(
  '12. group configs through IncrementalAlterConfigs and DescribeConfigs (resource type 32); ' +
    'a bad value is INVALID_CONFIG',
  async () => {
    const GROUP_RESOURCE = 32;
    const alter = (configs: Array<{ name: string; config_operation: number; value: string | null }>) =>
      broker.conn.call(INCREMENTAL_ALTER_CONFIGS, 1, {
        resources: [{ resource_type: GROUP_RESOURCE, resource_name: 'configured-group', configs }],
        validate_only: false,
      });
    const refused = await alter([{ name: 'share.delivery.count.limit', config_operation: 0, value: 'lots' }]);
    assert.equal((refused.responses as Row[])[0]!.error_code, ErrorCode.INVALID_CONFIG);
    const ok = await alter([
      { name: 'share.record.lock.duration.ms', config_operation: 0, value: '5000' },
      { name: 'sluice.share.ordering', config_operation: 0, value: 'key' },
    ]);
    assert.equal((ok.responses as Row[])[0]!.error_code, 0);
    const described = await broker.conn.call(DESCRIBE_CONFIGS, 4, {
      resources: [{ resource_type: GROUP_RESOURCE, resource_name: 'configured-group', configuration_keys: null }],
      include_synonyms: false,
      include_documentation: false,
    });
    const configs = ((described.results as Row[])[0]!.configs as Row[]).map((c) => [c.name, c.value, c.config_source]);
    assert.deepEqual(
      configs.find((c) => c[0] === 'share.record.lock.duration.ms'),
      ['share.record.lock.duration.ms', '5000', 8],
      'GROUP_CONFIG source',
    );
    assert.deepEqual(
      configs.find((c) => c[0] === 'sluice.share.ordering'),
      ['sluice.share.ordering', 'key', 8],
    );
    assert.deepEqual(
      configs.find((c) => c[0] === 'share.delivery.count.limit'),
      ['share.delivery.count.limit', '5', 5],
      'DEFAULT_CONFIG source',
    );
    const removed = await alter([{ name: 'sluice.share.ordering', config_operation: 1, value: null }]);
    assert.equal((removed.responses as Row[])[0]!.error_code, 0);
    await assert_broker_healthy();
  },
);
