// The queue state of one share group on one partition (KIP-932's share-partition): which records
// in a bounded window past the start offset are available, acquired (locked by a member until a
// deadline), acknowledged, or archived. Pure state: the caller supplies the time and the log's end,
// persists the deltas this returns before answering clients, and writes dead letters.
//
// Window: offsets in [start_offset, end_offset) have an entry; offsets from end_offset up to the
// log's high watermark have never been delivered and are implicitly available. The start offset
// moves past the longest prefix of finished records (acknowledged or archived).
import { AckError } from '../../core/errors.ts';
import { AckType, type AckTypeCode, type AcquiredRange, type OffsetRange, type QueueCensus } from '../../core/types.ts';

export const RecordState = {
  AVAILABLE: 0,
  ACQUIRED: 1,
  ACKNOWLEDGED: 2,
  /** Sluice's own: decided to be archived, its dead letter not yet written. */
  DEAD_LETTERING: 3,
  ARCHIVED: 4,
} as const;
export type RecordStateCode = (typeof RecordState)[keyof typeof RecordState];

/** Their bounds and defaults: the share_groups entries of the settings table (core/settings.ts). */
export interface SharePartitionSettings {
  /** Deliveries before a released or timed-out record is archived (dead-lettered) instead. */
  delivery_count_limit: number;
  record_lock_duration_ms: number;
  /** Entries in the window at most: the bound on memory and on records in flight. */
  records_in_flight_max: number;
  /** Wait before the n-th redelivery (the last value repeats); empty for none. */
  retry_backoff_ms: readonly number[];
}

/** The longest wait a consumer may ask for when it releases a record. */
export const RELEASE_DELAY_MS_MAX = 7 * 24 * 3600 * 1000;

interface Entry {
  state: RecordStateCode;
  delivery_count: number;
  member: string | null;
  /** ACQUIRED: when the lock runs out. AVAILABLE: not offered before this (retry backoff). */
  deadline_ms: number;
  /** Why it is being dead-lettered (DEAD_LETTERING only). */
  reason: string | null;
  /** Its time to live ran out while it was acquired: it is not offered again. */
  expired?: string;
}

/** A record to dead-letter: its offset, how often it was delivered and why it stopped. */
export interface DeadLetter {
  offset: number;
  delivery_count: number;
  reason: string;
}

/** What changed, as persisted: runs of offsets with one state and delivery count. */
export interface StateRun {
  first_offset: number;
  last_offset: number;
  state: RecordStateCode;
  delivery_count: number;
}

export interface StateDelta {
  start_offset: number;
  runs: StateRun[];
}

export class SharePartition {
  start_offset: number;
  /** The first offset never acquired. */
  end_offset: number;
  private entries: Entry[] = [];
  /** Index in `entries` of start_offset (entries before it are dropped lazily). */
  private head = 0;
  private available_count = 0;
  private acquired_count = 0;
  /** Offsets whose state changed since the last take_delta(). */
  private changed = new Set<number>();
  /** Dead letters decided and not yet handed out by take_dead_letters(). */
  private dead_letters: DeadLetter[] = [];

  constructor(
    start_offset: number,
    private readonly settings: SharePartitionSettings,
  ) {
    this.start_offset = start_offset;
    this.end_offset = start_offset;
  }

  get in_flight(): number {
    return this.acquired_count;
  }

  get window_size(): number {
    return this.end_offset - this.start_offset;
  }

  /** Records in the window that wait to be offered again (redeliveries included). */
  get available_in_window(): number {
    return this.available_count;
  }

  /**
   * Per state, how many records the window holds, and how often the unfinished ones were delivered
   * (admin views; walks the window).
   */
  census(): QueueCensus {
    const counts = {
      available: 0,
      acquired: 0,
      acknowledged: 0,
      dead_lettering: 0,
      archived: 0,
      redelivering: 0,
      delivery_count_max: 0,
    };
    for (let i = this.head; i < this.entries.length; i++) {
      const entry = this.entries[i]!;
      const unfinished = entry.state === RecordState.AVAILABLE || entry.state === RecordState.ACQUIRED;
      if (entry.state === RecordState.AVAILABLE) counts.available++;
      else if (entry.state === RecordState.ACQUIRED) counts.acquired++;
      else if (entry.state === RecordState.ACKNOWLEDGED) counts.acknowledged++;
      else if (entry.state === RecordState.DEAD_LETTERING) counts.dead_lettering++;
      else counts.archived++;
      if (entry.state === RecordState.AVAILABLE && entry.delivery_count > 0) counts.redelivering++;
      if (unfinished) counts.delivery_count_max = Math.max(counts.delivery_count_max, entry.delivery_count);
    }
    return counts;
  }

