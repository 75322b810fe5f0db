// KIP-932 acknowledgements on bad input, sent as raw protocol requests to a real broker process:
// unknown topic ids, acknowledgements of records the member does not hold, unknown acknowledge
// types, offsets settled twice, and refused requests that must leave no state behind. Each case
// asserts the exact error code, that the refused request changed nothing it should not have, and
// that the broker still serves well-formed requests afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/kafka/error_codes.ts';
import { SHARE_GROUP_DESCRIBE } from '../../../src/protocol/kafka/messages/77_share_group_describe.ts';
import {
  ACCEPT,
  REJECT,
  RELEASE,
  UNKNOWN_TOPIC_ID,
  ack_code,
  acquired_ranges,
  acquired_values,
  assert_refused,
  batch,
  partition_row,
  share_bad_input_broker,
  type AckBatch,
  type Row,
} from './support.ts';

const broker = share_bad_input_broker();
const { heartbeat, join, share_fetch, share_ack, topic_with, connect, assert_broker_healthy } = broker;

// ---------------------------------------------------------------- 4. unknown topic ids

test(
  '4. ShareFetch and ShareAcknowledge naming an unknown topic id: that partition is UNKNOWN_TOPIC_ID, ' +
    'the rest is served',
  async () => {
    const GROUP = 'topic-id-group';
    const MEMBER = 'topic-id-member';
    const TOPIC = 'topic-id-topic';
    const topic_id = await topic_with(TOPIC, ['t-0', 't-1']);
    await join(GROUP, MEMBER, [TOPIC]);

    const fetched = await share_fetch({
      group: GROUP,
      member: MEMBER,
      epoch: 0,
      partitions: [
        { topic_id: UNKNOWN_TOPIC_ID, partition: 0 },
        { topic_id: UNKNOWN_TOPIC_ID, partition: 3 },
        { topic_id },
      ],
    });
    assert.equal(fetched.error_code, 0, 'the request as a whole succeeds');
    for (const partition of [0, 3]) {
      const row = partition_row(fetched, UNKNOWN_TOPIC_ID, partition);
      assert.ok(row, `unknown topic partition ${partition} answered`);
      assert.equal(row.error_code, ErrorCode.UNKNOWN_TOPIC_ID);
      assert.deepEqual(acquired_ranges(row), []);
    }
    const known = partition_row(fetched, topic_id);
    assert.equal(known?.error_code, 0);
    assert.deepEqual(acquired_values(known), ['t-0', 't-1']);

    // Acknowledging on an unknown topic id: that partition is refused, the known one is accepted.
    const acked = await share_ack({
      group: GROUP,
      member: MEMBER,
      epoch: 1,
      partitions: [
        { topic_id: UNKNOWN_TOPIC_ID, acks: [batch(0, 1, ACCEPT)] },
        { topic_id, acks: [batch(0, 1, ACCEPT)] },
      ],
    });
    assert.equal(acked.error_code, 0);
    assert.equal(partition_row(acked, UNKNOWN_TOPIC_ID)?.error_code, ErrorCode.UNKNOWN_TOPIC_ID);
    assert.equal(partition_row(acked, topic_id)?.error_code, 0);

    // The same through ShareFetch's piggybacked acknowledgements.
    const piggy = await share_fetch({
      group: GROUP,
      member: MEMBER,
      epoch: 2,
      partitions: [{ topic_id: UNKNOWN_TOPIC_ID, acks: [batch(0, 0, ACCEPT)] }],
    });
    assert.equal(piggy.error_code, 0);
    assert.equal(partition_row(piggy, UNKNOWN_TOPIC_ID)?.error_code, ErrorCode.UNKNOWN_TOPIC_ID);
    await assert_broker_healthy();
  },
);

// ---------------------------------------------------------------- 5. records held by someone else

