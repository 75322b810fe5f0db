// Admin APIs no client library here wraps, as raw requests against a broker process.
// DescribeProducers: the idempotent producer kafkajs wrote with is listed with its epoch and last
// sequence, a transactional one with where its open transaction starts, and a partition that does
// not exist is refused alone. AlterReplicaLogDirs: staying in the one log directory is fine,
// another directory is LOG_DIR_NOT_FOUND. ElectLeaders: a single node's partitions need no
// election. UpdateFeatures: refused, naming the setting. ListOffsets v10: the special timestamps.
// OffsetFetch v8: several groups at once. FindCoordinator v6: the three key types.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { DESCRIBE_PRODUCERS } from '../../src/protocol/kafka/messages/61_describe_producers.ts';
import { ALTER_REPLICA_LOG_DIRS } from '../../src/protocol/kafka/messages/34_alter_replica_log_dirs.ts';
import { ELECT_LEADERS } from '../../src/protocol/kafka/messages/43_elect_leaders.ts';
import { UPDATE_FEATURES } from '../../src/protocol/kafka/messages/57_update_features.ts';
import { LIST_OFFSETS } from '../../src/protocol/kafka/messages/02_list_offsets.ts';
import { OFFSET_FETCH } from '../../src/protocol/kafka/messages/09_offset_fetch.ts';
import { FIND_COORDINATOR } from '../../src/protocol/kafka/messages/10_find_coordinator.ts';
import { PRODUCE } from '../../src/protocol/kafka/messages/00_produce.ts';
import { encode_record_batch } from '../../src/protocol/record_batch.ts';
import { ErrorCode } from '../../src/protocol/kafka/error_codes.ts';

let broker: BrokerProcess;

before(async () => {
  broker = await start_broker_process();
});

after(async () => {
  await broker?.stop();
});

test('DescribeProducers lists idempotent and transactional producers of a partition', async () => {
  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'dp', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'dp', numPartitions: 1 }] });
  await admin.disconnect();
  const idempotent = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await idempotent.connect();
  const sent_ms = 1_700_000_000_000;
  const messages = ['a', 'b', 'c'].map((value, i) => ({ value, timestamp: String(sent_ms + i) }));
  await idempotent.send({ topic: 'dp', acks: -1, messages });
  const transactional = kafka.producer({ transactionalId: 'dp-txn', maxInFlightRequests: 1, idempotent: true });
  await transactional.connect();
  const txn = await transactional.transaction();
  await txn.send({ topic: 'dp', messages: [{ value: 'open' }] });
  const [host, port] = broker.bootstrap.split(':');
  const connection = await Connection.connect(host!, Number(port));
  try {
    const response = await connection.call(DESCRIBE_PRODUCERS, 0, {
      topics: [{ name: 'dp', partition_indexes: [0, 5] }],
    });
    const [p0, p5] = response.topics[0]!.partitions;
    assert.equal(p0!.error_code, ErrorCode.NONE);
    const by_txn = [...p0!.active_producers].sort((a, b) => a.current_txn_start_offset - b.current_txn_start_offset);
    assert.equal(by_txn.length, 2);
    assert.deepEqual([by_txn[0]!.last_sequence, by_txn[0]!.current_txn_start_offset], [2, -1]);
    assert.equal(by_txn[0]!.last_timestamp, sent_ms + 2, "its last batch's largest timestamp");
    assert.deepEqual([by_txn[1]!.last_sequence, by_txn[1]!.current_txn_start_offset], [0, 3]);
    assert.equal(p5!.error_code, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  } finally {
    connection.close();
    await txn.abort();
    await Promise.all([idempotent.disconnect(), transactional.disconnect()]);
  }
});

test('AlterReplicaLogDirs: the one log directory, or LOG_DIR_NOT_FOUND', async () => {
  const [host, port] = broker.bootstrap.split(':');
  const connection = await Connection.connect(host!, Number(port));
  try {
    // Partition 9 and topic "nowhere" do not exist: refused alone, the broker answering the rest.
    const topics = [
      { name: 'dp', partitions: [0, 9] },
      { name: 'nowhere', partitions: [0] },
    ];
    const response = await connection.call(ALTER_REPLICA_LOG_DIRS, 2, {
      dirs: [
        { path: broker.data_dir, topics },
        { path: '/elsewhere', topics: [{ name: 'dp', partitions: [0] }] },
      ],
    });
    const codes = response.results.map((r) => r.partitions.map((p) => p.error_code));
    const unknown = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    assert.deepEqual(codes, [[ErrorCode.NONE, unknown], [unknown], [ErrorCode.LOG_DIR_NOT_FOUND]]);
  } finally {
    connection.close();
  }
});

