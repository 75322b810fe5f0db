// The Kafka front end on group protocol errors, seen through a raw TCP client: wrong generations,
// unknown member ids and an empty group id refused with their error codes, leaving the member that
// did join undisturbed. Afterwards the canary connection must still get answers and the records
// acknowledged before must still be readable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Value } from '../../../src/protocol/kafka/codec.ts';
import { ErrorCode } from '../../../src/protocol/kafka/error_codes.ts';
import { OFFSET_COMMIT } from '../../../src/protocol/kafka/messages/08_offset_commit.ts';
import { OFFSET_FETCH } from '../../../src/protocol/kafka/messages/09_offset_fetch.ts';
import { JOIN_GROUP } from '../../../src/protocol/kafka/messages/11_join_group.ts';
import { HEARTBEAT } from '../../../src/protocol/kafka/messages/12_heartbeat.ts';
import { SYNC_GROUP } from '../../../src/protocol/kafka/messages/14_sync_group.ts';
import { CONSUMER_GROUP_HEARTBEAT } from '../../../src/protocol/kafka/messages/68_consumer_group_heartbeat.ts';
import type { RawClient } from './raw_client.ts';
import { V, bad_input_broker, create_topic, only_partition, type Row } from './support.ts';

const broker = bad_input_broker();

/** The group calls of one member connection, for `group` and its offsets in partition 0 of `topic`. */
function group_calls(client: RawClient, group: string, topic: string) {
  const join_body = (member_id: string, group_id = group): Value => ({
    group_id,
    session_timeout_ms: 10_000,
    rebalance_timeout_ms: 5_000,
    member_id,
    group_instance_id: null,
    protocol_type: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from('subscription') }],
  });
  const heartbeat = (generation_id: number, member: string) =>
    client.call(HEARTBEAT, V.heartbeat, { group_id: group, generation_id, member_id: member, group_instance_id: null });
  const sync = (generation_id: number, member: string) =>
    client.call(SYNC_GROUP, V.sync_group, {
      group_id: group,
      generation_id,
      member_id: member,
      group_instance_id: null,
      assignments: [],
    });
  const commit = async (generation_id: number, member: string): Promise<number> => {
    const partition = { partition_index: 0, committed_offset: 7, committed_leader_epoch: -1, committed_metadata: null };
    const response = await client.call(OFFSET_COMMIT, V.offset_commit, {
      group_id: group,
      generation_id_or_member_epoch: generation_id,
      member_id: member,
      group_instance_id: null,
      topics: [{ name: topic, partitions: [partition] }],
    });
    return only_partition(response, 'topics', 'partitions').error_code as number;
  };
  return { join_body, heartbeat, sync, commit };
}

// ---------------------------------------------------------------- 6. group errors

