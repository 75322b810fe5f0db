// Fetch sessions (KIP-227): a consumer fetching many partitions opens a session with a full Fetch
// (epoch 0); the broker remembers the partitions and each one's fetch offset, so the next requests
// (epochs 1, 2, ...) name only the partitions whose offset moved, and the answers carry only the
// partitions with news (records, an error, or a changed high watermark, last stable offset or log
// start). Epoch -1 ends the session. A front-end concern: the core sees the partitions of one
// fetch. Kept per listener, at most FETCH_SESSIONS_MAX, the least recently used dropped first (its
// client's next incremental fetch gets FETCH_SESSION_ID_NOT_FOUND and starts a new one).
import { BrokerError } from '../../core/index.ts';

/** Sessions kept at most (Kafka's max.incremental.fetch.session.cache.slots). */
export const FETCH_SESSIONS_MAX = 1_000;
/** Partitions one session may hold: a full fetch naming more is answered without a session. */
export const FETCH_SESSION_PARTITIONS_MAX = 100_000;

export interface SessionPartition {
  topic: string;
  topic_id: string;
  partition: number;
  fetch_offset: number;
  bytes_max: number;
  current_leader_epoch: number;
  /** What the last answer said of the partition; -2 before any (so the first answer has it). */
  high_watermark: number;
  last_stable_offset: number;
  log_start_offset: number;
}

export interface FetchSession {
  readonly id: number;
  /** The epoch the next request must carry. */
  next_epoch: number;
  /** In fetch order: a partition that returned records moves to the end, so none starves. */
  readonly partitions: Map<string, SessionPartition>;
}

export const session_key = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/** A partition a Fetch names; `topic` null for a topic id that names no topic here. */
export interface AskedPartition {
  topic: string | null;
  topic_id: string;
  partition: number;
  fetch_offset: number;
  bytes_max: number;
  current_leader_epoch: number;
}

/** What an answer said of a partition (the fields a session compares). */
export interface AnsweredPartition {
  error_code: number;
  high_watermark: number;
  last_stable_offset?: number;
  log_start_offset?: number;
  /** One buffer or the batches one after the other. */
  records: Buffer | readonly Buffer[] | null;
}

/** What a Fetch's session id and epoch ask for. */
export type SessionUse =
  { kind: 'none' } | { kind: 'new'; session: FetchSession } | { kind: 'incremental'; session: FetchSession };

export class FetchSessions {
  /** In insertion order = least recently used first. */
  private readonly sessions = new Map<number, FetchSession>();
  private next_id = 1 + Math.floor(Math.random() * 0x3fffffff);

  /**
   * Epoch -1: no session (closing `session_id` if one is named); 0: a new session (replacing
   * `session_id`'s), null when `partitions` are too many to keep; above 0: the session, its epoch
   * checked and advanced. Throws fetch_session_id_not_found or invalid_fetch_session_epoch.
   */
  use(session_id: number, epoch: number, partitions: number): SessionUse {
    if (epoch < 0) {
      this.sessions.delete(session_id);
      return { kind: 'none' };
    }
    if (epoch === 0) {
      this.sessions.delete(session_id);
      if (partitions > FETCH_SESSION_PARTITIONS_MAX) return { kind: 'none' };
      const session: FetchSession = { id: this.new_id(), next_epoch: 1, partitions: new Map() };
      this.keep(session);
      return { kind: 'new', session };
    }
    const session = this.sessions.get(session_id);
    if (!session) throw new BrokerError('fetch_session_id_not_found', `no fetch session ${session_id} here`);
    if (epoch !== session.next_epoch)
      throw new BrokerError(
        'invalid_fetch_session_epoch',
        `fetch session ${session_id}: epoch ${epoch}, expected ${session.next_epoch}`,
      );
    session.next_epoch = epoch === 0x7fffffff ? 1 : epoch + 1;
    this.keep(session);
    return { kind: 'incremental', session };
  }

  /** Open sessions (for tests and metrics). */
  get size(): number {
    return this.sessions.size;
  }

  private keep(session: FetchSession): void {
    this.sessions.delete(session.id);
    this.sessions.set(session.id, session);
    while (this.sessions.size > FETCH_SESSIONS_MAX) this.sessions.delete(this.sessions.keys().next().value!);
  }

  private new_id(): number {
    do {
      this.next_id = this.next_id >= 0x7fffffff ? 1 : this.next_id + 1;
    } while (this.sessions.has(this.next_id));
    return this.next_id;
  }
}

/**
 * The partitions a session fetches: a new one takes those asked; an incremental request updates
 * the offsets and limits of those it names, adds new ones, then drops the forgotten (by session key).
 */
export function session_partitions(
  use: Exclude<SessionUse, { kind: 'none' }>,
  asked: readonly AskedPartition[],
  forgotten: readonly string[],
): AskedPartition[] {
  const partitions = use.session.partitions;
  for (const a of asked) {
    const key = session_key(a.topic ?? a.topic_id, a.partition);
    const known = partitions.get(key);
    if (known) {
      const { fetch_offset, bytes_max, current_leader_epoch } = a;
      Object.assign(known, { fetch_offset, bytes_max, current_leader_epoch });
    }
    if (!known)
      partitions.set(key, {
        ...a,
        topic: a.topic ?? a.topic_id,
        current_leader_epoch: a.current_leader_epoch,
        high_watermark: -2,
        last_stable_offset: -2,
        log_start_offset: -2,
      });
  }
  // Forgotten after the named ones, as Kafka does: a partition both named and forgotten is dropped.
  for (const key of forgotten) partitions.delete(key);
  const unknown = new Set(asked.filter((a) => a.topic === null).map((a) => session_key(a.topic_id, a.partition)));
  return [...partitions].map(([key, p]) => ({ ...p, topic: unknown.has(key) ? null : p.topic }));
}

/**
 * Which answered partitions (indexes into `rows`) the answer carries: all of a new session's,
 * only those with news in an incremental one. Remembers what was said, and moves the partitions
 * that returned records to the end of the session's order.
 */
export function answered(
  use: Exclude<SessionUse, { kind: 'none' }>,
  fetched: ReadonlyArray<{ topic: string; topic_id: string; partition: number }>,
  rows: readonly AnsweredPartition[],
): number[] {
  const partitions = use.session.partitions;
  const told: number[] = [];
  rows.forEach((row, i) => {
    const f = fetched[i]!;
    const key = session_key(f.topic === '' ? f.topic_id : f.topic, f.partition);
    const p = partitions.get(key);
    const records = row.records !== null && row.records.length > 0; // a buffer's bytes or the batches
    const news =
      !p ||
      row.error_code !== 0 ||
      records ||
      p.high_watermark !== row.high_watermark ||
      p.last_stable_offset !== (row.last_stable_offset ?? -1) ||
      p.log_start_offset !== (row.log_start_offset ?? -1);
    if (use.kind === 'new' || news) told.push(i);
    if (!p) return;
    Object.assign(p, {
      high_watermark: row.high_watermark,
      last_stable_offset: row.last_stable_offset ?? -1,
      log_start_offset: row.log_start_offset ?? -1,
    });
    if (records) {
      partitions.delete(key);
      partitions.set(key, p);
    }
  });
  return told;
}
