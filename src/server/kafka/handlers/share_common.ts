// What ShareFetch and ShareAcknowledge share: topic ids resolved to names, acknowledgement batches
// checked and handed to the core, per-partition keys. Renewing locks (v2 is_renew_ack, type 4) is
// refused.
import { SHARE_ACKNOWLEDGEMENT_TOPICS } from '../../../protocol/kafka/messages/78_share_fetch.ts';
import type { DecodedStruct, Row } from '../../../protocol/kafka/schema.ts';
import { BrokerError, type AckTypeCode, type AcknowledgeBatch, type TopicPartition } from '../../../core/index.ts';
import type { RequestContext } from '../handler.ts';
import { require_allowed } from '../authorize.ts';
import { error_message, kafka_error_code } from '../error_map.ts';

/** The acknowledgement topics both requests carry, as decoded. */
type AckTopic = Row<DecodedStruct<readonly [typeof SHARE_ACKNOWLEDGEMENT_TOPICS]>['topics']>;

export interface PartitionAcks extends TopicPartition {
  topic_id: string;
  batches: AcknowledgeBatch[];
}

const ACK_TYPE_MAX = 3;

function is_ack_type(type: number): type is AckTypeCode {
  return Number.isInteger(type) && type >= 0 && type <= ACK_TYPE_MAX;
}

/** Acknowledge types 0 gap, 1 accept, 2 release, 3 reject; anything else refuses the request. */
function ack_types(types: readonly number[]): AckTypeCode[] {
  const bad = types.find((t) => !is_ack_type(t));
  if (bad !== undefined)
    throw new BrokerError(
      'invalid_request',
      `acknowledge type ${bad} is not supported (0 gap, 1 accept, 2 release, 3 reject)`,
    );
  return types.filter(is_ack_type);
}

/** Topic ids to names; partitions of unknown ids are answered UNKNOWN_TOPIC_ID. */
export function resolve_topics(
  topics: readonly AckTopic[],
  ctx: RequestContext,
): { known: PartitionAcks[]; unknown: Array<{ topic_id: string; partition: number }> } {
  const known: PartitionAcks[] = [];
  const unknown: Array<{ topic_id: string; partition: number }> = [];
  for (const { topic_id, partitions } of topics) {
    const name = ctx.core.topics.get_by_id(topic_id)?.name;
    for (const partition of partitions) {
      const index = partition.partition_index;
      if (!name) {
        unknown.push({ topic_id, partition: index });
        continue;
      }
      require_allowed(ctx, 'read', 'topic', name);
      const batches = partition.acknowledgement_batches.map((b) => ({
        first_offset: b.first_offset,
        last_offset: b.last_offset,
        types: ack_types(b.acknowledge_types),
        reason: b.sluice_failure_reason,
        release_delay_ms: b.sluice_release_delay_ms,
      }));
      known.push({ topic: name, topic_id, partition: index, batches });
    }
  }
  return { known, unknown };
}

/** Hands the partitions' acknowledgements to the core; per partition key, the error if any. */
export async function acknowledge(
  ctx: RequestContext,
  group_id: string,
  member_id: string,
  partitions: PartitionAcks[],
): Promise<Map<string, unknown>> {
  const with_acks = partitions.filter((p) => p.batches.length > 0);
  if (with_acks.length === 0) return new Map();
  return ctx.core.shares.acknowledge(group_id, member_id, with_acks);
}

export const key_of = (p: TopicPartition) => `${p.topic}\u0000${p.partition}`;

export function top_level_error(error: unknown): { error_code: number; error_message: string } {
  return { error_code: kafka_error_code(error), error_message: error_message(error) };
}

export function refuse_renewal(is_renew_ack: boolean): void {
  if (is_renew_ack) throw new BrokerError('invalid_request', 'renewing acquisition locks is not supported');
}
