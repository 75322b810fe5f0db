// The admin client's consumer groups against an in-process broker: groups with and without
// members, their committed offsets set, fetched and reset, offsets reset by the admin picked up by
// a kafkajs consumer, and requests refused after disconnect.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AssignerProtocol } from 'kafkajs';
import { Admin } from './admin.ts';
import { Cluster, RETRY_DEFAULT } from './cluster.ts';
import {
  TEST_TIMEOUT_MS,
  admin,
  broker,
  produce,
  rejects_with,
  start,
  start_consumer,
  stop,
  until,
} from './admin_test_support.ts';

describe('Admin', () => {
  before(start);
  after(stop);
  test(
    'groups without members: setOffsets, fetchOffsets, resetOffsets, list, describe, delete',
    { timeout: TEST_TIMEOUT_MS },
    manages_empty_groups,
  );
  test(
    'a group with a kafkajs member; resetOffsets then a consumer starts at the reset position',
    { timeout: TEST_TIMEOUT_MS },
    manages_a_live_group,
  );
  test('after disconnect, requests are refused', { timeout: TEST_TIMEOUT_MS }, refuses_after_disconnect);
});

async function manages_empty_groups(): Promise<void> {
  await admin.createTopics({
    topics: [
      { topic: 'grp', numPartitions: 2 },
      { topic: 'grp-other', numPartitions: 1 },
    ],
  });
  await produce('grp', 0, 5);
  await produce('grp', 1, 3);
  await admin.deleteTopicRecords({ topic: 'grp', partitions: [{ partition: 0, offset: '2' }] });
  const GROUP = 'admin-group';

  await admin.setOffsets({
    groupId: GROUP,
    topic: 'grp',
    partitions: [
      { partition: 0, offset: '3' },
      { partition: 1, offset: 1 },
    ],
  });
  const expected = (o0: string, o1: string) => [
    {
      topic: 'grp',
      partitions: [
        { partition: 0, offset: o0, metadata: null },
        { partition: 1, offset: o1, metadata: null },
      ],
    },
  ];
  assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP, topics: ['grp'] }), expected('3', '1'));
  assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP }), expected('3', '1'), 'every topic the group committed');
  assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP, topics: ['grp-other'] }), [
    { topic: 'grp-other', partitions: [{ partition: 0, offset: '-1', metadata: null }] },
  ]);

  assert.ok((await admin.listGroups()).groups.some((g) => g.groupId === GROUP && g.protocolType === 'consumer'));
  assert.deepEqual(await admin.describeGroups([GROUP]), {
    groups: [{ groupId: GROUP, members: [], protocol: '', protocolType: '', state: 'Empty', errorCode: 0 }],
  });

  // Resets commit concrete offsets: the log start offset (2, records before it were deleted) and
  // the high watermark.
  await admin.resetOffsets({ groupId: GROUP, topic: 'grp', earliest: true });
  assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP, topics: ['grp'] }), expected('2', '0'));
  await admin.resetOffsets({ groupId: GROUP, topic: 'grp' });
  assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP, topics: ['grp'] }), expected('5', '3'));
  // -2 and -1 in setOffsets are resolved too.
  await admin.setOffsets({
    groupId: GROUP,
    topic: 'grp',
    partitions: [
      { partition: 0, offset: '-2' },
      { partition: 1, offset: '-1' },
    ],
  });
  assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP, topics: ['grp'] }), expected('2', '3'));

  await rejects_with(
    admin.setOffsets({ groupId: GROUP, topic: 'grp', partitions: [{ partition: 9, offset: '0' }] }),
    'UNKNOWN_TOPIC_OR_PARTITION',
  );
  await rejects_with(admin.fetchOffsets({ groupId: GROUP, topics: ['grp-missing'] }), 'UNKNOWN_TOPIC_OR_PARTITION');

  assert.deepEqual(await admin.deleteGroups([GROUP]), [{ groupId: GROUP, errorCode: 0 }]);
  assert.ok(!(await admin.listGroups()).groups.some((g) => g.groupId === GROUP));
  assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP, topics: ['grp'] }), expected('-1', '-1'));
  assert.equal((await admin.describeGroups([GROUP])).groups[0]!.state, 'Dead');
  await rejects_with(admin.deleteGroups(['never-existed']), 'GROUP_ID_NOT_FOUND');
}

async function manages_a_live_group(): Promise<void> {
  const GROUP = 'live-group';
  await admin.createTopics({ topics: [{ topic: 'live', numPartitions: 1 }] });
  await produce('live', 0, 6);
  await check_live_member(GROUP);
  await check_reset_to_earliest(GROUP);
  await check_reset_to_latest(GROUP);
}