  /** True when acquire() could return something now (for long polls). */
  has_available(log_end: number, now_ms: number): boolean {
    if (this.available_count > 0 && this.next_available_at(now_ms) <= now_ms) return true;
    return this.end_offset < log_end && this.window_size < this.settings.records_in_flight_max;
  }

  /** The earliest time a backed-off record becomes available (Infinity when none waits). */
  next_available_at(now_ms: number): number {
    if (this.available_count === 0) return Infinity;
    let earliest = Infinity;
    for (let i = this.head; i < this.entries.length; i++) {
      const entry = this.entries[i]!;
      if (entry.state === RecordState.AVAILABLE && entry.deadline_ms < earliest) {
        earliest = entry.deadline_ms;
        if (earliest <= now_ms) break;
      }
    }
    return earliest;
  }

  /** The earliest lock deadline (Infinity when nothing is acquired). */
  next_lock_deadline(): number {
    if (this.acquired_count === 0) return Infinity;
    let earliest = Infinity;
    for (let i = this.head; i < this.entries.length; i++) {
      const entry = this.entries[i]!;
      if (entry.state === RecordState.ACQUIRED && entry.deadline_ms < earliest) earliest = entry.deadline_ms;
    }
    return earliest;
  }

  private entry(offset: number): Entry | undefined {
    if (offset < this.start_offset || offset >= this.end_offset) return undefined;
    return this.entries[this.head + offset - this.start_offset];
  }

  /**
   * Acquires up to `records_max` records for `member`: redeliveries whose backoff has passed first
   * (lowest offsets first), then records never delivered, up to `log_end` and the window bound.
   */
  acquire(member: string, records_max: number, log_end: number, now_ms: number, key_of?: KeyOf): AcquiredRange[] {
    if (key_of) return this.acquire_by_key(member, records_max, log_end, now_ms, key_of);
    const acquired: number[] = [];
    if (this.available_count > 0) {
      for (let i = this.head; i < this.entries.length && acquired.length < records_max; i++) {
        const entry = this.entries[i]!;
        if (entry.state !== RecordState.AVAILABLE || entry.deadline_ms > now_ms) continue;
        this.lock(entry, member, now_ms);
        this.available_count--;
        acquired.push(this.start_offset + i - this.head);
      }
    }
    while (this.may_grow(acquired.length, records_max, log_end)) {
      const entry = fresh_entry();
      this.entries.push(entry);
      this.lock(entry, member, now_ms);
      acquired.push(this.end_offset++);
    }
    for (const offset of acquired) this.changed.add(offset);
    return ranges_of(acquired, (offset) => this.entry(offset)!.delivery_count);
  }

  /**
   * Ordered by key: a record is handed out only when no earlier record with its key is unfinished
   * (available, acquired or being dead-lettered), so one key is never in flight twice and a retry
   * keeps its key's order. Records without a key are not ordered.
   */
  private acquire_by_key(
    member: string,
    records_max: number,
    log_end: number,
    now_ms: number,
    key_of: KeyOf,
  ): AcquiredRange[] {
    const acquired: number[] = [];
    const blocked = new Set<number>();
    const consider = (offset: number, entry: Entry) => {
      if (!is_unfinished(entry)) return;
      const key = key_of(offset);
      if (key !== undefined && blocked.has(key)) return;
      if (entry.state === RecordState.AVAILABLE && entry.deadline_ms <= now_ms && acquired.length < records_max) {
        this.lock(entry, member, now_ms);
        this.available_count--;
        acquired.push(offset);
      }
      if (key !== undefined) blocked.add(key);
    };
    for (let i = this.head; i < this.entries.length; i++) consider(this.start_offset + i - this.head, this.entries[i]!);
    while (this.may_grow(acquired.length, records_max, log_end)) {
      const entry = fresh_entry();
      this.entries.push(entry);
      this.available_count++;
      this.changed.add(this.end_offset);
      consider(this.end_offset++, entry);
    }
    acquired.sort((a, b) => a - b);
    for (const offset of acquired) this.changed.add(offset);
    return ranges_of(acquired, (offset) => this.entry(offset)!.delivery_count);
  }

  /** Whether the window may take in a record never delivered, for an acquisition of `records_max`. */
  private may_grow(acquired: number, records_max: number, log_end: number): boolean {
    const room = this.window_size < this.settings.records_in_flight_max;
    return acquired < records_max && this.end_offset < log_end && room;
  }

