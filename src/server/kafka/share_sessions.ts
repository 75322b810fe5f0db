// Share sessions (KIP-932): per group member, the partitions it fetches, so that each ShareFetch
// lists only what changed. Epoch 0 opens (or replaces) a session, each next request carries the
// previous epoch plus one, and -1 closes it. A front-end concern: the broker core sees only the
// partitions of one fetch.
import { BrokerError } from '../../core/index.ts';

/** Sessions kept at most; the least recently used is dropped beyond it. */
export const SHARE_SESSIONS_MAX = 10_000;

export interface SessionPartition {
  topic: string;
  partition: number;
}

interface Session {
  /** The epoch the next request must carry. */
  next_epoch: number;
  partitions: Map<string, SessionPartition>;
}

const key_of = (p: SessionPartition) => `${p.topic}\u0000${p.partition}`;

export class ShareSessions {
  /** In insertion order = least recently used first. */
  private readonly sessions = new Map<string, Session>();

  /**
   * Checks `epoch` against the member's session and advances it; returns the session, or null
   * for epoch -1 (the session is closed once this request is answered).
   */
  use(group_id: string, member_id: string, epoch: number, may_open: boolean): Session | null {
    const id = `${group_id}\u0000${member_id}`;
    let session = this.sessions.get(id);
    if (epoch === 0) {
      if (!may_open)
        throw new BrokerError('invalid_share_session_epoch', 'ShareAcknowledge cannot open a share session (epoch 0)');
      session = { next_epoch: 1, partitions: new Map() };
    } else if (!session) {
      throw new BrokerError('share_session_not_found', `no share session for member ${member_id} of ${group_id}`);
    } else if (epoch === -1) {
      this.sessions.delete(id);
      return null;
    } else if (epoch !== session.next_epoch) {
      throw new BrokerError(
        'invalid_share_session_epoch',
        `share session epoch ${epoch}, expected ${session.next_epoch}`,
      );
    } else {
      session.next_epoch = epoch === 0x7fffffff ? 1 : epoch + 1;
    }
    this.sessions.delete(id);
    this.sessions.set(id, session);
    while (this.sessions.size > SHARE_SESSIONS_MAX) this.sessions.delete(this.sessions.keys().next().value!);
    return session;
  }

  static add(session: Session, partitions: Iterable<SessionPartition>): void {
    for (const p of partitions) session.partitions.set(key_of(p), p);
  }

  static forget(session: Session, partitions: Iterable<SessionPartition>): void {
    for (const p of partitions) session.partitions.delete(key_of(p));
  }

  /** Drops every session of a member (it left the group). */
  end(group_id: string, member_id: string): void {
    this.sessions.delete(`${group_id}\u0000${member_id}`);
  }
}
