// Transaction version 2 (KIP-890) against a broker process, in raw requests as a client of that
// version sends them: the feature finalized in ApiVersions; partitions joining with Produce v12 and
// offsets with TxnOffsetCommit v5, without AddPartitionsToTxn or AddOffsetsToTxn; EndTxn v5 ending
// under the next epoch, which fences what the old epoch still sends; and v11 left as it was.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { API_VERSIONS } from '../../src/protocol/kafka/messages/18_api_versions.ts';
import { INIT_PRODUCER_ID } from '../../src/protocol/kafka/messages/22_init_producer_id.ts';
import { PRODUCE } from '../../src/protocol/kafka/messages/00_produce.ts';
import { END_TXN } from '../../src/protocol/kafka/messages/26_end_txn.ts';
import { TXN_OFFSET_COMMIT } from '../../src/protocol/kafka/messages/28_txn_offset_commit.ts';
import { OFFSET_FETCH } from '../../src/protocol/kafka/messages/09_offset_fetch.ts';
import { ErrorCode } from '../../src/protocol/kafka/error_codes.ts';
import { ATTRIBUTE_TRANSACTIONAL } from '../../src/format/batch_layout.ts';
import { encode_record_batch } from '../../src/protocol/record_batch.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

let broker: BrokerProcess;
let kafka: Kafka;
let connection: Connection;

before(async () => {
  broker = await start_broker_process();
  kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'tv2-test', logLevel: logLevel.NOTHING });
  const [host, port] = broker.bootstrap.split(':') as [string, string];
  connection = await Connection.connect(host, Number(port), { request_timeout_ms: 10_000 });
});

after(async () => {
  connection?.close();
  await broker?.stop();
});

interface Identity {
  producer_id: number;
  producer_epoch: number;
}

async function create(topic: string, partitions: number): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }] });
  await admin.disconnect();
}

async function init(transactional_id: string): Promise<Identity> {
  const answer = await connection.call(INIT_PRODUCER_ID, 4, {
    transactional_id,
    transaction_timeout_ms: 60_000,
    producer_id: -1,
    producer_epoch: -1,
  });
  assert.equal(answer.error_code, 0);
  return { producer_id: answer.producer_id, producer_epoch: answer.producer_epoch };
}

/** A transactional Produce of one record per partition; each partition's error code. */
async function produce(
  version: number,
  transactional_id: string,
  who: Identity,
  topic: string,
  values: string[],
  base_sequence = 0,
): Promise<number[]> {
  const answer = await connection.call(PRODUCE, version, {
    transactional_id,
    acks: -1,
    timeout_ms: 10_000,
    topic_data: [
      {
        name: topic,
        partition_data: values.map((value, index) => ({
          index,
          records: encode_record_batch([{ key: null, value: Buffer.from(value), timestamp_ms: Date.now() }], {
            ...who,
            base_sequence,
            attributes: ATTRIBUTE_TRANSACTIONAL,
          }),
        })),
      },
    ],
  });
  return answer!.responses[0]!.partition_responses.map((p) => p.error_code);
}

async function end(transactional_id: string, who: Identity, committed: boolean, version = 5) {
  const answer = await connection.call(END_TXN, version, { transactional_id, ...who, committed });
  return { error_code: answer.error_code, producer_id: answer.producer_id, producer_epoch: answer.producer_epoch };
}