  private lock(entry: Entry, member: string, now_ms: number): void {
    entry.state = RecordState.ACQUIRED;
    entry.delivery_count++;
    entry.member = member;
    entry.deadline_ms = now_ms + this.settings.record_lock_duration_ms;
    this.acquired_count++;
  }

  /**
   * Gives back acquisitions that were never delivered (the response could not carry them): their
   * delivery count is lowered again.
   */
  unacquire(offsets: Iterable<number>): void {
    for (const offset of offsets) {
      const entry = this.entry(offset);
      if (!entry || entry.state !== RecordState.ACQUIRED) continue;
      entry.delivery_count--;
      this.make_available(entry, 0);
      this.acquired_count--;
      this.changed.add(offset);
    }
  }

  /**
   * Acquisitions that are no records to deliver (transaction markers, records of aborted
   * transactions) are archived: finished, never delivered, so never offered again or dead-lettered.
   */
  archive_undelivered(offsets: Iterable<number>): void {
    for (const offset of offsets) {
      const entry = this.entry(offset);
      if (!entry || entry.state !== RecordState.ACQUIRED) continue;
      entry.state = RecordState.ARCHIVED;
      entry.delivery_count--;
      entry.member = null;
      this.acquired_count--;
      this.changed.add(offset);
    }
    this.advance();
  }

  /**
   * Settles `first`..`last` for `member` with one type (or one type per offset). All offsets must
   * be acquired by that member; otherwise nothing changes and AckError says why.
   */
  acknowledge(
    member: string,
    range: OffsetRange,
    types: readonly AckTypeCode[],
    now_ms: number,
    reason: string | null = null,
    release_delay_ms = -1,
  ): void {
    this.check_acknowledgement(member, range, types);
    const { first_offset, last_offset } = range;
    for (let offset = first_offset; offset <= last_offset; offset++) {
      const type = types.length === 1 ? types[0]! : types[offset - first_offset]!;
      this.settle(offset, type, now_ms, reason, release_delay_ms);
    }
    this.advance();
  }

  /** Throws AckError unless every offset of the range is acquired by `member` (changes nothing). */
  check_acknowledgement(member: string, range: OffsetRange, types: readonly AckTypeCode[]): void {
    const { first_offset, last_offset } = range;
    if (last_offset < first_offset) {
      throw new AckError('invalid_request', `acknowledgement range ${first_offset}-${last_offset} is empty`);
    }
    if (types.length !== 1 && types.length !== last_offset - first_offset + 1) {
      const offsets = last_offset - first_offset + 1;
      throw new AckError('invalid_request', `${types.length} acknowledge types for ${offsets} offsets`);
    }
    for (let offset = first_offset; offset <= last_offset; offset++) {
      const entry = this.entry(offset);
      if (!entry || entry.state !== RecordState.ACQUIRED || entry.member !== member) {
        const state = entry ? state_name(entry.state) : 'not in flight';
        throw new AckError('invalid_record_state', `offset ${offset} is not acquired by this member (${state})`);
      }
    }
  }

  private settle(
    offset: number,
    type: AckTypeCode,
    now_ms: number,
    reason: string | null,
    release_delay_ms: number,
  ): void {
    const entry = this.entry(offset)!;
    this.acquired_count--;
    entry.member = null;
    this.changed.add(offset);
    switch (type) {
      case AckType.GAP:
      case AckType.ACCEPT:
        entry.state = RecordState.ACKNOWLEDGED;
        return;
      case AckType.REJECT:
        this.dead_letter(offset, entry, reason ?? 'rejected by the consumer');
        return;
      case AckType.RELEASE:
        this.retry_or_dead_letter(offset, entry, now_ms, reason ?? 'released by the consumer', release_delay_ms);
        return;
      default:
        throw new AckError('invalid_request', `unknown acknowledge type ${String(type)}`);
    }
  }

  /** `delay_ms` >= 0: the consumer's own wait before the next offer, instead of the group's backoff. */
  private retry_or_dead_letter(offset: number, entry: Entry, now_ms: number, reason: string, delay_ms = -1): void {
    if (entry.expired !== undefined) {
      this.dead_letter(offset, entry, entry.expired);
      return;
    }
    if (entry.delivery_count >= this.settings.delivery_count_limit) {
      const limit = this.settings.delivery_count_limit;
      this.dead_letter(offset, entry, `delivery limit ${limit} reached; last failure: ${reason}`);
      return;
    }
    const schedule = this.settings.retry_backoff_ms;
    const scheduled_ms = schedule.length === 0 ? 0 : schedule[Math.min(entry.delivery_count, schedule.length) - 1]!;
    const backoff_ms = delay_ms >= 0 ? Math.min(delay_ms, RELEASE_DELAY_MS_MAX) : scheduled_ms;
    this.make_available(entry, now_ms + backoff_ms);
  }

