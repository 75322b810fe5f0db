// Client quotas on the Kafka listener, the way KIP-219 has brokers do it: a request that puts its
// client over a quota is answered at once with throttle_time_ms set, and its connection reads no
// further request until that time has passed, so a client that ignores the field is held to the
// quota all the same. Produce counts its request bytes, Fetch and ShareFetch their response bytes,
// and every request its time on the event loop (decoding, the handler's synchronous part, encoding).
import { performance } from 'node:perf_hooks';
import type { QuotaClient, QuotasApi } from '../../core/index.ts';

const PRODUCE_KEY = 0;
/** APIs whose response bytes count against the consumer byte rate. Their throttle_time_ms is the body's first field. */
const CONSUMER_APIS = new Set([1, 78]);
/** What a client needs before it can be told anything: ApiVersions and the SASL exchange. */
const EXEMPT_APIS = new Set([17, 18, 36]);
/** The response size prefix and correlation id, before a flexible header's tag byte. */
const RESPONSE_HEADER_BYTES = 8;

/** What one request costs its client, measured while it is served. */
export class RequestCost {
  private busy_ms = 0;
  private mark_ms = performance.now();

  constructor(
    readonly client: QuotaClient,
    private readonly api_key: number,
    private readonly request_bytes: number,
  ) {}

  /** Ends a stretch of work begun at construction or by the last call (decoding, say). */
  lap(): void {
    const now = performance.now();
    this.busy_ms += now - this.mark_ms;
    this.mark_ms = now;
  }

  /** Runs `work`, counting its synchronous time. */
  timed<T>(work: () => T): T {
    this.mark_ms = performance.now();
    try {
      return work();
    } finally {
      this.lap();
    }
  }

  /** The throttle earned before the response is encoded: produce bytes and request time so far. */
  throttle_before_encoding(quotas: QuotasApi): number {
    const time_ms = quotas.record(this.client, 'request_percentage', this.busy_ms);
    this.busy_ms = 0;
    if (this.api_key !== PRODUCE_KEY) return time_ms;
    return Math.max(time_ms, quotas.record(this.client, 'producer_byte_rate', this.request_bytes));
  }

  /**
   * The throttle the encoded response adds (its bytes for a fetch, the encoding time), written into
   * the response when it is the larger; returns the throttle the client is told.
   */
  throttle_after_encoding(quotas: QuotasApi, response: Buffer[], flexible_header: boolean, told_ms: number): number {
    let throttle_ms = quotas.record(this.client, 'request_percentage', this.busy_ms);
    if (CONSUMER_APIS.has(this.api_key)) {
      const bytes = response.reduce((sum, chunk) => sum + chunk.length, 0);
      throttle_ms = Math.max(throttle_ms, quotas.record(this.client, 'consumer_byte_rate', bytes));
      const at = RESPONSE_HEADER_BYTES + (flexible_header ? 1 : 0);
      if (throttle_ms > told_ms && response[0]!.length >= at + 4) {
        response[0]!.writeInt32BE(throttle_ms, at);
        return throttle_ms;
      }
    }
    return Math.max(told_ms, throttle_ms);
  }
}

/** The cost to measure for a request, or null when no quota applies to its API. */
export function request_cost(client: QuotaClient, api_key: number, request_bytes: number): RequestCost | null {
  return EXEMPT_APIS.has(api_key) ? null : new RequestCost(client, api_key, request_bytes);
}
