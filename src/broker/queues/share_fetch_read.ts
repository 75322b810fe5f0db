// One partition's part of a share fetch: acquiring the partition's records for a member and reading
// the batches that hold them within the fetch's byte budget; and the checks on an acknowledgement's
// offset ranges. Transaction markers, and under read_committed the records of
// aborted transactions, are acquired like any offset but never sent: the read finds them (their
// batches' headers and the aborted transactions the read lists) and they are archived at once.
import type { CommittedRead, PartitionReader } from '../../core/partition_reader.ts';
import type { AcquiredRange, OffsetRange } from '../../core/types.ts';
import { AckError } from '../../core/errors.ts';
import { batch_base_offset, batch_last_offset } from '../../format/batch_layout.ts';
import { hidden_batches } from '../txn/hidden_batches.ts';
import type { SharePartition } from './share_partition.ts';
import {
  reads_committed,
  visible_end,
  type PartitionState,
  type ShareCounters,
  type ShareGroup,
} from './share_group.ts';

/**
 * Bytes asked of the log in one read: the acquired records are usually far fewer bytes than the
 * fetch's budget, and a read costs what it asks for (file read and CRC checks), not what is used.
 */
const READ_BYTES_MAX = 256 * 1024;

export interface AcquiredRead {
  batches: Buffer[];
  /** The acquired ranges the batches cover, less the hidden offsets. */
  ranges: AcquiredRange[];
  /** Acquired offsets whose batch did not fit: they go back to the queue. */
  unsent: number[];
  /** Acquired offsets of hidden batches (markers, aborted records): to be archived. */
  hidden: number[];
  bytes: number;
  count: number;
}

/** What a fetch asks of one partition. */
export interface PartitionFetch {
  member_id: string;
  records_max: number;
  bytes_max: number;
  /** The monotonic clock's now (locks, backoff). */
  now_ms: number;
}

/**
 * Acquires what the group may hand out of one partition — records read ahead, below its visible
 * end — and reads their batches, counting what is handed out. `changed`: the partition's state
 * changed and is to be persisted.
 */
export async function acquire_in(
  counters: ShareCounters,
  group: ShareGroup,
  state: PartitionState,
  log: PartitionReader,
  request: PartitionFetch,
): Promise<AcquiredRead & { changed: boolean }> {
  // Only records read ahead may be handed out: an expired one never is, and keys are known.
  const by_key = group.settings.ordering === 'key' ? (offset: number) => state.ahead.key_of(offset) : undefined;
  const sent = await acquire_and_read(state.share, log, {
    ...request,
    end: Math.min(visible_end(group.settings, log), state.ahead.cursor),
    committed: reads_committed(group.settings),
    by_key,
  });
  counters.acquired += sent.count;
  for (const range of sent.ranges) {
    if (range.delivery_count <= 1) continue;
    const n = range.last_offset - range.first_offset + 1;
    counters.redeliveries += n;
    group.counters.redeliveries += n;
  }
  return { ...sent, changed: sent.ranges.length + sent.hidden.length + sent.unsent.length > 0 };
}

/** What one acquisition asks of a partition. */
export interface AcquireRequest {
  member_id: string;
  records_max: number;
  bytes_max: number;
  /** Offsets at or past it are not acquired (see visible_end). */
  end: number;
  now_ms: number;
  /** Read as a read_committed reader: records of aborted transactions are hidden. */
  committed: boolean;
  by_key?: (offset: number) => number | undefined;
}

/**
 * Acquires records for the member and reads their batches; hidden ones are archived, and while an
 * acquisition held nothing else the next records are acquired, so a run of aborted records or
 * markers does not leave a fetch empty. Unsent acquisitions go back to the queue.
 */
export async function acquire_and_read(
  share: SharePartition,
  log: PartitionReader,
  request: AcquireRequest,
): Promise<AcquiredRead> {
  const { member_id, records_max, bytes_max, end, now_ms, committed, by_key } = request;
  const hidden: number[] = [];
  for (;;) {
    const acquired = share.acquire(member_id, records_max, end, now_ms, by_key);
    if (acquired.length === 0) return { ...empty_read(), hidden };
    const sent = await read_acquired(log, acquired, bytes_max, committed);
    share.unacquire(sent.unsent);
    share.archive_undelivered(sent.hidden);
    for (const offset of sent.hidden) hidden.push(offset);
    if (sent.ranges.length > 0 || sent.hidden.length === 0) return { ...sent, hidden };
  }
}

