// The storage benchmark's read runs: PartitionLog.read in 1 MiB steps over one filled partition,
// from the tail cache and from segment files (with and without CRC checks).
import fs from 'node:fs';
import path from 'node:path';
import { batch_base_offset } from '../../src/format/batch_layout.ts';
import { Storage, type PartitionLog } from '../../src/storage/index.ts';
import { append_all, SETTLE_GRACE_MS, storage_config } from './appends.ts';
import { build_batches, records_in, type StorageBenchConfig } from './batches.ts';
import { mb, per_s, with_timeout } from './output.ts';

const READ_BYTES_MAX = 1024 * 1024;

// log.read(offset, 1 MiB)
export const READ_PASS_MS_MIN = 1000;

// read passes repeat until at least this long ...
export const READ_PASSES_MAX = 50;

export interface ReadRun {
  source: string;
  note: string;
  passes: number;
  bytes: number;
  messages: number;
  reads: number;
  ms: number;
  mb_per_s: number;
  messages_per_s: number;
  complete: boolean;
  stopped_early: boolean;
}

/** Reads the whole log from offset 0 with read(offset, 1 MiB), in passes, bounded in count and time. */
export async function read_back(
  config: StorageBenchConfig,
  log: PartitionLog,
  source: string,
  note: string,
  expect: { bytes: number; messages: number },
): Promise<ReadRun> {
  const end = log.high_watermark;
  const reads_per_pass_max = Math.ceil(expect.bytes / config.batch.bytes) + 16; // every read returns >= 1 batch
  let passes = 0;
  let bytes = 0;
  let messages = 0;
  let reads = 0;
  let complete = true;
  let stopped_early = false;
  const started = performance.now();
  while (passes < READ_PASSES_MAX) {
    let offset = log.log_start_offset;
    let pass_bytes = 0;
    let pass_messages = 0;
    for (let i = 0; offset < end && i < reads_per_pass_max; i++) {
      const result = await log.read(offset, READ_BYTES_MAX);
      reads++;
      if (result.batches.length === 0) break;
      for (const batch of result.batches) {
        pass_messages += records_in(batch);
        offset = batch_base_offset(batch, 0) + records_in(batch);
      }
      pass_bytes += result.bytes;
      if (performance.now() - started > config.time_limit_ms) {
        stopped_early = true;
        break;
      }
    }
    passes++;
    bytes += pass_bytes;
    messages += pass_messages;
    if (stopped_early) break;
    if (pass_bytes !== expect.bytes || pass_messages !== expect.messages) complete = false;
    if (performance.now() - started >= READ_PASS_MS_MIN) break;
  }
  const ms = performance.now() - started;
  return {
    source,
    note,
    passes,
    bytes,
    messages,
    reads,
    ms,
    mb_per_s: mb(bytes, ms),
    messages_per_s: per_s(messages, ms),
    complete,
    stopped_early,
  };
}

export async function read_runs(config: StorageBenchConfig, root: string): Promise<ReadRun[]> {
  const dir = fs.mkdtempSync(path.join(root, 'read-'));
  const out: ReadRun[] = [];
  try {
    // Fill one partition (not timed) with a tail cache that holds all of it.
    let batches: Buffer[] | null = build_batches(config.batch);
    const tail_bytes = config.batch.count * config.batch.bytes + 1024 * 1024;
    const writer = await Storage.open(
      storage_config(dir, { durability: { kind: 'none' }, tail_cache_bytes_max: tail_bytes }),
    );
    let expect = { bytes: 0, messages: 0 };
    try {
      const log = await writer.create_partition('bench-read');
      const filled = await append_all([log], batches, config.inflight, config.time_limit_ms);
      if (filled.batches !== batches.length)
        throw new Error(`filling the read partition stopped after ${filled.batches} of ${batches.length} batches`);
      expect = { bytes: filled.bytes, messages: filled.messages };
      batches = null;
      if (writer.tail_cache.bytes < expect.bytes)
        throw new Error(`tail cache holds ${writer.tail_cache.bytes} of ${expect.bytes} bytes`);
      out.push(await read_back(config, log, 'tail cache', `tail_cache_bytes_max ${tail_bytes}`, expect));
    } finally {
      await with_timeout(writer.close(), SETTLE_GRACE_MS, 'storage close');
    }
    for (const verify_reads of [true, false]) {
      const reader = await Storage.open(storage_config(dir, { tail_cache_bytes_max: 0, verify_reads }));
      try {
        const log = reader.require('bench-read');
        out.push(
          await read_back(
            config,
            log,
            verify_reads ? 'files' : 'files, no CRC check',
            `tail_cache_bytes_max 0, verify_reads ${verify_reads}, OS page cache warm`,
            expect,
          ),
        );
        if (reader.tail_cache.bytes !== 0) throw new Error('tail cache used although tail_cache_bytes_max is 0');
      } finally {
        await with_timeout(reader.close(), SETTLE_GRACE_MS, 'storage close');
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
