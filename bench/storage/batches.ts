// The record batches the storage benchmark appends: one ~16 KiB template (16 records of 1 KiB
// random values), copied once per append before timing, and the run's sizes.
import { randomBytes } from 'node:crypto';
import { encode_record_batch, type BatchRecord } from '../../src/protocol/record_batch.ts';
import { batch_last_offset_delta } from '../../src/format/batch_layout.ts';

// batched baseline: 64 x 16 KiB = 1 MiB per fdatasync
export const RECORDS_PER_BATCH = 16;

export const VALUE_BYTES = 1024;

/** One ~16 KiB batch: 16 records with null keys and random 1 KiB values. */
function template_batch(): Buffer {
  const now = Date.now();
  const records: BatchRecord[] = [];
  for (let i = 0; i < RECORDS_PER_BATCH; i++)
    records.push({ key: null, value: randomBytes(VALUE_BYTES), timestamp_ms: now + i });
  return encode_record_batch(records);
}

/** The template batch, its size, and how many a run appends (`total_bytes` of them). */
export interface BatchPlan {
  template: Buffer;
  bytes: number;
  count: number;
}

export function batch_plan(total_bytes: number): BatchPlan {
  const template = template_batch();
  return { template, bytes: template.length, count: Math.max(1, Math.floor(total_bytes / template.length)) };
}

/** The storage benchmark's settings (bench/storage_append.ts reads them from the command line). */
export interface StorageBenchConfig {
  /** Bytes written per run. */
  total_bytes: number;
  /** Appends in flight at once. */
  inflight: number;
  /** How long a measured phase may take before it stops early. */
  time_limit_ms: number;
  batch: BatchPlan;
}

/**
 * One Buffer per append (the log stamps offsets into the buffer and keeps it in its tail cache).
 * Each copy owns its memory, so the tail cache keeps it as is instead of copying it again.
 */
export function build_batches(batch: BatchPlan): Buffer[] {
  const batches = new Array<Buffer>(batch.count);
  for (let i = 0; i < batch.count; i++) batches[i] = Buffer.from(batch.template);
  return batches;
}

export function records_in(batch: Buffer): number {
  return batch_last_offset_delta(batch, 0) + 1;
}
