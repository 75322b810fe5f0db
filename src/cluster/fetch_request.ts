// The Fetch request one broker sends another: a follower's (with its replica id, reading to the
// leader's written end) or a reader's (replica id -1, reading to the high watermark, or with
// isolation level 1 to the last stable offset). No fetch sessions: every request names its
// partitions.
import type { FETCH } from '../protocol/kafka/messages/01_fetch.ts';
import type { RequestIn, Row } from '../protocol/kafka/schema.ts';

/** The Fetch version brokers speak to each other. */
export const PEER_FETCH_VERSION = 12;

export interface PeerFetchPartition {
  topic: string;
  partition: number;
  /** -1: not checked by the leader. */
  current_leader_epoch: number;
  fetch_offset: number;
  partition_bytes_max: number;
}

type FetchPartitionIn = Row<Row<RequestIn<typeof FETCH>['topics']>['partitions']>;

export function peer_fetch_request(
  replica_id: number,
  partitions: readonly PeerFetchPartition[],
  wait_ms: number,
  min_bytes: number,
  bytes_max: number,
  isolation_level: 0 | 1 = 0,
): RequestIn<typeof FETCH> {
  const by_topic = new Map<string, FetchPartitionIn[]>();
  for (const p of partitions) {
    if (!by_topic.has(p.topic)) by_topic.set(p.topic, []);
    by_topic.get(p.topic)!.push({
      partition: p.partition,
      current_leader_epoch: p.current_leader_epoch,
      fetch_offset: p.fetch_offset,
      last_fetched_epoch: -1,
      log_start_offset: -1,
      partition_max_bytes: p.partition_bytes_max,
    });
  }
  return {
    replica_id,
    max_wait_ms: wait_ms,
    min_bytes,
    max_bytes: bytes_max,
    isolation_level,
    session_id: 0,
    session_epoch: -1,
    topics: [...by_topic].map(([topic, rows]) => ({ topic, partitions: rows })),
    forgotten_topics_data: [],
    rack_id: '',
  };
}
