// Helpers for storage tests: batches built with the real record batch encoder, storages on the
// simulated or the real file system, and a brute-force view of a log.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { encode_record_batch, decode_record_batch, type BatchRecord } from '../../src/protocol/record_batch.ts';
import {
  Storage,
  storage_config_default,
  SimFileIO,
  ManualClock,
  type StorageConfig,
  type StorageOptions,
  type PartitionLog,
} from '../../src/storage/index.ts';

/** A batch of `count` records whose values are `${tag}:${i}` padded to `value_bytes`. */
export function make_batch(
  tag: string,
  count: number,
  options: { value_bytes?: number; timestamp_ms?: number; timestamps?: number[] } = {},
): Buffer {
  const records: BatchRecord[] = [];
  for (let i = 0; i < count; i++) {
    const text = `${tag}:${i}`;
    const value = Buffer.alloc(Math.max(options.value_bytes ?? text.length, text.length), '.');
    value.write(text);
    records.push({
      key: Buffer.from(`k${i % 7}`),
      value,
      timestamp_ms: options.timestamps?.[i] ?? (options.timestamp_ms ?? 1_700_000_000_000) + i,
    });
  }
  return encode_record_batch(records);
}

export function values_of(batches: Buffer[]): string[] {
  const out: string[] = [];
  for (const batch of batches)
    for (const record of decode_record_batch(batch)) out.push(record.value!.toString().replace(/\.+$/, ''));
  return out;
}

export interface Decoded {
  offset: number;
  value: string;
  timestamp_ms: number;
}

/** Every record of the log from its start to its high watermark, read batch by batch. */
export async function read_all(log: PartitionLog, bytes_max = 64 * 1024): Promise<Decoded[]> {
  const out: Decoded[] = [];
  let offset = log.log_start_offset;
  while (offset < log.high_watermark) {
    const { batches } = await log.read(offset, bytes_max);
    if (batches.length === 0) break;
    for (const batch of batches) {
      for (const record of decode_record_batch(batch)) {
        if (record.offset >= offset)
          out.push({
            offset: record.offset,
            value: record.value!.toString().replace(/\.+$/, ''),
            timestamp_ms: record.timestamp_ms,
          });
      }
      const last = Number(batch.readBigInt64BE(0)) + batch.readInt32BE(23);
      offset = last + 1;
    }
  }
  return out;
}

export function sim_config(overrides: Partial<StorageConfig> = {}): StorageConfig {
  return {
    ...storage_config_default('/data'),
    checkpoint_interval_ms: 3_600_000,
    retention_check_interval_ms: 0,
    ...overrides,
  };
}

export async function open_sim(
  io: SimFileIO,
  overrides: Partial<StorageConfig> = {},
  options: StorageOptions = {},
): Promise<Storage> {
  return Storage.open(sim_config(overrides), { io, clock: new ManualClock(), ...options });
}

export function temp_dir(prefix: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `sluice-${prefix}-`));
}

/** Lets pending callbacks and promise chains run (after a simulated machine stop). */
export async function settle(rounds = 50): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}
