// The storage benchmark's append runs: Storage.append of the batches round-robin over a number of
// partitions under one durability policy, a bounded number in flight, with the flusher's rounds,
// per-append latencies and the final flush.
import fs from 'node:fs';
import path from 'node:path';
import {
  Storage,
  storage_config_default,
  type DurabilityPolicy,
  type PartitionLog,
  type StorageConfig,
} from '../../src/storage/index.ts';
import type { BaselineResult } from './baseline.ts';
import { build_batches, RECORDS_PER_BATCH, type StorageBenchConfig } from './batches.ts';
import { mb, per_s, percentile, with_timeout } from './output.ts';

// ... or this many passes
export const SETTLE_GRACE_MS = 60_000;

export interface AppendRun {
  policy: string;
  partitions: number;
  inflight: number;
  batch_bytes: number;
  batches: number;
  messages: number;
  bytes: number;
  ms: number;
  mb_per_s: number;
  messages_per_s: number;
  batches_per_s: number;
  ratio_to_fsync_each_write: number;
  ratio_to_fsync_per_mib: number;
  flush_rounds: number;
  appends_per_round: number;
  round_ms_mean: number;
  latency_ms_p50: number;
  latency_ms_p99: number;
  latency_ms_max: number;
  /** Time of a flush_all after the last acknowledgement (data still unsynced under interval/none). */
  final_flush_ms: number;
  mb_per_s_incl_final_flush: number;
  stopped_early: boolean;
}

export function storage_config(dir: string, overrides: Partial<StorageConfig>): StorageConfig {
  // Timers that would otherwise run inside a measurement: checkpoints every 10 s, retention every 60 s.
  return {
    ...storage_config_default(dir),
    checkpoint_interval_ms: 3_600_000,
    retention_check_interval_ms: 0,
    ...overrides,
  };
}

/**
 * Appends `batches` round-robin over `logs`, at most `inflight` at once, until all are acknowledged
 * or the phase's time is up. Returns counts, elapsed ms and per-append latencies (sorted).
 */
export async function append_all(logs: PartitionLog[], batches: Buffer[], inflight: number, time_limit_ms: number) {
  const latencies = new Float64Array(batches.length);
  let next = 0;
  let in_flight = 0;
  let done = 0;
  let bytes = 0;
  let messages = 0;
  let stopped_early = false;
  let failure: unknown = null;
  const started = performance.now();
  await with_timeout(
    new Promise<void>((resolve, reject) => {
      const launch = () => {
        while (failure === null && in_flight < inflight && next < batches.length) {
          if (performance.now() - started > time_limit_ms) {
            stopped_early = true;
            break;
          }
          const i = next++;
          const batch = batches[i]!;
          const log = logs[i % logs.length]!;
          const sent = performance.now();
          let pending;
          try {
            pending = log.append(batch);
          } catch (error) {
            failure = error; // validation or backpressure errors are thrown synchronously
            break;
          }
          in_flight++;
          pending.then(
            () => {
              latencies[done] = performance.now() - sent;
              in_flight--;
              done++;
              bytes += batch.length;
              messages += RECORDS_PER_BATCH;
              launch();
            },
            (error: unknown) => {
              in_flight--;
              failure ??= error;
              launch();
            },
          );
        }
        if (in_flight === 0) {
          if (failure !== null) reject(failure);
          else if (next >= batches.length || stopped_early) resolve();
        }
      };
      launch();
    }),
    time_limit_ms + SETTLE_GRACE_MS,
    'appends',
  );
  const ms = performance.now() - started;
  const sorted = latencies.subarray(0, done).sort();
  return { batches: done, bytes, messages, ms, sorted, stopped_early };
}

export async function append_run(
  config: StorageBenchConfig,
  root: string,
  policy: DurabilityPolicy,
  partitions: number,
  baselines: { each: BaselineResult; per_mib: BaselineResult },
): Promise<AppendRun> {
  const label = policy.kind === 'interval' ? `interval ${policy.interval_ms} ms` : policy.kind;
  const dir = fs.mkdtempSync(path.join(root, `append-${policy.kind}-${partitions}p-`));
  let batches: Buffer[] | null = build_batches(config.batch);
  const storage = await Storage.open(storage_config(dir, { durability: policy }));
  try {
    const logs: PartitionLog[] = [];
    for (let p = 0; p < partitions; p++) logs.push(await storage.create_partition(`bench-${p}`));
    await storage.flusher.flush_all();
    const rounds_before = storage.flusher.rounds;
    const durations_before = storage.flusher.round_durations_ms.length;
    const result = await append_all(logs, batches, config.inflight, config.time_limit_ms);
    const rounds = storage.flusher.rounds - rounds_before;
    const durations = storage.flusher.round_durations_ms.slice(durations_before);
    const flush_started = performance.now();
    await with_timeout(storage.flusher.flush_all(), config.time_limit_ms + SETTLE_GRACE_MS, 'final flush');
    const final_flush_ms = performance.now() - flush_started;
    const run_mb = mb(result.bytes, result.ms);
    return {
      policy: label,
      partitions,
      inflight: config.inflight,
      batch_bytes: config.batch.bytes,
      batches: result.batches,
      messages: result.messages,
      bytes: result.bytes,
      ms: result.ms,
      mb_per_s: run_mb,
      messages_per_s: per_s(result.messages, result.ms),
      batches_per_s: per_s(result.batches, result.ms),
      ratio_to_fsync_each_write: baselines.each.mb_per_s > 0 ? run_mb / baselines.each.mb_per_s : 0,
      ratio_to_fsync_per_mib: baselines.per_mib.mb_per_s > 0 ? run_mb / baselines.per_mib.mb_per_s : 0,
      flush_rounds: rounds,
      appends_per_round: rounds > 0 ? result.batches / rounds : 0,
      round_ms_mean: durations.length > 0 ? durations.reduce((sum, value) => sum + value, 0) / durations.length : 0,
      latency_ms_p50: percentile(result.sorted, 0.5),
      latency_ms_p99: percentile(result.sorted, 0.99),
      latency_ms_max: result.sorted.length > 0 ? result.sorted[result.sorted.length - 1]! : 0,
      final_flush_ms,
      mb_per_s_incl_final_flush: mb(result.bytes, result.ms + final_flush_ms),
      stopped_early: result.stopped_early,
    };
  } finally {
    batches = null;
    await with_timeout(storage.close(), SETTLE_GRACE_MS, 'storage close');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
