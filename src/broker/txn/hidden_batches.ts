// Which batches of a read are no consumer's records: transaction markers (control batches) always,
// and for a read_committed reader the batches of aborted transactions. A Fetch leaves this to the
// client; the broker's own readers (share groups, redrive) decide it here, as Kafka's clients do:
// walking the batches in offset order with the aborted transactions the read listed.
import type { AbortedTransaction } from '../../core/types.ts';
import {
  ATTRIBUTE_CONTROL,
  ATTRIBUTE_TRANSACTIONAL,
  batch_attributes,
  batch_last_offset,
  batch_producer_id,
} from '../../format/batch_layout.ts';

/**
 * One flag per batch of `batches` (whole batches in offset order, as one read returned them):
 * true for a marker, and, when `aborted` is given (a read_committed read's list), for a batch of
 * an aborted transaction.
 */
export function hidden_batches(batches: readonly Buffer[], aborted: readonly AbortedTransaction[] | null): boolean[] {
  const pending = aborted ? [...aborted].sort((a, b) => a.first_offset - b.first_offset) : [];
  let next = 0;
  // Producers whose aborted transaction the walk is inside: from its first offset to its marker.
  const aborting = new Set<number>();
  return batches.map((batch) => {
    const attributes = batch_attributes(batch, 0);
    const producer_id = batch_producer_id(batch, 0);
    const last_offset = batch_last_offset(batch, 0);
    while (next < pending.length && pending[next]!.first_offset <= last_offset)
      aborting.add(pending[next++]!.producer_id);
    if ((attributes & ATTRIBUTE_CONTROL) !== 0) {
      // A marker ends its producer's transaction, and only the ABORT can follow aborted records.
      aborting.delete(producer_id);
      return true;
    }
    return (attributes & ATTRIBUTE_TRANSACTIONAL) !== 0 && aborting.has(producer_id);
  });
}
