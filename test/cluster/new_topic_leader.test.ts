// Regression: right after a topic was auto-created, Metadata named a broker as a partition's leader
// before that broker served it, so the first Produce was refused with NOT_LEADER_OR_FOLLOWER (a
// client retrying without idempotence then reordered its batches). Now Metadata answers
// LEADER_NOT_AVAILABLE while the named leader is still taking up the role on the broker asked, and
// the leader itself waits for the role rather than refusing a Produce sent a moment early.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { METADATA } from '../../src/protocol/kafka/messages/03_metadata.ts';
import { ErrorCode } from '../../src/protocol/kafka/error_codes.ts';
import { missing, send_produce, shared_cluster } from './cluster_support.ts';

const shared = shared_cluster();

/** Topics created per broker asked: the race lasts milliseconds, so each test tries it several times. */
const ROUNDS = 6;

interface PartitionAnswer {
  error_code: number;
  leader_id: number;
}

/** Metadata of one topic's partition 0 as the broker on `connection` answers it, auto-creating it. */
async function metadata(connection: Connection, topic: string): Promise<PartitionAnswer> {
  const response = (await connection.call(METADATA, 12, {
    topics: [{ name: topic }],
    allow_auto_topic_creation: true,
    include_topic_authorized_operations: false,
  })) as { topics: Array<{ error_code: number; partitions: PartitionAnswer[] }> };
  const row = response.topics[0]!;
  return row.partitions[0] ?? { error_code: row.error_code, leader_id: -1 };
}

test(
  'new_topic_leader_not_available_before_it_serves: the first Produce to a just auto-created topic is accepted',
  { skip: missing ?? false, timeout: 120_000 },
  async () => {
    const { cluster } = shared;
    const connections = new Map<number, Connection>();
    for (const [id, port] of cluster.direct_ports) {
      connections.set(id, await Connection.connect('127.0.0.1', port, { request_timeout_ms: 30_000 }));
    }
    try {
      for (let round = 0; round < ROUNDS; round++) {
        for (const [asked, connection] of connections) {
          const topic = `fresh-${asked}-${round}`;
          // As a client does: Metadata until a leader is named, then Produce to it at once.
          let answer = await metadata(connection, topic);
          for (let tries = 0; answer.leader_id < 0 && tries < 200; tries++) {
            assert.ok(
              answer.error_code === ErrorCode.LEADER_NOT_AVAILABLE ||
                answer.error_code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
              `${topic}: Metadata answered ${answer.error_code} with no leader`,
            );
            await new Promise((resolve) => setTimeout(resolve, 10));
            answer = await metadata(connection, topic);
          }
          assert.ok(answer.leader_id >= 0, `${topic}: no leader named`);
          const produced = await send_produce(connections.get(answer.leader_id)!, topic, [`first of ${topic}`], 1);
          assert.equal(
            produced.error_code,
            ErrorCode.NONE,
            `${topic}: the first Produce to broker ${answer.leader_id} (named by broker ${asked}) was refused`,
          );
          assert.equal(produced.base_offset, 0);
        }
      }
    } finally {
      for (const connection of connections.values()) connection.close();
    }
  },
);