test("5. acknowledging records a member does not hold: INVALID_RECORD_STATE; the holder's are unaffected", async () => {
  const GROUP = 'owners-group';
  const TOPIC = 'owners-topic';
  const values = Array.from({ length: 10 }, (_, i) => `o-${i}`);
  const topic_id = await topic_with(TOPIC, values);
  const a_conn = await connect();
  const b_conn = await connect();
  const a_member_epoch = await join(GROUP, 'owner-a', [TOPIC]);
  await join(GROUP, 'owner-b', [TOPIC]);
  const a = { group: GROUP, member: 'owner-a' };
  const b = { group: GROUP, member: 'owner-b' };

  const a_first = await share_fetch({ ...a, epoch: 0, partitions: [{ topic_id }], max_records: 4 }, a_conn);
  assert.deepEqual(acquired_ranges(partition_row(a_first, topic_id)), [[0, 3, 1]]);
  const b_first = await share_fetch({ ...b, epoch: 0, partitions: [{ topic_id }], max_records: 4 }, b_conn);
  assert.deepEqual(acquired_ranges(partition_row(b_first, topic_id)), [[4, 7, 1]]);

  // Through ShareFetch: A accepts B's 4-5. The acknowledgement is refused, the fetch still happens.
  const b_records = [{ topic_id, acks: [batch(4, 5, ACCEPT)] }];
  const a_second = await share_fetch({ ...a, epoch: 1, partitions: b_records, max_records: 4 }, a_conn);
  assert.equal(a_second.error_code, 0);
  const a_row = partition_row(a_second, topic_id);
  assert.equal(a_row?.acknowledge_error_code, ErrorCode.INVALID_RECORD_STATE);
  assert.equal(typeof a_row?.acknowledge_error_message, 'string');
  assert.equal(a_row?.error_code, 0);
  assert.deepEqual(acquired_ranges(a_row), [[8, 9, 1]]);

  // Through ShareAcknowledge: B's records (accept, release, reject), offsets never delivered,
  // and a range half A's and half B's are all refused.
  const refused: Array<[string, AckBatch]> = [
    ["B's records, accept", batch(6, 7, ACCEPT)],
    ["B's records, release", batch(4, 4, RELEASE)],
    ["B's records, reject", batch(5, 5, REJECT)],
    ['beyond the log end', batch(100, 100, ACCEPT)],
    ["half A's, half B's", batch(2, 5, ACCEPT)],
  ];
  let a_epoch = 2;
  for (const [what, ack] of refused) {
    const response = await share_ack({ ...a, epoch: a_epoch++, partitions: [{ topic_id, acks: [ack] }] }, a_conn);
    assert.equal(ack_code(response, topic_id), ErrorCode.INVALID_RECORD_STATE, what);
  }
  // A member that holds nothing at all in a partition the group never read is refused alike.
  const other_id = await topic_with('owners-untouched', ['u-0']);
  assert.equal((await heartbeat(GROUP, 'owner-a', a_member_epoch, [TOPIC, 'owners-untouched'])).error_code, 0);
  const other = [{ topic_id: other_id, acks: [batch(0, 0, ACCEPT)] }];
  const untouched = await share_ack({ ...a, epoch: a_epoch++, partitions: other }, a_conn);
  assert.equal(ack_code(untouched, other_id), ErrorCode.INVALID_RECORD_STATE);

  // B still holds 4-7 (none was settled by A) and accepts them; A accepts its own 0-3 and 8-9.
  const b_own = [{ topic_id, acks: [batch(4, 7, ACCEPT)] }];
  assert.equal(ack_code(await share_ack({ ...b, epoch: 1, partitions: b_own }, b_conn), topic_id), 0);
  const a_own = [{ topic_id, acks: [batch(0, 3, ACCEPT), batch(8, 9, ACCEPT)] }];
  assert.equal(ack_code(await share_ack({ ...a, epoch: a_epoch++, partitions: a_own }, a_conn), topic_id), 0);

  // Everything is accepted: a new member finds nothing to acquire.
  await join(GROUP, 'owner-c', [TOPIC]);
  const late = await share_fetch({ group: GROUP, member: 'owner-c', epoch: 0, partitions: [{ topic_id }] });
  assert.equal(late.error_code, 0);
  assert.equal(partition_row(late, topic_id), undefined);
  await assert_broker_healthy();
});

// ---------------------------------------------------------------- 6. acknowledge types

