// Rate measurement for quotas: one token bucket per measured entity and key. A bucket fills at the
// quota's rate up to one window's worth (the burst an idle client may spend at once) and may go
// into debt: a request is always served, and the debt, paid back at the quota's rate, is how long
// the client is throttled. Over any stretch longer than the window a client therefore gets its
// quota, within one window's burst.

/** The burst a bucket holds: this long at the quota's rate. */
export const QUOTA_WINDOW_MS = 1_000;
/** The longest single throttle; a larger debt is paid over several requests. */
export const QUOTA_THROTTLE_MS_MAX = 10_000;
/** Buckets kept at most; past it, full (idle) ones are dropped, then the oldest. */
export const QUOTA_BUCKETS_MAX = 100_000;

interface Bucket {
  tokens: number;
  at_ms: number;
  rate_per_s: number;
}

export class RateBuckets {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly now_ms: () => number) {}

  /** Takes `amount` from the bucket `key` filling at `rate_per_s`; the throttle it earns, in ms. */
  take(key: string, rate_per_s: number, amount: number): number {
    const now = this.now_ms();
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      if (this.buckets.size >= QUOTA_BUCKETS_MAX) this.evict(now);
      bucket = { tokens: burst(rate_per_s), at_ms: now, rate_per_s };
      this.buckets.set(key, bucket);
    }
    // A quota changed meanwhile applies from now on.
    bucket.tokens = Math.min(filled(bucket, now), burst(rate_per_s)) - amount;
    bucket.at_ms = now;
    bucket.rate_per_s = rate_per_s;
    if (bucket.tokens >= 0) return 0;
    return Math.min(QUOTA_THROTTLE_MS_MAX, Math.ceil((-bucket.tokens / rate_per_s) * 1000));
  }

  get size(): number {
    return this.buckets.size;
  }

  /** A full bucket is the same as a new one, so dropping it loses nothing. */
  private evict(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (filled(bucket, now) >= burst(bucket.rate_per_s)) this.buckets.delete(key);
    }
    for (const key of this.buckets.keys()) {
      if (this.buckets.size < QUOTA_BUCKETS_MAX) break;
      this.buckets.delete(key);
    }
  }
}

function burst(rate_per_s: number): number {
  return (rate_per_s * QUOTA_WINDOW_MS) / 1000;
}

function filled(bucket: Bucket, now: number): number {
  return Math.min(burst(bucket.rate_per_s), bucket.tokens + ((now - bucket.at_ms) * bucket.rate_per_s) / 1000);
}