test('ElectLeaders on a single node: nothing to elect; UpdateFeatures is refused naming why', async () => {
  const [host, port] = broker.bootstrap.split(':');
  const connection = await Connection.connect(host!, Number(port));
  try {
    const named = await connection.call(ELECT_LEADERS, 2, {
      election_type: 0,
      topic_partitions: [
        { topic: 'dp', partitions: [0, 9] },
        { topic: 'nowhere', partitions: [0] },
      ],
      timeout_ms: 10_000,
    });
    const codes = named.replica_election_results.map((r) => r.partition_result.map((p) => p.error_code));
    const unknown = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    assert.deepEqual(codes, [[ErrorCode.ELECTION_NOT_NEEDED, unknown], [unknown]]);
    const every = await connection.call(ELECT_LEADERS, 2, { election_type: 1, topic_partitions: null, timeout_ms: 1 });
    assert.deepEqual([every.error_code, every.replica_election_results], [ErrorCode.NONE, []]);
    const odd = await connection.call(ELECT_LEADERS, 1, { election_type: 7, topic_partitions: null, timeout_ms: 1 });
    assert.equal(odd.error_code, ErrorCode.INVALID_REQUEST);
    const features = await connection.call(UPDATE_FEATURES, 1, {
      timeout_ms: 1_000,
      feature_updates: [
        { feature: 'transaction.version', max_version_level: 1, allow_downgrade: false, upgrade_type: 2 },
      ],
      validate_only: false,
    });
    assert.equal(features.error_code, ErrorCode.INVALID_REQUEST);
    assert.match(features.error_message!, /--transaction-version/);
    assert.deepEqual(
      features.results.map((r) => [r.feature, r.error_code]),
      [['transaction.version', ErrorCode.INVALID_REQUEST]],
    );
  } finally {
    connection.close();
  }
});

test('ListOffsets v10: the record with the largest timestamp; earliest-local and latest-tiered', async () => {
  const admin = new Kafka({ brokers: [broker.bootstrap], clientId: 'lo', logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'stamps', numPartitions: 1 }] });
  await admin.disconnect();
  const [host, port] = broker.bootstrap.split(':');
  const connection = await Connection.connect(host!, Number(port));
  try {
    const batch = (stamps: number[]) =>
      encode_record_batch(stamps.map((timestamp_ms, i) => ({ key: null, value: Buffer.from(`v${i}`), timestamp_ms })));
    for (const stamps of [[1_000, 5_000, 3_000], [4_000]])
      await connection.call(PRODUCE, 9, {
        transactional_id: null,
        acks: -1,
        timeout_ms: 10_000,
        topic_data: [{ name: 'stamps', partition_data: [{ index: 0, records: batch(stamps) }] }],
      });
    const lookup = async (timestamp: number) => {
      const response = await connection.call(LIST_OFFSETS, 10, {
        replica_id: -1,
        isolation_level: 0,
        topics: [{ name: 'stamps', partitions: [{ partition_index: 0, current_leader_epoch: -1, timestamp }] }],
        timeout_ms: 5_000,
      });
      const row = response.topics[0]!.partitions[0]!;
      return [row.error_code, row.offset, row.timestamp];
    };
    assert.deepEqual(await lookup(-3), [ErrorCode.NONE, 1, 5_000]);
    assert.deepEqual(await lookup(-4), [ErrorCode.NONE, 0, -1]);
    assert.deepEqual(await lookup(-5), [ErrorCode.NONE, -1, -1]);
    assert.deepEqual(await lookup(3_500), [ErrorCode.NONE, 1, 5_000], 'the first offset at or after it, its time');
    assert.equal((await lookup(5_001))[1], -1);
    assert.equal((await lookup(-7))[0], ErrorCode.INVALID_REQUEST);
  } finally {
    connection.close();
  }
});

test('OffsetFetch v8: several groups in one request', async () => {
  const kafka = new Kafka({ brokers: [broker.bootstrap], clientId: 'of', logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'fetched', numPartitions: 2 }] });
  await admin.setOffsets({ groupId: 'of-a', topic: 'fetched', partitions: [{ partition: 1, offset: '0' }] });
  await admin.disconnect();
  const [host, port] = broker.bootstrap.split(':');
  const connection = await Connection.connect(host!, Number(port));
  try {
    const response = await connection.call(OFFSET_FETCH, 8, {
      groups: [
        { group_id: 'of-a', topics: null },
        { group_id: 'of-b', topics: [{ name: 'fetched', partition_indexes: [0] }] },
      ],
      require_stable: false,
    });
    const [a, b] = response.groups;
    assert.deepEqual(
      a!.topics.map((t) => [t.name, t.partitions.map((p) => [p.partition_index, p.committed_offset])]),
      [['fetched', [[1, 0]]]],
    );
    assert.deepEqual(b!.topics[0]!.partitions[0]!.committed_offset, -1);
    assert.deepEqual([a!.error_code, b!.error_code], [ErrorCode.NONE, ErrorCode.NONE]);
  } finally {
    connection.close();
  }
});

test('FindCoordinator v6: groups, transactions and share-group state here; other key types refused', async () => {
  const [host, port] = broker.bootstrap.split(':');
  const connection = await Connection.connect(host!, Number(port));
  try {
    const find = async (key_type: number, key: string) => {
      const response = await connection.call(FIND_COORDINATOR, 6, { key_type, coordinator_keys: [key] });
      const found = response.coordinators[0]!;
      return [found.error_code, found.node_id];
    };
    assert.deepEqual(await find(0, 'a-group'), [ErrorCode.NONE, 1]);
    assert.deepEqual(await find(1, 'a-transactional-id'), [ErrorCode.NONE, 1]);
    assert.deepEqual(await find(2, 'a-share-group:AAAAAAAAAAAAAAAAAAAAAQ:0'), [ErrorCode.NONE, 1]);
    assert.deepEqual(await find(3, 'anything'), [ErrorCode.INVALID_REQUEST, -1]);
  } finally {
    connection.close();
  }
});
