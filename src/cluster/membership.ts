// A broker's membership: an etcd lease kept alive by our own timer, and the broker's registration
// bound to it. The lease is what lets a broker act as leader: `valid` turns false once a lease TTL
// has passed since the last keepalive that etcd answered was sent — never later than etcd itself
// expires the lease, after which the controller may elect another leader. So a leader that stops
// hearing from etcd (cut off, paused, overloaded) stops acknowledging before anyone replaces it.
import type { Clock, Logger } from '../core/clock.ts';
import type { EtcdStore } from './etcd_store.ts';
import type { BrokerRegistration } from './model.ts';

/** Pause between attempts to re-register after the lease was lost. */
const REREGISTER_RETRY_MS = 500;

export class BrokerIdTakenError extends Error {
  constructor(
    node_id: number,
    readonly holder: BrokerRegistration | null,
  ) {
    super(
      `broker id ${node_id} is already registered in the cluster` +
        `${holder ? ` by ${holder.host}:${holder.port}` : ''}; ` +
        "give each broker its own --node-id (a killed broker's registration expires after its lease)",
    );
    this.name = 'BrokerIdTakenError';
  }
}

export class Membership {
  lease_id: string | null = null;
  /** Leases granted so far; a new one means the broker re-registered after losing the last. */
  lease_generation = 0;
  private valid_until_ms = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private readonly lost_listeners = new Set<() => void>();
  private readonly renewed_listeners = new Set<() => void>();

  constructor(
    private readonly store: EtcdStore,
    private readonly registration: BrokerRegistration,
    readonly lease_ttl_ms: number,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {}

  /** True while the lease is certainly alive in etcd. */
  get valid(): boolean {
    return this.lease_id !== null && this.clock.now_ms() < this.valid_until_ms;
  }

  on_lost(listener: () => void): void {
    this.lost_listeners.add(listener);
  }

  on_renewed(listener: () => void): void {
    this.renewed_listeners.add(listener);
  }

  /**
   * Grants a lease and registers; refuses when another live broker holds this node id. A
   * registration left by this same broker (same data directory: it was killed and restarted)
   * is waited out until its lease expires.
   */
  async join(): Promise<void> {
    const deadline_ms = this.clock.now_ms() + 2 * this.lease_ttl_ms + 1000;
    for (;;) {
      try {
        await this.register();
        break;
      } catch (error) {
        if (!(error instanceof BrokerIdTakenError) || this.clock.now_ms() > deadline_ms) throw error;
        // No holder: the registration expired between the refusal and the look at it; try again.
        const holder = error.holder;
        if (holder && holder.dir_id !== this.registration.dir_id) throw error;
        this.logger.info(
          { node_id: this.registration.node_id },
          "waiting for the registration of this broker's previous run to expire",
        );
        await new Promise((resolve) => setTimeout(resolve, REREGISTER_RETRY_MS));
      }
    }
    this.schedule();
  }

  private async register(): Promise<void> {
    const sent_ms = this.clock.now_ms();
    const lease = this.store.ns.lease(Math.max(1, Math.ceil(this.lease_ttl_ms / 1000)), { autoKeepAlive: false });
    const lease_id = await lease.grant();
    if (!(await this.store.register_broker(this.registration, lease_id))) {
      await lease.revoke().catch(() => undefined);
      throw new BrokerIdTakenError(
        this.registration.node_id,
        await this.store.registered_broker(this.registration.node_id),
      );
    }
    this.lease_id = lease_id;
    this.lease_generation++;
    this.valid_until_ms = sent_ms + this.lease_ttl_ms;
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => void this.tick(), Math.max(100, Math.floor(this.lease_ttl_ms / 4)));
  }

  private async tick(): Promise<void> {
    const was_valid = this.valid;
    try {
      if (this.lease_id === null) await this.rejoin();
      else await this.keepalive();
    } catch (error) {
      this.logger.warn({ error: String(error) }, 'etcd lease keepalive failed');
    }
    if (was_valid && !this.valid) this.lose('lease expired without a keepalive answer');
    this.schedule();
  }

  private async keepalive(): Promise<void> {
    const sent_ms = this.clock.now_ms();
    const lease_id = this.lease_id!;
    const response = await this.store.client.leaseClient.leaseKeepAlive().then(async (stream) => {
      try {
        return await new Promise<{ TTL: string }>((resolve, reject) => {
          stream.on('data', resolve);
          stream.on('error', reject);
          stream.write({ ID: lease_id });
          setTimeout(() => reject(new Error('keepalive not answered')), this.lease_ttl_ms).unref();
        });
      } finally {
        stream.end();
      }
    });
    if (Number(response.TTL) <= 0) {
      this.lose('etcd says the lease expired');
      return;
    }
    // A keepalive answered after the deadline cannot revive a lease we already gave up on.
    if (this.lease_id !== null && sent_ms < this.valid_until_ms) this.valid_until_ms = sent_ms + this.lease_ttl_ms;
    else if (this.lease_id !== null) this.lose('keepalive answered too late');
  }

  private lose(why: string): void {
    if (this.lease_id === null || this.closed) return;
    this.logger.warn({ why }, 'lost the etcd lease: no longer leading anything until registered again');
    this.lease_id = null;
    this.valid_until_ms = 0;
    for (const listener of this.lost_listeners) listener();
  }

  private async rejoin(): Promise<void> {
    try {
      await this.register();
    } catch (error) {
      // The old registration lingers until etcd expires the old lease.
      await new Promise((resolve) => setTimeout(resolve, REREGISTER_RETRY_MS));
      throw error;
    }
    this.logger.info({ node_id: this.registration.node_id }, 'registered again in etcd');
    for (const listener of this.renewed_listeners) listener();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.lease_id !== null) {
      const lease_id = this.lease_id;
      this.lease_id = null;
      await this.store.client.leaseClient.leaseRevoke({ ID: lease_id }).catch(() => undefined);
    }
  }
}
