// One partition's transactions, as its log shows them: which producers have a transaction open
// (from the offset of its first batch), which have ended with a marker the high watermark does not
// cover yet, and the aborted ones. From these come the last stable offset (read_committed readers
// stop there: below it every transaction has ended and its marker is replicated) and the aborted
// transactions a Fetch lists for the range it returns. Learnt from batch headers as they enter the
// log — on the leader, on followers and when a restart replays the log — so every replica agrees.

export interface AbortedTxn {
  producer_id: number;
  first_offset: number;
  /** The offset of its ABORT marker. */
  last_offset: number;
}

interface EndedTxn extends AbortedTxn {
  aborted: boolean;
}

/** Aborted transactions kept per partition; the oldest go first (a fetch that far back lists fewer). */
export const ABORTED_KEPT_MAX = 100_000;

export class PartitionTxns {
  /** Producer id → the first offset of its open transaction. */
  private readonly open = new Map<number, number>();

  /** Where the producer's open transaction starts; -1 when it has none. */
  open_start(producer_id: number): number {
    return this.open.get(producer_id) ?? -1;
  }
  /** Ended, in marker order, until the high watermark passes the marker. */
  private ending: EndedTxn[] = [];
  /** Aborted, in marker order. */
  private aborted: AbortedTxn[] = [];
  /**
   * Committed with a replicated marker, kept until a snapshot is taken past the marker: a snapshot
   * up to an earlier offset must still show them open.
   */
  private committed: AbortedTxn[] = [];

  /** A transactional data batch of `producer_id` entered the log at `base_offset`. */
  on_data(producer_id: number, base_offset: number): void {
    if (!this.open.has(producer_id)) this.open.set(producer_id, base_offset);
  }

  /** A marker of `producer_id` entered the log at `offset`. */
  on_marker(producer_id: number, offset: number, commit: boolean): void {
    const first_offset = this.open.get(producer_id);
    // A marker with no transaction open here: the coordinator ends every partition it added, even
    // one the producer then wrote nothing to. Nothing of it is in this log to hide.
    if (first_offset === undefined) return;
    this.open.delete(producer_id);
    this.ending.push({ producer_id, first_offset, last_offset: offset, aborted: !commit });
  }

  /**
   * The offset read_committed readers stop before: the first offset of the oldest transaction that
   * is open or whose marker is at or above the high watermark; the high watermark when none is.
   */
  last_stable_offset(high_watermark: number): number {
    this.settle(high_watermark);
    let stable = high_watermark;
    for (const first of this.open.values()) stable = Math.min(stable, first);
    for (const txn of this.ending) stable = Math.min(stable, txn.first_offset);
    return stable;
  }

  /** Moves transactions whose marker the high watermark covers from ending to done. */
  private settle(high_watermark: number): void {
    if (this.ending.length === 0 || this.ending[0]!.last_offset >= high_watermark) return;
    const still: EndedTxn[] = [];
    for (const txn of this.ending) {
      if (txn.last_offset >= high_watermark) still.push(txn);
      else if (txn.aborted) this.add_aborted(txn);
      else
        this.committed.push({
          producer_id: txn.producer_id,
          first_offset: txn.first_offset,
          last_offset: txn.last_offset,
        });
    }
    this.ending = still;
  }

  private add_aborted({ producer_id, first_offset, last_offset }: AbortedTxn): void {
    this.aborted.push({ producer_id, first_offset, last_offset });
    if (this.aborted.length > ABORTED_KEPT_MAX) this.aborted.splice(0, this.aborted.length - ABORTED_KEPT_MAX);
  }

  /**
   * The aborted transactions a read of [from, to) must list: those with records in it, ended
   * below the high watermark (a read_committed read stops before any other).
   */
  aborted_in(from: number, to: number, high_watermark: number): AbortedTxn[] {
    this.settle(high_watermark);
    const found: AbortedTxn[] = [];
    // Markers are in offset order; a transaction spans from its first offset to its marker.
    for (let i = this.aborted.length - 1; i >= 0; i--) {
      const txn = this.aborted[i]!;
      if (txn.first_offset < to && txn.last_offset >= from) found.push(txn);
    }
    return found.reverse();
  }

  /** Whether `producer_id` has a transaction open in this partition. */
  has_open(producer_id: number): boolean {
    return this.open.has(producer_id);
  }

  /** The log was cut at `offset`: what it no longer holds is undone. */
  truncate_from(offset: number): void {
    for (const [id, first] of this.open) if (first >= offset) this.open.delete(id);
    const reopened = [...this.ending, ...this.aborted.map((a) => ({ ...a, aborted: true }))].filter(
      (txn) => txn.last_offset >= offset,
    );
    for (const txn of this.committed) if (txn.last_offset >= offset) reopened.push({ ...txn, aborted: false });
    this.ending = this.ending.filter((txn) => txn.last_offset < offset);
    this.aborted = this.aborted.filter((txn) => txn.last_offset < offset);
    this.committed = this.committed.filter((txn) => txn.last_offset < offset);
    // A marker cut away leaves its transaction open again, if its first batch is still there.
    for (const txn of reopened) if (txn.first_offset < offset) this.open.set(txn.producer_id, txn.first_offset);
  }

  /** The log's start moved to `offset`: aborted transactions wholly before it are no reader's. */
  prune_before(offset: number): void {
    const keep = this.aborted.findIndex((txn) => txn.last_offset >= offset);
    if (keep === -1) this.aborted = [];
    else if (keep > 0) this.aborted = this.aborted.slice(keep);
  }

  /**
   * The state of the log up to `offset` (a snapshot; what follows is replayed from the log). Called
   * with increasing offsets: committed transactions it no longer needs are let go.
   */
  to_json(offset: number): PartitionTxnsJson {
    const open: Array<[number, number]> = [];
    for (const [id, first] of this.open) if (first < offset) open.push([id, first]);
    // Transactions that end after `offset` were open as of it.
    for (const txn of [...this.committed, ...this.aborted, ...this.ending])
      if (txn.last_offset >= offset && txn.first_offset < offset) open.push([txn.producer_id, txn.first_offset]);
    this.committed = this.committed.filter((txn) => txn.last_offset >= offset);
    return {
      open,
      ending: this.ending.filter((txn) => txn.last_offset < offset).map(to_tuple),
      aborted: this.aborted.filter((txn) => txn.last_offset < offset).map(to_tuple),
    };
  }

  static from_json(json: PartitionTxnsJson | undefined): PartitionTxns {
    const txns = new PartitionTxns();
    if (!json) return txns;
    for (const [id, first] of json.open) txns.open.set(id, first);
    txns.ending = json.ending.map(([producer_id, first_offset, last_offset, aborted]) => ({
      producer_id,
      first_offset,
      last_offset,
      aborted: aborted === 1,
    }));
    txns.aborted = json.aborted.map(([producer_id, first_offset, last_offset]) => ({
      producer_id,
      first_offset,
      last_offset,
    }));
    return txns;
  }
}

/** Compact: a snapshot holds every partition's transactions. */
export interface PartitionTxnsJson {
  open: Array<[number, number]>;
  ending: Array<[number, number, number, number]>;
  aborted: Array<[number, number, number, number]>;
}

function to_tuple(txn: AbortedTxn | EndedTxn): [number, number, number, number] {
  return [txn.producer_id, txn.first_offset, txn.last_offset, 'aborted' in txn && !txn.aborted ? 0 : 1];
}