  private make_available(entry: Entry, at_ms: number): void {
    entry.state = RecordState.AVAILABLE;
    entry.member = null;
    entry.deadline_ms = at_ms;
    this.available_count++;
  }

  private dead_letter(offset: number, entry: Entry, reason: string): void {
    entry.state = RecordState.DEAD_LETTERING;
    entry.reason = reason;
    this.dead_letters.push({ offset, delivery_count: entry.delivery_count, reason });
  }

  /** Lock timeouts: acquired records past their deadline are released (or dead-lettered). */
  expire_locks(now_ms: number): number {
    if (this.acquired_count === 0) return 0;
    let expired = 0;
    for (let i = this.head; i < this.entries.length; i++) {
      const entry = this.entries[i]!;
      if (entry.state !== RecordState.ACQUIRED || entry.deadline_ms > now_ms) continue;
      const offset = this.start_offset + i - this.head;
      this.acquired_count--;
      this.changed.add(offset);
      const lock_ms = this.settings.record_lock_duration_ms;
      this.retry_or_dead_letter(offset, entry, now_ms, `acquisition lock of ${lock_ms} ms timed out`);
      expired++;
    }
    return expired;
  }

  /**
   * The record at `offset` expired (its time to live ran out): an available one is dead-lettered
   * now (or archived without a dead letter when `drop`); an acquired one is not offered again once
   * released. A record ahead of the window is brought into it first, if the window has room;
   * 'later' means it has none yet, 'finished' that the record was settled before it expired.
   */
  expire(offset: number, reason: string, drop: boolean): 'expired' | 'finished' | 'later' {
    if (offset < this.start_offset) return 'finished';
    if (offset >= this.end_offset) {
      if (offset - this.start_offset >= this.settings.records_in_flight_max) return 'later';
      while (this.end_offset <= offset) {
        this.entries.push(fresh_entry());
        this.available_count++;
        this.changed.add(this.end_offset++);
      }
    }
    const entry = this.entry(offset)!;
    if (entry.state === RecordState.ACQUIRED) {
      entry.expired = reason;
      return 'expired';
    }
    if (entry.state !== RecordState.AVAILABLE) return 'finished';
    this.available_count--;
    this.changed.add(offset);
    if (drop) entry.state = RecordState.ARCHIVED;
    else this.dead_letter(offset, entry, reason);
    this.advance();
    return 'expired';
  }

  /** A member left: its acquired records are released at once (they count as a delivery). */
  release_member(member: string, now_ms: number): number {
    let released = 0;
    for (let i = this.head; i < this.entries.length && this.acquired_count > 0; i++) {
      const entry = this.entries[i]!;
      if (entry.state !== RecordState.ACQUIRED || entry.member !== member) continue;
      const offset = this.start_offset + i - this.head;
      this.acquired_count--;
      this.changed.add(offset);
      this.retry_or_dead_letter(offset, entry, now_ms, 'the consumer left the group');
      released++;
    }
    this.advance();
    return released;
  }

  /** Dead letters decided since the last call, to be written by the caller. */
  take_dead_letters(): DeadLetter[] {
    const taken = this.dead_letters;
    this.dead_letters = [];
    return taken;
  }

  /** The dead letters of these offsets are durable: the records are archived. */
  dead_lettered(offsets: Iterable<number>): void {
    for (const offset of offsets) {
      const entry = this.entry(offset);
      if (!entry || entry.state !== RecordState.DEAD_LETTERING) continue;
      entry.state = RecordState.ARCHIVED;
      entry.reason = null;
      this.changed.add(offset);
    }
    this.advance();
  }

  /** Records below `offset` are gone from the log (retention, delete-records): drop them. */
  truncate_before(offset: number): void {
    if (offset <= this.start_offset) return;
    while (this.start_offset < offset && this.start_offset < this.end_offset) {
      const entry = this.entries[this.head]!;
      if (entry.state === RecordState.AVAILABLE) this.available_count--;
      if (entry.state === RecordState.ACQUIRED) this.acquired_count--;
      this.changed.delete(this.start_offset);
      this.head++;
      this.start_offset++;
    }
    if (this.start_offset < offset) {
      this.start_offset = offset;
      this.end_offset = offset;
    }
    this.compact();
  }