test('6. an unknown acknowledge type refuses the whole request with INVALID_REQUEST and changes nothing', async () => {
  const GROUP = 'types-group';
  const MEMBER = 'types-member';
  const TOPIC = 'types-topic';
  const topic_id = await topic_with(TOPIC, ['y-0', 'y-1', 'y-2', 'y-3', 'y-4', 'y-5']);
  await join(GROUP, MEMBER, [TOPIC]);
  const who = { group: GROUP, member: MEMBER };
  const opened = await share_fetch({ ...who, epoch: 0, partitions: [{ topic_id }], max_records: 4 });
  assert.deepEqual(acquired_ranges(partition_row(opened, topic_id)), [[0, 3, 1]]);
  const acking = (...acks: AckBatch[]) => [{ topic_id, acks }];

  // Type 9 next to a valid accept of 0-1, through ShareAcknowledge: nothing is settled.
  // (A refused request still uses its session epoch, as a Kafka client expects: it moves to the
  // next epoch on any error other than the two session errors.)
  let epoch = 1;
  const nine = await share_ack({ ...who, epoch: epoch++, partitions: acking(batch(0, 1, ACCEPT), batch(2, 3, 9)) });
  assert_refused(nine, ErrorCode.INVALID_REQUEST, 'type 9 in ShareAcknowledge');
  // Type -1, and renew (4, a v2 type Sluice does not support), alike.
  assert_refused(
    await share_ack({ ...who, epoch: epoch++, partitions: acking(batch(0, 0, -1)) }),
    ErrorCode.INVALID_REQUEST,
    'type -1',
  );
  assert_refused(
    await share_ack({ ...who, epoch: epoch++, version: 2, partitions: acking(batch(0, 0, 4)) }),
    ErrorCode.INVALID_REQUEST,
    'type 4 (renew)',
  );

  // Through ShareFetch: refused before anything is acquired (4-5 stay available).
  const fetch_nine = await share_fetch({
    ...who,
    epoch: epoch++,
    partitions: acking(batch(0, 3, ACCEPT, ACCEPT, 9, ACCEPT)),
  });
  assert_refused(fetch_nine, ErrorCode.INVALID_REQUEST, 'type 9 in ShareFetch');

  // Malformed batches with valid types are refused per partition with INVALID_REQUEST.
  const too_few_types = await share_ack({ ...who, epoch: epoch++, partitions: acking(batch(0, 2, ACCEPT, ACCEPT)) });
  assert.equal(ack_code(too_few_types, topic_id), ErrorCode.INVALID_REQUEST, '2 types for 3 offsets');
  const backwards = await share_ack({ ...who, epoch: epoch++, partitions: acking(batch(3, 0, ACCEPT)) });
  assert.equal(ack_code(backwards, topic_id), ErrorCode.INVALID_REQUEST, 'last offset before first');

  // Nothing changed: 0-3 are still held (accepting them works), and the next fetch gets 4-5, first delivery.
  const accepted = await share_fetch({ ...who, epoch: epoch++, partitions: acking(batch(0, 3, ACCEPT)) });
  assert.equal(accepted.error_code, 0);
  const row = partition_row(accepted, topic_id);
  assert.equal(row?.acknowledge_error_code, 0);
  assert.deepEqual(acquired_ranges(row), [[4, 5, 1]]);
  assert.deepEqual(acquired_values(row), ['y-4', 'y-5']);
  await assert_broker_healthy();
});

// ---------------------------------------------------------------- 10. settling twice

test('10. settling the same offset twice: the second is INVALID_RECORD_STATE', async () => {
  const GROUP = 'twice-group';
  const MEMBER = 'twice-member';
  const TOPIC = 'twice-topic';
  const topic_id = await topic_with(TOPIC, ['w-0', 'w-1', 'w-2']);
  await join(GROUP, MEMBER, [TOPIC]);
  const opened = await share_fetch({ group: GROUP, member: MEMBER, epoch: 0, partitions: [{ topic_id }] });
  assert.deepEqual(acquired_ranges(partition_row(opened, topic_id)), [[0, 2, 1]]);
  let epoch = 1;
  const ack = async (acks: AckBatch[]) => {
    const partitions = [{ topic_id, acks }];
    return ack_code(await share_ack({ group: GROUP, member: MEMBER, epoch: epoch++, partitions }), topic_id);
  };

  assert.equal(await ack([batch(0, 0, ACCEPT)]), 0);
  assert.equal(await ack([batch(0, 0, ACCEPT)]), ErrorCode.INVALID_RECORD_STATE, 'accepted twice');
  assert.equal(await ack([batch(0, 0, REJECT)]), ErrorCode.INVALID_RECORD_STATE, 'rejected after an accept');
  // The same through ShareFetch.
  const again = await share_fetch({
    group: GROUP,
    member: MEMBER,
    epoch: epoch++,
    partitions: [{ topic_id, acks: [batch(0, 0, ACCEPT)] }],
  });
  assert.equal(again.error_code, 0);
  assert.equal(partition_row(again, topic_id)?.acknowledge_error_code, ErrorCode.INVALID_RECORD_STATE);

  // Released records are no longer held either: accepting them afterwards is refused.
  assert.equal(await ack([batch(1, 1, RELEASE)]), 0);
  assert.equal(await ack([batch(1, 1, ACCEPT)]), ErrorCode.INVALID_RECORD_STATE, 'accepted after a release');

  // Offset 2 is still held and accepted once.
  assert.equal(await ack([batch(2, 2, ACCEPT)]), 0);
  assert.equal(await ack([batch(2, 2, ACCEPT)]), ErrorCode.INVALID_RECORD_STATE);
  await assert_broker_healthy();
});

