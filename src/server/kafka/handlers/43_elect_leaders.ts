// ElectLeaders 0-2: the preferred replica (type 0) as leader, or any live replica of a partition
// whose leader is gone (type 1, unclean: records its ISR had may be lost). A single node answers
// ELECTION_NOT_NEEDED; asked for every partition (null), only those an election was tried for are
// answered, as Kafka does.
import { ELECT_LEADERS } from '../../../protocol/kafka/messages/43_elect_leaders.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { Election } from '../../../core/index.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { allowed_on_cluster, audit, refusal } from '../authorize.ts';
import { error_fields } from '../error_map.ts';

const ELECTIONS: readonly Election[] = ['preferred', 'unclean'];

/** Every partition of every topic, when the request names none. */
function every_partition(ctx: RequestContext): Array<{ topic: string; partitions: number[] }> {
  return ctx.core.topics
    .list()
    .map((topic) => ({ topic: topic.name, partitions: Array.from({ length: topic.partitions }, (_, p) => p) }));
}

async function elect(ctx: RequestContext, topic: string, partition: number, election: Election) {
  try {
    await ctx.core.cluster.elect_leader(topic, partition, election);
    audit(ctx, `elect ${election} leader`, { topic, partition });
    return { partition_id: partition, error_code: 0, error_message: null };
  } catch (error) {
    return { partition_id: partition, ...error_fields(error) };
  }
}

export const elect_leaders_handler = kafka_handler(
  ELECT_LEADERS,
  {
    min: 0,
    max: 2,
    notes:
      'preferred and unclean elections, written as the controller would make them; a single node answers ' +
      'ELECTION_NOT_NEEDED',
  },
  async (request, ctx) => {
    const base = { throttle_time_ms: 0, replica_election_results: [] };
    if (!allowed_on_cluster(ctx, 'alter')) return { ...base, ...refusal(ctx, 'alter', 'cluster', '') };
    const election = ELECTIONS[request.election_type ?? 0];
    if (election === undefined)
      return {
        ...base,
        error_code: ErrorCode.INVALID_REQUEST,
        error_message: `election type ${request.election_type}: 0 (preferred) or 1 (unclean)`,
      };
    const every = request.topic_partitions === null;
    const results = [];
    for (const { topic, partitions } of request.topic_partitions ?? every_partition(ctx)) {
      const partition_result = [];
      for (const partition of partitions) {
        const result = await elect(ctx, topic, partition, election);
        if (!(every && result.error_code === ErrorCode.ELECTION_NOT_NEEDED)) partition_result.push(result);
      }
      if (partition_result.length > 0) results.push({ topic, partition_result });
    }
    return { ...base, error_code: 0, error_message: null, replica_election_results: results };
  },
);
