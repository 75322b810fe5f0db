// The storage benchmark's reference figures: the machine it runs on, and the disk's own fsync'd
// sequential write bandwidth (writeSync + fdatasyncSync, one sync per write or per 1 MiB).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { StorageBenchConfig } from './batches.ts';
import { mb, per_s } from './output.ts';

const WRITE_BYTES = 16 * 1024;

// baseline write size
export const WRITES_PER_SYNC = 64;

export function machine_facts() {
  const cpus = os.cpus();
  let tmp_fs = 'unknown';
  try {
    const out = execFileSync('df', ['-T', os.tmpdir()], {
      encoding: 'utf8',
      timeout: 5000,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const fields = out.trim().split('\n').at(-1)?.trim().split(/\s+/) ?? [];
    if (fields.length >= 2) tmp_fs = `${fields[1]} on ${fields[0]}`;
  } catch {
    // df missing or refused: leave 'unknown'
  }
  return {
    cpu_model: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memory_gib: Number((os.totalmem() / 1024 ** 3).toFixed(1)),
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    tmpdir: os.tmpdir(),
    tmpdir_filesystem: tmp_fs,
  };
}

export interface BaselineResult {
  name: string;
  write_bytes: number;
  writes_per_fdatasync: number;
  bytes: number;
  writes: number;
  fdatasyncs: number;
  ms: number;
  mb_per_s: number;
  fdatasyncs_per_s: number;
  stopped_early: boolean;
}

/** writeSync of `WRITE_BYTES` buffers to a fresh file, fdatasyncSync after every `per_sync` writes. */
export function disk_baseline(
  config: StorageBenchConfig,
  root: string,
  name: string,
  per_sync: number,
): BaselineResult {
  const file = path.join(root, `baseline-${name}.dat`);
  const buffer = randomBytes(WRITE_BYTES);
  const writes_max = Math.ceil(config.total_bytes / WRITE_BYTES);
  const fd = fs.openSync(file, 'w');
  let writes = 0;
  let syncs = 0;
  let bytes = 0;
  let stopped_early = false;
  const started = performance.now();
  try {
    while (writes < writes_max) {
      for (let i = 0; i < per_sync && writes < writes_max; i++) {
        bytes += fs.writeSync(fd, buffer, 0, buffer.length);
        writes++;
      }
      fs.fdatasyncSync(fd);
      syncs++;
      if (performance.now() - started > config.time_limit_ms) {
        stopped_early = writes < writes_max;
        break;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  const ms = performance.now() - started;
  fs.unlinkSync(file);
  return {
    name,
    write_bytes: WRITE_BYTES,
    writes_per_fdatasync: per_sync,
    bytes,
    writes,
    fdatasyncs: syncs,
    ms,
    mb_per_s: mb(bytes, ms),
    fdatasyncs_per_s: per_s(syncs, ms),
    stopped_early,
  };
}
