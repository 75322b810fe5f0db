// KIP-932 share sessions on bad input, sent as raw protocol requests to a real broker process:
// ShareFetch and ShareAcknowledge with share-session epochs out of order, replayed, or naming a
// session that does not exist, and lock renewals (refused). Each case asserts the exact error code,
// that the refused request changed nothing it should not have, and that the broker still serves
// well-formed requests afterwards.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/kafka/error_codes.ts';
import {
  ACCEPT,
  ack_code,
  acquired_ranges,
  acquired_values,
  assert_refused,
  batch,
  partition_row,
  share_bad_input_broker,
  type FetchArgs,
} from './support.ts';

const broker = share_bad_input_broker();
const { join, share_fetch, share_ack, topic_with, assert_broker_healthy } = broker;

// ---------------------------------------------------------------- 3. session epochs

test('3. ShareFetch session epochs: no session, a wrong epoch, a replay; the right epoch still works', async () => {
  const GROUP = 'session-group';
  const MEMBER = 'session-member';
  const TOPIC = 'session-topic';
  const topic_id = await topic_with(TOPIC, ['e-0', 'e-1', 'e-2', 'e-3', 'e-4', 'e-5']);
  await join(GROUP, MEMBER, [TOPIC]);
  const fetch = (epoch: number, options: Partial<FetchArgs> = {}) =>
    share_fetch({ group: GROUP, member: MEMBER, epoch, max_records: 2, ...options });

  // No session yet: neither a later epoch nor a close finds one.
  const partitions = [{ topic_id }];
  assert_refused(await fetch(5, { partitions }), ErrorCode.SHARE_SESSION_NOT_FOUND, 'epoch 5 without a session');
  assert_refused(await fetch(-1, { partitions }), ErrorCode.SHARE_SESSION_NOT_FOUND, 'epoch -1 without a session');

  // Epoch 0 opens the session; the refused requests acquired nothing, so it starts at offset 0.
  const opened = await fetch(0, { partitions: [{ topic_id }] });
  assert.equal(opened.error_code, 0);
  assert.deepEqual(acquired_ranges(partition_row(opened, topic_id)), [[0, 1, 1]]);

  // Epochs other than the next one are refused and leave the session as it was.
  for (const wrong of [7, 2, -2, 0x7fffffff]) {
    assert_refused(await fetch(wrong), ErrorCode.INVALID_SHARE_SESSION_EPOCH, `epoch ${wrong} (expected 1)`);
  }

  // The next epoch works: the session remembers the partition.
  const next = await fetch(1);
  assert.equal(next.error_code, 0);
  assert.deepEqual(acquired_ranges(partition_row(next, topic_id)), [[2, 3, 1]]);

  // Replaying the epoch just used is refused too.
  assert_refused(await fetch(1), ErrorCode.INVALID_SHARE_SESSION_EPOCH, 'epoch 1 replayed');

  // Epoch 2 acknowledges 0-3 and acquires 4-5.
  const third = await fetch(2, { partitions: [{ topic_id, acks: [batch(0, 3, ACCEPT)] }] });
  assert.equal(third.error_code, 0);
  const third_row = partition_row(third, topic_id);
  assert.equal(third_row?.acknowledge_error_code, 0);
  assert.deepEqual(acquired_ranges(third_row), [[4, 5, 1]]);
  assert.deepEqual(acquired_values(third_row), ['e-4', 'e-5']);

  // Epoch -1 acknowledges and closes without fetching; the session is then gone.
  const closed = await fetch(-1, { partitions: [{ topic_id, acks: [batch(4, 5, ACCEPT)] }] });
  assert.equal(closed.error_code, 0);
  assert.equal(partition_row(closed, topic_id)?.acknowledge_error_code, 0);
  assert.deepEqual(acquired_ranges(partition_row(closed, topic_id)), []);
  assert_refused(await fetch(3), ErrorCode.SHARE_SESSION_NOT_FOUND, 'epoch 3 after the close');

  // A new session finds everything accepted.
  const reopened = await fetch(0, { partitions: [{ topic_id }] });
  assert.equal(reopened.error_code, 0);
  assert.equal(partition_row(reopened, topic_id), undefined, 'nothing left to acquire');
  await assert_broker_healthy();
});

// ---------------------------------------------------------------- 7. ShareAcknowledge epochs