test('6. group membership errors', async () => {
  const GROUP = 'bad-input-group';
  const TOPIC = 'group-topic';
  await create_topic(broker.canary, TOPIC);
  const client = await broker.connect();
  const { join_body, heartbeat, sync, commit } = group_calls(client, GROUP, TOPIC);

  const first = await client.call(JOIN_GROUP, V.join_group, join_body(''));
  assert.equal(first.error_code, ErrorCode.MEMBER_ID_REQUIRED);
  const member_id = first.member_id as string;
  assert.ok(member_id.length > 0, 'MEMBER_ID_REQUIRED carries a member id');

  const joined = await client.call(JOIN_GROUP, V.join_group, join_body(member_id));
  assert.equal(joined.error_code, 0);
  assert.equal(joined.member_id, member_id);
  assert.equal(joined.leader, member_id);
  const generation = joined.generation_id as number;
  assert.ok(generation >= 1);
  assert.equal((joined.members as Row[]).length, 1);

  const synced = await client.call(SYNC_GROUP, V.sync_group, {
    group_id: GROUP,
    generation_id: generation,
    member_id,
    group_instance_id: null,
    assignments: [{ member_id, assignment: Buffer.from('assignment') }],
  });
  assert.equal(synced.error_code, 0);
  assert.deepEqual(synced.assignment, Buffer.from('assignment'));

  assert.equal((await heartbeat(generation, member_id)).error_code, 0);

  // A wrong generation.
  assert.equal((await heartbeat(generation + 1, member_id)).error_code, ErrorCode.ILLEGAL_GENERATION);
  assert.equal((await sync(generation + 1, member_id)).error_code, ErrorCode.ILLEGAL_GENERATION);
  assert.equal(await commit(generation + 1, member_id), ErrorCode.ILLEGAL_GENERATION);
  assert.equal((await heartbeat(generation - 1, member_id)).error_code, ErrorCode.ILLEGAL_GENERATION);

  // An unknown member id.
  assert.equal((await heartbeat(generation, 'nobody')).error_code, ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal((await sync(generation, 'nobody')).error_code, ErrorCode.UNKNOWN_MEMBER_ID);
  assert.equal(await commit(generation, 'nobody'), ErrorCode.UNKNOWN_MEMBER_ID);
  const stranger = await client.call(JOIN_GROUP, V.join_group, join_body('nobody'));
  assert.equal(stranger.error_code, ErrorCode.UNKNOWN_MEMBER_ID);

  // An empty group id.
  const empty = await client.call(JOIN_GROUP, V.join_group, join_body('', ''));
  assert.equal(empty.error_code, ErrorCode.INVALID_GROUP_ID);

  // None of that disturbed the member: it is still in the same generation and can commit.
  assert.equal((await heartbeat(generation, member_id)).error_code, 0);
  assert.equal(await commit(generation, member_id), 0);
  const offsets = { group_id: GROUP, topics: [{ name: TOPIC, partition_indexes: [0] }], require_stable: false };
  const fetched = await client.call(OFFSET_FETCH, V.offset_fetch, offsets);
  assert.equal(only_partition(fetched, 'topics', 'partitions').committed_offset, 7);
  await broker.assert_healthy();
});

// ---------------------------------------------------------------- 6b. KIP-848 consumer group errors

test('6b. consumer group (KIP-848) heartbeat errors', async () => {
  const GROUP = 'bad-input-848';
  const TOPIC = 'group-848-topic';
  await create_topic(broker.canary, TOPIC);
  const client = await broker.connect();
  const beat = (fields: Record<string, unknown>) =>
    client.call(CONSUMER_GROUP_HEARTBEAT, 1, {
      group_id: GROUP,
      member_id: 'member-848',
      member_epoch: 0,
      instance_id: null,
      rack_id: null,
      rebalance_timeout_ms: 30_000,
      subscribed_topic_names: [TOPIC],
      subscribed_topic_regex: null,
      server_assignor: null,
      topic_partitions: [],
      ...fields,
    });
  const code = async (fields: Record<string, unknown>) => (await beat(fields)).error_code;

  // A regex that could take exponential time is refused at once, without running it.
  assert.equal(await code({ subscribed_topic_regex: '(a+)+$' }), ErrorCode.INVALID_REGULAR_EXPRESSION);
  assert.equal(await code({ subscribed_topic_regex: '[' }), ErrorCode.INVALID_REGULAR_EXPRESSION);
  assert.equal(await code({ server_assignor: 'sticky' }), ErrorCode.UNSUPPORTED_ASSIGNOR);
  assert.equal(await code({ member_id: '' }), ErrorCode.INVALID_REQUEST);
  assert.equal(await code({ group_id: '' }), ErrorCode.INVALID_GROUP_ID);
  assert.equal(await code({ subscribed_topic_names: null }), ErrorCode.INVALID_REQUEST);
  assert.equal(await code({ member_epoch: 7 }), ErrorCode.FENCED_MEMBER_EPOCH);

  const joined = await beat({});
  assert.equal(joined.error_code, 0);
  const epoch = joined.member_epoch as number;
  assert.equal(await code({ member_epoch: epoch + 3, subscribed_topic_names: null }), ErrorCode.FENCED_MEMBER_EPOCH);
  // A classic member of the same group is refused while it is a consumer group.
  const classic = await client.call(JOIN_GROUP, V.join_group, group_calls(client, GROUP, TOPIC).join_body(''));
  assert.equal(classic.error_code, ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
  // A commit at a stale epoch; then at the member's epoch.
  const commit = (member_epoch: number) =>
    client.call(OFFSET_COMMIT, V.offset_commit, {
      group_id: GROUP,
      generation_id_or_member_epoch: member_epoch,
      member_id: 'member-848',
      group_instance_id: null,
      topics: [
        {
          name: TOPIC,
          partitions: [
            { partition_index: 0, committed_offset: 3, committed_leader_epoch: -1, committed_metadata: null },
          ],
        },
      ],
    });
  assert.equal(
    only_partition(await commit(epoch - 1), 'topics', 'partitions').error_code,
    ErrorCode.STALE_MEMBER_EPOCH,
  );
  assert.equal(only_partition(await commit(epoch), 'topics', 'partitions').error_code, 0);
  const left = await beat({ member_epoch: -1, subscribed_topic_names: null });
  assert.equal(left.error_code, 0);
  assert.equal(left.member_epoch, -1);
  await broker.assert_healthy();
});