async function read(topic: string, read_uncommitted: boolean, count: number): Promise<string[]> {
  const consumer = kafka.consumer({ groupId: `reader-${topic}-${Math.random()}`, readUncommitted: read_uncommitted });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const values: string[] = [];
  await consumer.run({ eachMessage: async ({ message }) => void values.push(message.value!.toString()) });
  const deadline = Date.now() + 5_000;
  while (values.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  await new Promise((resolve) => setTimeout(resolve, 300)); // what should not arrive has its chance to
  await consumer.disconnect();
  return values.sort();
}

test('ApiVersions v3 finalizes transaction.version 2 and serves its versions', async () => {
  const answer = await connection.call(API_VERSIONS, 3, {
    client_software_name: 'tv2-test',
    client_software_version: '1',
  });
  const max = (api: { api_key: number }) => answer.api_keys.find((k) => k.api_key === api.api_key)?.max_version;
  assert.deepEqual(
    answer.finalized_features.map((f) => [f.name, f.max_version_level]),
    [['transaction.version', 2]],
  );
  assert.ok(answer.finalized_features_epoch >= 0, 'clients read features of an epoch >= 0 only');
  assert.deepEqual([max(PRODUCE), max(END_TXN), max(TXN_OFFSET_COMMIT)], [12, 5, 5]);
});

test('partitions join with Produce v12; EndTxn v5 commits under the next epoch, fencing the old one', async () => {
  await create('tv2-commit', 2);
  const id = 'tv2-commit-producer';
  const first = await init(id);
  assert.deepEqual(await produce(12, id, first, 'tv2-commit', ['a0', 'a1']), [0, 0]);
  const ended = await end(id, first, true);
  assert.deepEqual(ended, { error_code: 0, producer_id: first.producer_id, producer_epoch: first.producer_epoch + 1 });
  assert.deepEqual(await end(id, first, true), ended, 'a retry under the old epoch is answered again');
  // A batch the old epoch still had in flight is refused, and no marker would ever end it.
  const [late] = await produce(12, id, first, 'tv2-commit', ['late'], 1);
  assert.ok(
    late === ErrorCode.INVALID_PRODUCER_EPOCH || late === ErrorCode.PRODUCER_FENCED,
    `the old epoch's batch was answered ${late}`,
  );
  // The next transaction under the new epoch, aborted.
  const next = { producer_id: ended.producer_id, producer_epoch: ended.producer_epoch };
  assert.deepEqual(await produce(12, id, next, 'tv2-commit', ['b0', 'b1']), [0, 0]);
  const aborted = await end(id, next, false);
  assert.deepEqual([aborted.error_code, aborted.producer_epoch], [0, next.producer_epoch + 1]);
  assert.deepEqual(await read('tv2-commit', false, 2), ['a0', 'a1']);
  assert.deepEqual(await read('tv2-commit', true, 4), ['a0', 'a1', 'b0', 'b1']);
});

test('offsets join with TxnOffsetCommit v5 and apply when the transaction commits', async () => {
  await create('tv2-offsets', 1);
  const id = 'tv2-offsets-producer';
  const who = await init(id);
  const commit_offsets = async (identity: Identity, offset: number) => {
    const answer = await connection.call(TXN_OFFSET_COMMIT, 5, {
      transactional_id: id,
      group_id: 'tv2-group',
      ...identity,
      generation_id: -1,
      member_id: '',
      group_instance_id: null,
      topics: [
        {
          name: 'tv2-offsets',
          partitions: [
            { partition_index: 0, committed_offset: offset, committed_leader_epoch: -1, committed_metadata: null },
          ],
        },
      ],
    });
    return answer.topics[0]!.partitions[0]!.error_code;
  };
  const fetch_offset = async () => {
    const answer = await connection.call(OFFSET_FETCH, 7, {
      group_id: 'tv2-group',
      topics: [{ name: 'tv2-offsets', partition_indexes: [0] }],
      groups: [],
      require_stable: true,
    });
    return answer.topics[0]!.partitions[0]!.committed_offset;
  };
  assert.equal(await commit_offsets(who, 7), 0);
  const ended = await end(id, who, true);
  assert.equal(ended.error_code, 0);
  assert.equal(await fetch_offset(), 7);
  // Aborted: the offset stays as it was.
  const next = { producer_id: ended.producer_id, producer_epoch: ended.producer_epoch };
  assert.equal(await commit_offsets(next, 9), 0);
  assert.equal((await end(id, next, false)).error_code, 0);
  assert.equal(await fetch_offset(), 7);
});

test('Produce v11 still needs AddPartitionsToTxn first, and EndTxn v4 keeps the epoch', async () => {
  await create('tv2-older', 1);
  const id = 'tv2-older-producer';
  const who = await init(id);
  assert.deepEqual(await produce(11, id, who, 'tv2-older', ['x']), [ErrorCode.INVALID_TXN_STATE]);
  assert.deepEqual(await produce(12, id, who, 'tv2-older', ['y']), [0]);
  const ended = await end(id, who, true, 4);
  assert.deepEqual([ended.error_code, ended.producer_id, ended.producer_epoch], [0, -1, -1], 'v4 carries no ids');
  assert.deepEqual(await produce(12, id, who, 'tv2-older', ['z'], 1), [0], 'the same epoch goes on');
  assert.equal((await end(id, who, true, 4)).error_code, 0);
  assert.deepEqual(await read('tv2-older', false, 2), ['y', 'z']);
});