function empty_read(): AcquiredRead {
  return { batches: [], ranges: [], unsent: [], hidden: [], bytes: 0, count: 0 };
}

/** A read in progress: the hidden batches' offset spans, in offset order, and how far they were used. */
interface ReadState extends AcquiredRead {
  spans: Array<{ first: number; last: number }>;
  span_index: number;
}

/**
 * Reads the batches holding the acquired ranges, in order, until `bytes_max` (at least one batch
 * is always read). Offsets whose batch did not fit come back in `unsent`, those of hidden batches
 * in `hidden`; hidden batches are neither sent nor counted against the budget.
 */
export async function read_acquired(
  log: PartitionReader,
  acquired: AcquiredRange[],
  bytes_max: number,
  committed = false,
): Promise<AcquiredRead> {
  const read: ReadState = { ...empty_read(), spans: [], span_index: 0 };
  let covered_to = -1; // last offset of the batches read so far
  for (const range of acquired) {
    let first = range.first_offset;
    while (first <= range.last_offset) {
      if (first > covered_to) {
        if (read.batches.length > 0 && read.bytes >= bytes_max) break;
        covered_to = await read_batches_from(log, first, range.last_offset, bytes_max, read, covered_to, committed);
      }
      const last = Math.min(range.last_offset, covered_to);
      if (last < first) break;
      add_visible(read, first, last, range.delivery_count);
      first = last + 1;
    }
    for (let offset = first; offset <= range.last_offset; offset++) read.unsent.push(offset);
  }
  const { batches, ranges, unsent, hidden, bytes, count } = read;
  return { batches, ranges, unsent, hidden, bytes, count };
}

/** Adds the batches from `first` on (up to `last` or the budget) to `read`; the last offset they cover. */
async function read_batches_from(
  log: PartitionReader,
  first: number,
  last: number,
  bytes_max: number,
  read: ReadState,
  covered_to: number,
  committed: boolean,
): Promise<number> {
  const bytes = Math.max(1, Math.min(READ_BYTES_MAX, bytes_max - read.bytes));
  const result: CommittedRead = committed
    ? await log.read_committed(first, bytes)
    : { batches: (await log.read(first, bytes)).batches, aborted: [] };
  const hidden = hidden_batches(result.batches, committed ? result.aborted : null);
  for (const [i, batch] of result.batches.entries()) {
    const batch_last = batch_last_offset(batch, 0);
    if (batch_last < first) continue;
    covered_to = batch_last;
    if (hidden[i]) read.spans.push({ first: batch_base_offset(batch, 0), last: batch_last });
    else {
      read.batches.push(batch);
      read.bytes += batch.length;
    }
    if (read.bytes >= bytes_max || batch_last >= last) break;
  }
  return covered_to;
}

/** Adds `first`..`last` to the read's ranges, less the offsets of hidden batches (to `hidden`). */
function add_visible(read: ReadState, first: number, last: number, delivery_count: number): void {
  const push = (from: number, to: number) => {
    read.ranges.push({ first_offset: from, last_offset: to, delivery_count });
    read.count += to - from + 1;
  };
  while (read.span_index < read.spans.length && read.spans[read.span_index]!.last < first) read.span_index++;
  let at = first;
  for (let i = read.span_index; i < read.spans.length && read.spans[i]!.first <= last; i++) {
    const span = read.spans[i]!;
    if (span.first > at) push(at, span.first - 1);
    for (let offset = Math.max(at, span.first); offset <= Math.min(last, span.last); offset++) read.hidden.push(offset);
    at = Math.max(at, span.last + 1);
  }
  if (at <= last) push(at, last);
}

/** Acknowledgement batches of one partition must not overlap (an offset is settled once). */
export function check_disjoint(batches: readonly OffsetRange[]): void {
  const sorted = [...batches].sort((a, b) => a.first_offset - b.first_offset);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.first_offset <= sorted[i - 1]!.last_offset)
      throw new AckError('invalid_request', `acknowledgement batches overlap at offset ${sorted[i]!.first_offset}`);
  }
}

export function offsets_in(range: OffsetRange): number[] {
  return Array.from({ length: range.last_offset - range.first_offset + 1 }, (_, i) => range.first_offset + i);
}
