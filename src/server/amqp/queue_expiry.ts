// x-expires: a queue unused for that long (no consumers, no basic.get, not declared again) is
// deleted, as RabbitMQ does. The clock of each queue restarts with the broker and runs on the
// broker that serves consumers (the one coordinating share groups, so one broker of a cluster
// decides); a use seen by another broker of a cluster does not restart it.
import type { Core, QueueRecord } from '../../core/index.ts';

/** How often queues with x-expires are looked at. */
const SWEEP_MS = 250;

export class QueueExpiry {
  /** vhost \0 queue name -> when it was last used (or first seen by a sweep). */
  private readonly last_used_ms = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private sweeping = false;

  constructor(
    private readonly core: Core,
    private readonly consumers: (queue: QueueRecord) => number,
    private readonly delete_queue: (vhost: string, queue: QueueRecord) => Promise<void>,
    private readonly vhosts: () => Iterable<string>,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.sweep(), SWEEP_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  used(vhost: string, queue: QueueRecord): void {
    if (queue.arguments['x-expires'] !== undefined) this.last_used_ms.set(key_of(vhost, queue.name), this.now());
  }

  private now(): number {
    return this.core.clock.now_ms();
  }

  private async sweep(): Promise<void> {
    if (this.sweeping || !this.core.shares.is_coordinator) return;
    this.sweeping = true;
    try {
      const now_ms = this.now();
      for (const vhost of this.vhosts()) {
        for (const queue of this.core.routing.queues(vhost)) {
          const expires_ms = Number(queue.arguments['x-expires'] ?? 0); // checked at declare: ≥ 1
          if (!(expires_ms > 0)) continue;
          const key = key_of(vhost, queue.name);
          if (this.consumers(queue) > 0 || !this.last_used_ms.has(key)) {
            this.last_used_ms.set(key, now_ms);
            continue;
          }
          if (now_ms - this.last_used_ms.get(key)! < expires_ms) continue;
          this.last_used_ms.delete(key);
          await this.delete_queue(vhost, queue).catch(() => undefined);
        }
      }
    } finally {
      this.sweeping = false;
    }
  }
}

function key_of(vhost: string, name: string): string {
  return `${vhost}\0${name}`;
}
