// Durable share-group state in the internal topic __share_group_state (one partition), as Kafka
// keeps it: per (group, topic, partition) a snapshot of the window now and then, and an update for
// every change in between. Key {"g","t","p"}; value {"k":"s"|"u","s":start,"e":end,"r":[[first,
// last,state,deliveries],...]}, or null when the group's state on that partition is deleted.
// Start-up folds the log into one state per key. Records before every key's latest snapshot are
// deleted from the topic, so it stays about as large as the live state.
import { encode_record_batch, type BatchRecord } from '../../protocol/record_batch.ts';
import type { PartitionLog } from '../../storage/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { RecordStateCode, StateRun } from './share_partition.ts';
import { replay_log } from '../replay_log.ts';

export const SHARE_STATE_TOPIC = '__share_group_state';
/** Updates of one key between two snapshots of it. */
export const UPDATES_PER_SNAPSHOT = 200;
/** Records the topic may hold before every key's latest snapshot before they are deleted. */
const PRUNE_AFTER_RECORDS = 10_000;

export interface ShareStateKey {
  group: string;
  topic: string;
  partition: number;
}

export interface PersistedShareState extends ShareStateKey {
  start_offset: number;
  end_offset: number;
  runs: StateRun[];
}

export interface ShareStateWrite extends ShareStateKey {
  start_offset: number;
  end_offset: number;
  runs: StateRun[];
  /** A full snapshot (replaces what came before) rather than an update. */
  snapshot: boolean;
}

type RunTuple = [number, number, number, number];

export function state_key(key: ShareStateKey): string {
  return `${key.group}\u0000${key.topic}\u0000${key.partition}`;
}

interface Folded extends PersistedShareState {
  /** Offset -> [state, deliveries] for offsets at or past start_offset. */
  states: Map<number, [number, number]>;
}

export class ShareStateStore {
  /** Per key: the offset of its latest snapshot in the topic, and updates written since. */
  private readonly latest = new Map<string, { snapshot_offset: number; updates: number }>();
  private prunable_from = 0;

  constructor(
    private readonly log: PartitionLog,
    private readonly clock: Clock,
  ) {}

  /** Replays the topic: the persisted state of every key that has one. */
  async load(): Promise<PersistedShareState[]> {
    const folded = new Map<string, Folded>();
    await replay_log(this.log, (record) => this.apply(folded, record.offset, record.key!, record.value));
    return [...folded.values()].map(({ states, ...state }) => ({ ...state, runs: runs_of(states) }));
  }

  private apply(folded: Map<string, Folded>, offset: number, key_bytes: Buffer, value_bytes: Buffer | null): void {
    const key_json = JSON.parse(key_bytes.toString('utf8')) as { g: string; t: string; p: number };
    const key = { group: key_json.g, topic: key_json.t, partition: key_json.p };
    const id = state_key(key);
    if (value_bytes === null) {
      folded.delete(id);
      this.latest.delete(id);
      return;
    }
    const value = JSON.parse(value_bytes.toString('utf8')) as { k: 's' | 'u'; s: number; e: number; r: RunTuple[] };
    let state = folded.get(id);
    if (value.k === 's' || !state) {
      state = { ...key, start_offset: value.s, end_offset: value.e, runs: [], states: new Map() };
      folded.set(id, state);
    }
    if (value.k === 's') this.latest.set(id, { snapshot_offset: offset, updates: 0 });
    else {
      const latest = this.latest.get(id);
      if (latest) latest.updates++;
    }
    state.start_offset = Math.max(state.start_offset, value.s);
    state.end_offset = Math.max(state.end_offset, value.e);
    for (const [first, last, code, deliveries] of value.r) {
      for (let o = Math.max(first, state.start_offset); o <= last; o++) state.states.set(o, [code, deliveries]);
    }
    for (const o of state.states.keys()) if (o < state.start_offset) state.states.delete(o);
  }

  /** True when the key's next write should be a snapshot. */
  wants_snapshot(key: ShareStateKey): boolean {
    const latest = this.latest.get(state_key(key));
    return !latest || latest.updates >= UPDATES_PER_SNAPSHOT;
  }

  /** Makes the key's next write a snapshot (its last delta was lost to a failed write). */
  snapshot_next(key: ShareStateKey): void {
    this.latest.delete(state_key(key));
  }

  /** Appends the writes as one batch (durable under the broker's durability policy). */
  async write(writes: readonly ShareStateWrite[]): Promise<void> {
    if (writes.length === 0) return;
    const now = this.clock.now_ms();
    const records: BatchRecord[] = writes.map((w) => ({
      key: Buffer.from(JSON.stringify({ g: w.group, t: w.topic, p: w.partition })),
      value: Buffer.from(
        JSON.stringify({
          k: w.snapshot ? 's' : 'u',
          s: w.start_offset,
          e: w.end_offset,
          r: w.runs.map((r): RunTuple => [r.first_offset, r.last_offset, r.state, r.delivery_count]),
        }),
      ),
      timestamp_ms: now,
    }));
    const { base_offset } = await this.log.append(encode_record_batch(records));
    writes.forEach((w, i) => {
      const id = state_key(w);
      const latest = this.latest.get(id);
      if (w.snapshot) this.latest.set(id, { snapshot_offset: base_offset + i, updates: 0 });
      else if (latest) latest.updates++;
    });
    await this.maybe_prune();
  }

  /** Forgets keys (a deleted group or topic). */
  async delete(keys: readonly ShareStateKey[]): Promise<void> {
    if (keys.length === 0) return;
    const records = keys.map((k) => ({
      key: Buffer.from(JSON.stringify({ g: k.group, t: k.topic, p: k.partition })),
      value: null,
      timestamp_ms: this.clock.now_ms(),
    }));
    await this.log.append(encode_record_batch(records));
    for (const key of keys) this.latest.delete(state_key(key));
  }

  /** Deletes records that every key's latest snapshot has made obsolete. */
  private async maybe_prune(): Promise<void> {
    if (this.log.next_offset - this.prunable_from < PRUNE_AFTER_RECORDS) return;
    let oldest = this.log.next_offset;
    for (const { snapshot_offset } of this.latest.values()) oldest = Math.min(oldest, snapshot_offset);
    if (oldest <= this.log.log_start_offset) return;
    this.prunable_from = this.log.next_offset;
    await this.log.delete_records_before(oldest);
  }
}

function runs_of(states: Map<number, [number, number]>): StateRun[] {
  const runs: StateRun[] = [];
  for (const offset of [...states.keys()].sort((a, b) => a - b)) {
    const [state, delivery_count] = states.get(offset)!;
    const last = runs[runs.length - 1];
    if (last && last.last_offset === offset - 1 && last.state === state && last.delivery_count === delivery_count)
      last.last_offset = offset;
    else runs.push({ first_offset: offset, last_offset: offset, state: state as RecordStateCode, delivery_count });
  }
  return runs;
}