// ---------------------------------------------------------------- 11. no state for refused requests

test(
  '11. refused requests leave nothing behind: no group from a bad heartbeat, no session for a stranger, ' +
    'no half-applied acknowledgements, no failed partition kept in the session',
  async () => {
    const TOPIC = 'atomic-topic';
    const topic_id = await topic_with(TOPIC, ['a-0', 'a-1', 'a-2', 'a-3']);

    // A heartbeat refused as from an unknown member does not create its group.
    assert.equal((await heartbeat('typo-group', 'x', 5, null)).error_code, ErrorCode.UNKNOWN_MEMBER_ID);
    assert.equal((await heartbeat('typo-group', 'x', 0, null)).error_code, ErrorCode.INVALID_REQUEST);
    assert.equal((await heartbeat('typo-group', 'x', -1, null)).error_code, 0);
    const typo = { group_ids: ['typo-group'], include_authorized_operations: false };
    const described = await broker.conn.call(SHARE_GROUP_DESCRIBE, 1, typo);
    assert.equal((described.groups as Row[])[0]!.error_code, ErrorCode.GROUP_ID_NOT_FOUND);

    // A stranger's ShareFetch opens no session: a later ShareAcknowledge is refused for the member, not the session.
    const GROUP = 'atomic-group';
    await join(GROUP, 'real', [TOPIC]);
    const stranger = { group: GROUP, member: 'stranger' };
    assert_refused(
      await share_fetch({ ...stranger, epoch: 0, partitions: [{ topic_id }] }),
      ErrorCode.UNKNOWN_MEMBER_ID,
      'stranger fetch',
    );
    assert_refused(
      await share_ack({ ...stranger, epoch: 1, partitions: [{ topic_id, acks: [batch(0, 0, ACCEPT)] }] }),
      ErrorCode.UNKNOWN_MEMBER_ID,
      'stranger ack',
    );

    // One bad batch refuses the partition's whole acknowledgement: offset 0 stays acquired.
    const real = { group: GROUP, member: 'real' };
    const fetched = await share_fetch({ ...real, epoch: 0, partitions: [{ topic_id }], max_records: 3 });
    assert.deepEqual(acquired_ranges(partition_row(fetched, topic_id)), [[0, 2, 1]]);
    const ack = async (epoch: number, ...acks: AckBatch[]) =>
      ack_code(await share_ack({ ...real, epoch, partitions: [{ topic_id, acks }] }), topic_id);
    assert.equal(await ack(1, batch(0, 0, ACCEPT), batch(3, 3, ACCEPT)), ErrorCode.INVALID_RECORD_STATE);
    assert.equal(
      await ack(2, batch(1, 2, ACCEPT), batch(2, 2, ACCEPT)),
      ErrorCode.INVALID_REQUEST,
      'overlapping batches',
    );
    assert.equal(await ack(3, batch(0, 2, ACCEPT)), 0, 'all three were still held');

    // A partition that does not exist is answered once and then leaves the session: the next fetch waits.
    const bad = await share_fetch({ ...real, epoch: 4, partitions: [{ topic_id, partition: 5 }] });
    assert.equal(partition_row(bad, topic_id, 5)?.error_code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.deepEqual(
      acquired_ranges(partition_row(bad, topic_id, 0)),
      [[3, 3, 1]],
      'the good partition of the session is still served',
    );
    const started = Date.now();
    const idle = await share_fetch({ ...real, epoch: 5, partitions: [], max_wait_ms: 300 });
    assert.equal(partition_row(idle, topic_id, 5), undefined, 'the bad partition is not reported again');
    assert.ok(Date.now() - started >= 250, 'the fetch waited for records');
    await assert_broker_healthy();
  },
);
