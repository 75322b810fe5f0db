// WriteTxnMarkers 0-1: a transaction coordinator on another broker has this broker append the
// commit or abort marker of a transaction to the partitions it leads; each partition answers on
// its own (NOT_LEADER_OR_FOLLOWER where another broker leads it, and the coordinator asks that one).
import { WRITE_TXN_MARKERS } from '../../../protocol/kafka/messages/27_write_txn_markers.ts';
import { kafka_handler } from '../handler.ts';
import { allowed_on_cluster, REFUSED } from '../authorize.ts';
import { kafka_error_code } from '../error_map.ts';

export const write_txn_markers_handler = kafka_handler(
  WRITE_TXN_MARKERS,
  { min: 0, max: 1, notes: 'sent by the transaction coordinator to partition leaders' },
  async (request, ctx) => ({
    markers: await Promise.all(
      request.markers.map(async (marker) => {
        // Only a transaction coordinator, another broker, writes markers.
        if (!allowed_on_cluster(ctx, 'cluster_action')) return refused_marker(marker);
        const wanted = marker.topics.flatMap((t) =>
          t.partition_indexes.map((partition) => ({ topic: t.name, partition })),
        );
        const results = await ctx.core.transactions.write_markers(
          {
            producer_id: marker.producer_id,
            producer_epoch: marker.producer_epoch,
            commit: marker.transaction_result,
            coordinator_epoch: marker.coordinator_epoch,
          },
          wanted,
        );
        const codes = results.map((r) => (r.error ? kafka_error_code(r.error) : 0));
        let i = 0;
        return {
          producer_id: marker.producer_id,
          topics: marker.topics.map((t) => ({
            name: t.name,
            partitions: t.partition_indexes.map((partition_index) => ({ partition_index, error_code: codes[i++]! })),
          })),
        };
      }),
    ),
  }),
);

function refused_marker(marker: { producer_id: number; topics: Array<{ name: string; partition_indexes: number[] }> }) {
  return {
    producer_id: marker.producer_id,
    topics: marker.topics.map((t) => ({
      name: t.name,
      partitions: t.partition_indexes.map((partition_index) => ({ partition_index, error_code: REFUSED.cluster })),
    })),
  };
}
