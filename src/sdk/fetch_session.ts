// The consumer's side of a fetch session with one broker (KIP-227). The first Fetch opens it
// (epoch 0, every partition named); the next ones name only the partitions whose fetch offset
// differs from what the session last heard, and forget those no longer fetched, so an idle
// consumer of many partitions sends a few bytes a round. What the session holds is what was last
// sent, prefetches included. A session error, a lost answer or a new connection starts over.
import { ErrorCode } from '../protocol/kafka/error_codes.ts';

export interface SessionFetchPartition {
  key: string;
  topic: string;
  partition: number;
  offset: number;
}

export interface SessionRequest {
  session_id: number;
  session_epoch: number;
  /** The partitions to name in the request (all of them when a session opens). */
  named: SessionFetchPartition[];
  forgotten: Array<{ topic: string; partitions: number[] }>;
}

/** The errors after which a session starts over. */
export const SESSION_ERRORS: ReadonlySet<number> = new Set([
  ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
  ErrorCode.INVALID_FETCH_SESSION_EPOCH,
]);

export class FetchSession {
  private id = 0;
  /** The epoch of the next request; 0 opens a session. */
  private epoch = 0;
  /** What the broker's session holds: the offset last sent per partition. */
  private readonly sent = new Map<string, SessionFetchPartition>();
  /** The connection the session lives on (a new one starts over). */
  private connection: object | null = null;

  /** The session fields and the partitions to name for a Fetch of `wanted` on `connection`. */
  request(wanted: readonly SessionFetchPartition[], connection: object): SessionRequest {
    // No session yet, a new connection, or an opening request whose answer never came: open one.
    if (connection !== this.connection || this.id === 0 || this.epoch === -2) this.reset(connection);
    const opening = this.epoch === 0;
    const named = opening ? [...wanted] : wanted.filter((p) => this.sent.get(p.key)?.offset !== p.offset);
    const keys = new Set(wanted.map((p) => p.key));
    const forgotten = new Map<string, number[]>();
    for (const [key, p] of this.sent) {
      if (keys.has(key)) continue;
      this.sent.delete(key);
      const list = forgotten.get(p.topic);
      if (list) list.push(p.partition);
      else forgotten.set(p.topic, [p.partition]);
    }
    for (const p of named) this.sent.set(p.key, p);
    const request = {
      session_id: this.id,
      session_epoch: this.epoch,
      named,
      forgotten: [...forgotten].map(([topic, partitions]) => ({ topic, partitions })),
    };
    this.epoch = opening ? -2 : this.epoch === 0x7fffffff ? 1 : this.epoch + 1; // -2: awaiting the new id
    return request;
  }

  /** The answer to a request of this session: the new session's id, or a start over after a session error. */
  answered(response: { error_code: number; session_id: number }, request: SessionRequest): void {
    if (SESSION_ERRORS.has(response.error_code)) return this.reset(null);
    if (request.session_epoch !== 0) return;
    if (response.session_id === 0) return this.reset(null); // the broker keeps no session for it: full fetches
    this.id = response.session_id;
    this.epoch = 1;
  }

  /** Starts over: the next request opens a new session (a failed or dropped answer leaves it unknown). */
  reset(connection: object | null): void {
    this.id = 0;
    this.epoch = 0;
    this.sent.clear();
    this.connection = connection;
  }
}
