// The Kafka front end on transaction protocol errors, seen through a raw TCP client: each refused
// with its error code, nothing stored or committed that was not asked for, and the transaction that
// is open undisturbed. Afterwards the canary connection must still get answers and the records
// acknowledged before must still be readable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ErrorCode } from '../../../src/protocol/kafka/error_codes.ts';
import { INIT_PRODUCER_ID } from '../../../src/protocol/kafka/messages/22_init_producer_id.ts';
import { ADD_PARTITIONS_TO_TXN } from '../../../src/protocol/kafka/messages/24_add_partitions_to_txn.ts';
import { END_TXN } from '../../../src/protocol/kafka/messages/26_end_txn.ts';
import { TXN_OFFSET_COMMIT } from '../../../src/protocol/kafka/messages/28_txn_offset_commit.ts';
import { ATTRIBUTE_TRANSACTIONAL } from '../../../src/format/batch_layout.ts';
import { encode_marker } from '../../../src/protocol/control_records.ts';
import type { RawClient } from './raw_client.ts';
import { bad_input_broker, create_topic, fetch_values, produce, records_of, type Row } from './support.ts';

const broker = bad_input_broker();

/** A COMMIT marker's value: version 0, coordinator epoch 0 (the broker's single-node leader epoch). */
const marker_value = () => [0, 0, 0, 0, 0, 0];

/** The transaction calls of one producer connection. */
function txn_calls(client: RawClient, id: string) {
  const init = (timeout_ms = 60_000) =>
    client.call(INIT_PRODUCER_ID, 4, {
      transactional_id: id,
      transaction_timeout_ms: timeout_ms,
      producer_id: -1,
      producer_epoch: -1,
    });
  const add = async (producer_id: number, epoch: number, topics: Array<{ name: string; partitions: number[] }>) => {
    const response = await client.call(ADD_PARTITIONS_TO_TXN, 3, {
      v3_and_below_transactional_id: id,
      v3_and_below_producer_id: producer_id,
      v3_and_below_producer_epoch: epoch,
      v3_and_below_topics: topics,
    });
    return (response.results_by_topic_v3_and_below as Row[]).flatMap((t) =>
      (t.results_by_partition as Row[]).map((p) => [t.name, p.partition_error_code]),
    );
  };
  const end = async (producer_id: number, epoch: number, committed: boolean, txn_id = id) =>
    (await client.call(END_TXN, 3, { transactional_id: txn_id, producer_id, producer_epoch: epoch, committed }))
      .error_code as number;
  const txn_batch = (values: string[], producer_id: number, epoch: number, sequence: number) =>
    records_of(values, {
      producer_id,
      producer_epoch: epoch,
      base_sequence: sequence,
      attributes: ATTRIBUTE_TRANSACTIONAL,
    });
  return { init, add, end, txn_batch };
}

test('7. transaction errors', async () => {
  const TOPIC = 'txn-topic';
  await create_topic(broker.canary, TOPIC);
  const client = await broker.connect();
  const { init, add, end, txn_batch } = txn_calls(client, 'bad-input-txn');

  // A timeout above transaction.max.timeout.ms (15 minutes).
  assert.equal((await init(3_600_000)).error_code, ErrorCode.INVALID_TRANSACTION_TIMEOUT);
  const given = await init();
  assert.equal(given.error_code, 0);
  const pid = given.producer_id as number;
  const epoch = given.producer_epoch as number;

  // EndTxn for an unknown transactional id, for another producer, with an old epoch, with nothing open.
  assert.equal(await end(pid, epoch, true, 'no-such-txn'), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal(await end(pid + 1000, epoch, true), ErrorCode.INVALID_PRODUCER_ID_MAPPING);
  assert.equal(await end(pid, epoch - 1, true), ErrorCode.INVALID_PRODUCER_EPOCH);
  assert.equal(await end(pid, epoch, true), ErrorCode.INVALID_TXN_STATE);

  // A transactional batch for a partition not in any transaction: refused, not stored.
  const refused = await produce(client, TOPIC, txn_batch(['not-added'], pid, epoch, 0));
  assert.equal(refused.error_code, ErrorCode.INVALID_TXN_STATE);

  // AddPartitionsToTxn naming a missing topic: all or none.
  assert.deepEqual(
    await add(pid, epoch, [
      { name: TOPIC, partitions: [0] },
      { name: 'missing', partitions: [0] },
    ]),
    [
      [TOPIC, ErrorCode.OPERATION_NOT_ATTEMPTED],
      ['missing', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ],
  );
  assert.equal(await end(pid, epoch, true), ErrorCode.INVALID_TXN_STATE, 'nothing was added');

  // A transaction that is open: a wrong epoch, a control batch from a client, offsets without
  // AddOffsetsToTxn are refused; its own batch goes in.
  assert.deepEqual(await add(pid, epoch, [{ name: TOPIC, partitions: [0] }]), [[TOPIC, 0]]);
  assert.equal(
    (await produce(client, TOPIC, txn_batch(['old-epoch'], pid, epoch - 1, 0))).error_code,
    ErrorCode.INVALID_PRODUCER_EPOCH,
  );
  const marker = encode_marker({
    producer_id: pid,
    producer_epoch: epoch,
    commit: true,
    coordinator_epoch: 0,
    timestamp_ms: 1,
  });
  assert.equal((await produce(client, TOPIC, marker)).error_code, ErrorCode.INVALID_RECORD);
  const offsets = await client.call(TXN_OFFSET_COMMIT, 3, {
    transactional_id: 'bad-input-txn',
    group_id: 'txn-group',
    producer_id: pid,
    producer_epoch: epoch,
    generation_id: -1,
    member_id: '',
    group_instance_id: null,
    topics: [
      {
        name: TOPIC,
        partitions: [{ partition_index: 0, committed_offset: 1, committed_leader_epoch: -1, committed_metadata: null }],
      },
    ],
  });
  assert.equal(((offsets.topics as Row[])[0]!.partitions as Row[])[0]!.error_code, ErrorCode.INVALID_TXN_STATE);
  assert.equal((await produce(client, TOPIC, txn_batch(['kept'], pid, epoch, 0))).error_code, 0);
  assert.equal(await end(pid, epoch, true), 0);

  // The partition holds the committed record and its marker (a control record), nothing refused.
  const stored = await fetch_values(client, TOPIC);
  assert.deepEqual(stored.values, ['kept', Buffer.from(marker_value()).toString()]);
  client.end();
});