  /** Moves the start past finished records. */
  private advance(): void {
    while (this.start_offset < this.end_offset) {
      const state = this.entries[this.head]!.state;
      if (state !== RecordState.ACKNOWLEDGED && state !== RecordState.ARCHIVED) break;
      this.changed.delete(this.start_offset);
      this.head++;
      this.start_offset++;
    }
    this.compact();
  }

  private compact(): void {
    if (this.head === this.entries.length) {
      this.entries = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries = this.entries.slice(this.head);
      this.head = 0;
    }
  }

  /** The changes since the last call, as runs (what the state store appends). */
  take_delta(): StateDelta {
    const offsets = [...this.changed].sort((a, b) => a - b);
    this.changed.clear();
    return { start_offset: this.start_offset, runs: this.runs_of(offsets) };
  }

  /** The whole state: every entry of the window, as runs. */
  snapshot(): StateDelta & { end_offset: number } {
    const offsets: number[] = [];
    for (let offset = this.start_offset; offset < this.end_offset; offset++) offsets.push(offset);
    return { start_offset: this.start_offset, end_offset: this.end_offset, runs: this.runs_of(offsets) };
  }

  private runs_of(offsets: number[]): StateRun[] {
    const runs: StateRun[] = [];
    for (const offset of offsets) {
      const entry = this.entry(offset);
      if (!entry) continue;
      const last = runs[runs.length - 1];
      const { state, delivery_count } = entry;
      const same = last?.state === state && last.delivery_count === delivery_count;
      if (last && same && last.last_offset === offset - 1) last.last_offset = offset;
      else runs.push({ first_offset: offset, last_offset: offset, state, delivery_count });
    }
    return runs;
  }

  /**
   * Rebuilds from persisted state after a restart: acquired records come back available (their
   * delivery count stays raised), records being dead-lettered are dead-lettered again.
   */
  static restore(
    start_offset: number,
    end_offset: number,
    runs: readonly StateRun[],
    settings: SharePartitionSettings,
    now_ms: number,
  ): SharePartition {
    const partition = new SharePartition(start_offset, settings);
    partition.end_offset = Math.max(start_offset, end_offset);
    const states = new Map<number, StateRun>();
    for (const run of runs) {
      const first = Math.max(run.first_offset, start_offset);
      for (let offset = first; offset <= run.last_offset; offset++) states.set(offset, run);
    }
    for (let offset = start_offset; offset < partition.end_offset; offset++) {
      const run = states.get(offset);
      const entry: Entry = { ...fresh_entry(), delivery_count: run?.delivery_count ?? 0, deadline_ms: now_ms };
      partition.entries.push(entry);
      const state = run?.state ?? RecordState.AVAILABLE;
      if (state === RecordState.ACKNOWLEDGED || state === RecordState.ARCHIVED) {
        entry.state = state;
      } else if (state === RecordState.DEAD_LETTERING) {
        partition.dead_letter(offset, entry, 'dead-lettering interrupted by a restart');
      } else if (entry.delivery_count >= settings.delivery_count_limit) {
        const limit = settings.delivery_count_limit;
        partition.dead_letter(offset, entry, `delivery limit ${limit} reached before a restart`);
      } else {
        partition.available_count++;
      }
      if (state === RecordState.ACQUIRED) partition.changed.add(offset);
    }
    partition.advance();
    return partition;
  }
}

/** A record's key as the ordering sees it (undefined: no key, not ordered). */
type KeyOf = (offset: number) => number | undefined;

/** A record never delivered. */
function fresh_entry(): Entry {
  return { state: RecordState.AVAILABLE, delivery_count: 0, member: null, deadline_ms: 0, reason: null };
}

/** Available, acquired or being dead-lettered: not done with. */
function is_unfinished(entry: Entry): boolean {
  return (
    entry.state === RecordState.AVAILABLE ||
    entry.state === RecordState.ACQUIRED ||
    entry.state === RecordState.DEAD_LETTERING
  );
}

function state_name(state: RecordStateCode): string {
  return ['available', 'acquired', 'acknowledged', 'dead-lettering', 'archived'][state] ?? String(state);
}

/** Consecutive offsets with the same delivery count, as ranges. */
function ranges_of(offsets: readonly number[], count_of: (offset: number) => number): AcquiredRange[] {
  const ranges: AcquiredRange[] = [];
  for (const offset of offsets) {
    const delivery_count = count_of(offset);
    const last = ranges[ranges.length - 1];
    if (last && last.last_offset === offset - 1 && last.delivery_count === delivery_count) last.last_offset = offset;
    else ranges.push({ first_offset: offset, last_offset: offset, delivery_count });
  }
  return ranges;
}
