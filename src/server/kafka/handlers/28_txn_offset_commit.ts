// TxnOffsetCommit 0-5: offsets a transactional producer commits for a consumer group, applied only
// if its transaction commits. Up to v4 it needs AddOffsetsToTxn first; from v5 (transaction version
// 2, KIP-890) the group's offsets join the transaction here. From v3 the member's generation is
// checked as for OffsetCommit when the producer gives one. v4 only adds an error code Sluice does
// not send (TRANSACTION_ABORTABLE).
import { TXN_OFFSET_COMMIT } from '../../../protocol/kafka/messages/28_txn_offset_commit.ts';
import type { OffsetCommitEntry } from '../../../core/index.ts';
import { kafka_handler } from '../handler.ts';
import { require_allowed } from '../authorize.ts';
import { kafka_error_code } from '../error_map.ts';

export const txn_offset_commit_handler = kafka_handler(
  TXN_OFFSET_COMMIT,
  { min: 0, max: 5, notes: 'the offsets apply when the transaction commits; v5 joins the transaction' },
  async (request, ctx) => {
    const entries: OffsetCommitEntry[] = request.topics.flatMap((t) =>
      t.partitions.map((p) => ({
        topic: t.name,
        partition: p.partition_index,
        offset: p.committed_offset,
        metadata: p.committed_metadata,
        leader_epoch: p.committed_leader_epoch,
      })),
    );
    let error_code = 0;
    try {
      require_allowed(ctx, 'write', 'transactional_id', request.transactional_id);
      require_allowed(ctx, 'read', 'group', request.group_id);
      for (const topic of request.topics) require_allowed(ctx, 'read', 'topic', topic.name);
      if (request.generation_id >= 0)
        ctx.core.groups.validate_commit(
          request.group_id,
          request.member_id,
          request.generation_id,
          request.group_instance_id,
        );
      await ctx.core.transactions.commit_offsets(
        request.transactional_id,
        request.group_id,
        request.producer_id,
        request.producer_epoch,
        entries,
        ctx.version >= 5,
      );
    } catch (error) {
      error_code = kafka_error_code(error);
    }
    return {
      throttle_time_ms: 0,
      topics: request.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partition_index: p.partition_index, error_code })),
      })),
    };
  },
);
