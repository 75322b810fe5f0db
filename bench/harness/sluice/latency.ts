// The latency workload's shared parts for the Sluice systems that run it (lean, kafkajs, SDK,
// @platformatic/kafka): publishing at a fixed rate with stamped values, and the samples.
import { performance } from 'node:perf_hooks';
import type { LatencyParams, LatencyResult } from '../types.ts';
import { GRACE_MS, within } from './system.ts';

/** Groups of stamped messages (for the lean client: requests) outstanding at once in the latency workload. */
export const LATENCY_MAX_IN_FLIGHT = 16;

/** A payload whose first 8 bytes are `now` (performance.now(), float64 LE); at least 8 bytes. */
function stamped_value(template: Buffer, now: number): Buffer {
  const value = Buffer.from(template);
  value.writeDoubleLE(now, 0);
  return value;
}

/**
 * Fixed-rate publishing for the latency workload: every millisecond, the messages due by then are
 * stamped with the current time and handed to `send` as one group; with `max_in_flight` groups
 * outstanding, later messages wait (already stamped, so the wait counts as latency). Resolves with
 * the number of messages acknowledged once all are.
 */
export function publish_at_fixed_rate(
  params: LatencyParams,
  max_in_flight: number,
  send: (values: Buffer[]) => Promise<void>,
): Promise<number> {
  const total = Math.max(1, Math.round((params.rate_per_s * params.duration_ms) / 1000));
  const interval_ms = 1000 / params.rate_per_s;
  const template = Buffer.alloc(Math.max(8, params.payload_bytes), 0x61);
  return within(
    new Promise<number>((resolve, reject) => {
      const start = performance.now();
      let created = 0;
      let acknowledged = 0;
      let in_flight = 0;
      let queued: Buffer[] = [];
      let failed = false;
      const flush = () => {
        while (queued.length > 0 && in_flight < max_in_flight && !failed) {
          const group = queued;
          queued = [];
          in_flight++;
          send(group).then(
            () => {
              in_flight--;
              acknowledged += group.length;
              flush();
              if (created === total && queued.length === 0 && in_flight === 0) resolve(acknowledged);
            },
            (error: unknown) => {
              failed = true;
              reject(error);
            },
          );
        }
      };
      const tick = () => {
        if (failed) return;
        const now = performance.now();
        const due = Math.min(total, Math.floor((now - start) / interval_ms) + 1);
        while (created < due) {
          queued.push(stamped_value(template, now));
          created++;
        }
        flush();
        if (created < total) setTimeout(tick, 1);
      };
      tick();
    }),
    params.duration_ms + GRACE_MS,
    'fixed-rate publishing',
  );
}

export function latency_samples(capacity: number) {
  const samples = new Float64Array(capacity);
  let count = 0;
  return {
    add(ms: number) {
      if (count < capacity) samples[count] = ms;
      count++;
    },
    get count() {
      return count;
    },
    result(sent: number): LatencyResult {
      return { samples_ms: samples.slice(0, Math.min(count, capacity)), sent, received: count };
    },
  };
}
