// A real full disk: the data directory on a 1 MiB tmpfs. Appends fail with a retriable error once
// it is full, nothing partial becomes readable, and appends resume when space is freed.
// Needs root (mount); skipped elsewhere with the reason, but never skipped under CI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DiskFullError, Storage, storage_config_default } from '../src/storage/index.ts';
import { make_batch, read_all, temp_dir } from './support/storage.ts';

function mount_tmpfs(dir: string, size: string): string | null {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
    return null;
  } catch (error) {
    return `cannot mount a tmpfs (${String(error).split('\n')[0]}); run as root to test a real full disk`;
  }
}

const mount_point = temp_dir('full');
const why_not = mount_tmpfs(mount_point, '1m');
if (why_not && process.env.CI === 'true') throw new Error(`disk-full test cannot run under CI: ${why_not}`);

test(
  'a full disk refuses appends with a retriable error and resumes when space returns',
  { skip: why_not ?? false },
  async () => {
    try {
      const ballast = path.join(mount_point, 'ballast');
      fs.writeFileSync(ballast, Buffer.alloc(256 * 1024));
      const config = { ...storage_config_default(path.join(mount_point, 'data')), retention_check_interval_ms: 0 };
      const storage = await Storage.open(config);
      const log = await storage.create_partition('full-0');
      const acked: string[] = [];
      let refused: unknown = null;
      for (let i = 0; i < 10_000 && refused === null; i++) {
        try {
          await log.append(make_batch(`m${i}`, 4, { value_bytes: 1000 }));
          for (let r = 0; r < 4; r++) acked.push(`m${i}:${r}`);
        } catch (error) {
          refused = error;
        }
      }
      assert.ok(refused instanceof DiskFullError, `expected DiskFullError, got ${String(refused)}`);
      assert.equal(refused.retriable, true);
      assert.deepEqual(
        (await read_all(log)).map((r) => r.value),
        acked,
        'exactly the acknowledged records are readable',
      );
      // Still full: refused again, the broker process carries on.
      await assert.rejects(log.append(make_batch('again', 4, { value_bytes: 1000 })), DiskFullError);
      fs.unlinkSync(ballast);
      const resumed = await log.append(make_batch('resumed', 1));
      assert.equal(resumed.base_offset, acked.length);
      await storage.close();
      const reopened = await Storage.open(config);
      const values = (await read_all(reopened.require('full-0'))).map((r) => r.value);
      assert.deepEqual(values, [...acked, 'resumed:0']);
      await reopened.close();
    } finally {
      if (!why_not) execFileSync('umount', [mount_point]);
      fs.rmSync(mount_point, { recursive: true, force: true });
    }
  },
);
