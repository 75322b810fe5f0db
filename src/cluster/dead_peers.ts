// Failing over a dead broker before its lease runs out. A broker whose process died leaves its
// port closed: connecting is refused at once, while its etcd lease lives on for up to its TTL and
// its partitions stay leaderless until then. When a follower's fetch is refused, this broker
// connects to the peer's registered address once more itself; refused again, it revokes the
// lease that registration holds, etcd deletes the registration, and the controller elects new
// leaders on the next view. Only a refusal counts: a peer that does not answer (paused, cut off)
// may still be alive and leading, and is left to its lease. A revoked broker that was alive after
// all hears it on its next keepalive, stops leading, and registers again.
import net from 'node:net';
import type { Logger } from '../core/clock.ts';
import type { EtcdStore } from './etcd_store.ts';

/** How long the confirming connection attempt may take before it counts as not refused. */
const PROBE_TIMEOUT_MS = 500;
/** One confirmation per peer at a time, and at most this often. */
const PROBE_INTERVAL_MS = 500;

/** Whether connecting to host:port is refused (nothing listens there). */
export function connection_refused(host: string, port: number, timeout_ms = PROBE_TIMEOUT_MS): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (refused: boolean) => {
      socket.destroy();
      resolve(refused);
    };
    socket.setTimeout(timeout_ms, () => done(false));
    socket.once('connect', () => done(false));
    socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED'));
  });
}

export class DeadPeers {
  private readonly probed_ms = new Map<number, number>();

  constructor(
    private readonly node_id: number,
    private readonly store: EtcdStore,
    private readonly logger: Logger,
    private readonly now_ms: () => number,
  ) {}

  /** A connection to `peer` was refused: confirm it, and revoke its lease when it is dead. */
  suspect(peer: number): void {
    if (peer === this.node_id) return;
    const last_ms = this.probed_ms.get(peer);
    if (last_ms !== undefined && this.now_ms() - last_ms < PROBE_INTERVAL_MS) return;
    this.probed_ms.set(peer, this.now_ms());
    void this.confirm(peer).catch((error: unknown) =>
      this.logger.warn({ peer, error: String(error) }, 'could not check whether a broker is dead'),
    );
  }

  private async confirm(peer: number): Promise<void> {
    const registered = await this.store.broker_lease(peer);
    if (!registered) return; // gone already
    const { registration, lease_id } = registered;
    if (!(await connection_refused(registration.host, registration.port))) return;
    await this.store.revoke_lease(lease_id);
    this.logger.warn(
      { peer, address: `${registration.host}:${registration.port}` },
      'broker refuses connections: revoked its lease so its partitions fail over now',
    );
  }
}