/** The group with a kafkajs member: described, its offsets and the group itself not to be changed. */
async function check_live_member(group: string): Promise<void> {
  const seen: Array<{ offset: number; value: string }> = [];
  const consumer = await start_consumer(group, 'live', true, seen);
  try {
    await until(() => seen.length >= 6, 'the consumer to read 6 messages');
    const described = await until(async () => {
      const { groups } = await admin.describeGroups([group]);
      return groups[0]!.state === 'Stable' && groups[0]!.members.length === 1 && groups[0];
    }, 'a stable group with one member');
    assert.equal(described.protocolType, 'consumer');
    assert.equal(described.protocol, 'RoundRobinAssigner');
    const member = described.members[0]!;
    assert.ok(member.memberId.length > 0);
    assert.equal(member.clientId, 'admin-test-kafkajs');
    assert.ok(Buffer.isBuffer(member.memberMetadata) && Buffer.isBuffer(member.memberAssignment));
    assert.deepEqual(AssignerProtocol.MemberMetadata.decode(member.memberMetadata)?.topics, ['live']);
    assert.deepEqual(AssignerProtocol.MemberAssignment.decode(member.memberAssignment)?.assignment, { live: [0] });

    // Refused while the group has a member.
    await rejects_with(admin.deleteGroups([group]), 'NON_EMPTY_GROUP');
    const refused = await rejects_with(
      admin.resetOffsets({ groupId: group, topic: 'live', earliest: true }),
      'NON_EMPTY_GROUP',
    );
    assert.match(refused.message, /must have no running instances.*1 member/);
    await rejects_with(
      admin.setOffsets({ groupId: group, topic: 'live', partitions: [{ partition: 0, offset: '1' }] }),
      'NON_EMPTY_GROUP',
    );
    // kafkajs commits what it consumed.
    await until(
      async () => (await admin.fetchOffsets({ groupId: group, topics: ['live'] }))[0]!.partitions[0]!.offset === '6',
      'the consumer to commit offset 6',
    );
  } finally {
    await consumer.disconnect();
  }
  await until(
    async () => (await admin.describeGroups([group])).groups[0]!.members.length === 0,
    'the group to become empty',
  );
}

async function check_reset_to_earliest(group: string): Promise<void> {
  // Earliest after deleting records: the committed offset is the concrete log start offset, and a
  // consumer that would otherwise start at the end (fromBeginning false) starts there.
  await admin.deleteTopicRecords({ topic: 'live', partitions: [{ partition: 0, offset: '2' }] });
  await admin.resetOffsets({ groupId: group, topic: 'live', earliest: true });
  assert.deepEqual(await admin.fetchOffsets({ groupId: group, topics: ['live'] }), [
    { topic: 'live', partitions: [{ partition: 0, offset: '2', metadata: null }] },
  ]);
  const after_earliest: Array<{ offset: number; value: string }> = [];
  const consumer = await start_consumer(group, 'live', false, after_earliest);
  try {
    await until(() => after_earliest.length >= 4, 'the consumer to read offsets 2-5');
    assert.deepEqual(
      after_earliest.map((m) => m.offset),
      [2, 3, 4, 5],
    );
    assert.equal(after_earliest[0]!.value, 'v2');
    await until(
      async () => (await admin.fetchOffsets({ groupId: group, topics: ['live'] }))[0]!.partitions[0]!.offset === '6',
      'the consumer to commit offset 6',
    );
  } finally {
    await consumer.disconnect();
  }
  await until(
    async () => (await admin.describeGroups([group])).groups[0]!.members.length === 0,
    'the group to become empty',
  );
}

async function check_reset_to_latest(group: string): Promise<void> {
  // Latest, then new messages: a consumer with fromBeginning true still starts at the reset point.
  await admin.setOffsets({ groupId: group, topic: 'live', partitions: [{ partition: 0, offset: '3' }] });
  await admin.resetOffsets({ groupId: group, topic: 'live', earliest: false });
  assert.equal((await admin.fetchOffsets({ groupId: group, topics: ['live'] }))[0]!.partitions[0]!.offset, '6');
  await produce('live', 0, 2, 6);
  const after_latest: Array<{ offset: number; value: string }> = [];
  const consumer = await start_consumer(group, 'live', true, after_latest);
  try {
    await until(() => after_latest.length >= 2, 'the consumer to read offsets 6-7');
    assert.deepEqual(
      after_latest.map((m) => [m.offset, m.value]),
      [
        [6, 'v6'],
        [7, 'v7'],
      ],
    );
  } finally {
    await consumer.disconnect();
  }
  await until(
    async () => (await admin.describeGroups([group])).groups[0]!.members.length === 0,
    'the group to become empty',
  );
  assert.deepEqual(await admin.deleteGroups([group]), [{ groupId: group, errorCode: 0 }]);
}

async function refuses_after_disconnect(): Promise<void> {
  const { host, port } = broker.kafka_address;
  const other = new Admin(
    new Cluster({
      brokers: [`${host}:${port}`],
      client_id: 'admin-test-2',
      retry: RETRY_DEFAULT,
      request_timeout_ms: 5000,
      max_in_flight: 4,
    }),
  );
  await other.connect();
  assert.ok((await other.listTopics()).includes('live'));
  await other.disconnect();
  await assert.rejects(other.listTopics(), /disconnected/);
}
