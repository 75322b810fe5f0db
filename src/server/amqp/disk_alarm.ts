// The disk alarm behind connection.blocked: raised while the file system of the data directory has
// less free space than amqp_disk_free_min_bytes (RabbitMQ's disk_free_limit), checked every second.
import type { Core } from '../../core/index.ts';

const CHECK_MS = 1_000;

export class DiskAlarm {
  reason: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private checking = false;

  constructor(
    private readonly core: Core,
    private readonly free_min_bytes: number,
    private readonly changed: () => void,
  ) {}

  start(): void {
    if (this.free_min_bytes <= 0) return;
    void this.check();
    this.timer = setInterval(() => void this.check(), CHECK_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const { free_bytes } = await this.core.stats.disk_space();
      const low = free_bytes < this.free_min_bytes;
      if (low === (this.reason !== null)) return;
      this.reason = low
        ? `low on disk: ${free_bytes} bytes free, below ${this.free_min_bytes} (amqp_disk_free_min_bytes)`
        : null;
      this.core.logger.warn(
        { free_bytes, free_min_bytes: this.free_min_bytes },
        low ? 'disk alarm: AMQP publishers blocked' : 'disk alarm cleared',
      );
      this.changed();
    } catch (error) {
      this.core.logger.warn({ error: String(error) }, 'free disk space not known');
    } finally {
      this.checking = false;
    }
  }
}