test('7. ShareAcknowledge cannot open a session (epoch 0) nor use one that does not exist', async () => {
  const GROUP = 'ack-epoch-group';
  const MEMBER = 'ack-epoch-member';
  const TOPIC = 'ack-epoch-topic';
  const topic_id = await topic_with(TOPIC, ['a-0', 'a-1']);
  await join(GROUP, MEMBER, [TOPIC]);
  const who = { group: GROUP, member: MEMBER };
  const first = [{ topic_id, acks: [batch(0, 0, ACCEPT)] }];
  const both = [{ topic_id, acks: [batch(0, 1, ACCEPT)] }];

  // Without a session.
  const no_session_zero = await share_ack({ ...who, epoch: 0, partitions: first });
  assert_refused(no_session_zero, ErrorCode.INVALID_SHARE_SESSION_EPOCH, 'epoch 0 without a session');
  assert_refused(
    await share_ack({ ...who, epoch: 3, partitions: first }),
    ErrorCode.SHARE_SESSION_NOT_FOUND,
    'epoch 3 without a session',
  );

  // With a session holding 0-1: epoch 0 is still refused, and the session (next epoch 1) is kept.
  const opened = await share_fetch({ ...who, epoch: 0, partitions: [{ topic_id }] });
  assert.deepEqual(acquired_ranges(partition_row(opened, topic_id)), [[0, 1, 1]]);
  assert_refused(
    await share_ack({ ...who, epoch: 0, partitions: both }),
    ErrorCode.INVALID_SHARE_SESSION_EPOCH,
    'epoch 0 with a session',
  );
  assert_refused(
    await share_ack({ ...who, epoch: 4, partitions: both }),
    ErrorCode.INVALID_SHARE_SESSION_EPOCH,
    'epoch 4 with a session',
  );
  assert.equal(
    ack_code(await share_ack({ ...who, epoch: 1, partitions: both }), topic_id),
    0,
    'the refused acknowledgements settled nothing',
  );
  await assert_broker_healthy();
});

// ---------------------------------------------------------------- 8. lock renewal

test('8. ShareFetch and ShareAcknowledge v2 with is_renew_ack are refused with INVALID_REQUEST', async () => {
  const GROUP = 'renew-group';
  const MEMBER = 'renew-member';
  const TOPIC = 'renew-topic';
  const topic_id = await topic_with(TOPIC, ['r-0', 'r-1', 'r-2']);
  await join(GROUP, MEMBER, [TOPIC]);
  const renew = { group: GROUP, member: MEMBER, version: 2, is_renew_ack: true } as const;

  // Refused before the session is looked at: not even epoch 0 opens one, nothing is acquired.
  assert_refused(
    await share_fetch({ ...renew, epoch: 0, partitions: [{ topic_id }] }),
    ErrorCode.INVALID_REQUEST,
    'ShareFetch v2 renew, epoch 0',
  );
  assert_refused(await share_fetch({ ...renew, epoch: 1 }), ErrorCode.INVALID_REQUEST, 'ShareFetch v2 renew, epoch 1');

  const opened = await share_fetch({
    group: GROUP,
    member: MEMBER,
    epoch: 0,
    version: 2,
    partitions: [{ topic_id }],
    max_records: 2,
  });
  assert.equal(opened.error_code, 0);
  assert.deepEqual(acquired_ranges(partition_row(opened, topic_id)), [[0, 1, 1]]);

  const renewals = [{ topic_id, acks: [batch(0, 1, 4)] }];
  assert_refused(
    await share_fetch({ ...renew, epoch: 1, partitions: renewals }),
    ErrorCode.INVALID_REQUEST,
    'ShareFetch v2 renew with a session',
  );
  assert_refused(
    await share_ack({ ...renew, epoch: 1, partitions: renewals }),
    ErrorCode.INVALID_REQUEST,
    'ShareAcknowledge v2 renew',
  );

  // The renewals did not use up the session's epoch: epoch 1 accepts 0-1 and acquires 2.
  const accepts = [{ topic_id, acks: [batch(0, 1, ACCEPT)] }];
  const next = await share_fetch({ group: GROUP, member: MEMBER, epoch: 1, version: 2, partitions: accepts });
  assert.equal(next.error_code, 0);
  const row = partition_row(next, topic_id);
  assert.equal(row?.acknowledge_error_code, 0);
  assert.deepEqual(acquired_ranges(row), [[2, 2, 1]]);
  await assert_broker_healthy();
});
