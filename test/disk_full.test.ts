// A real full disk: the data directory on a small tmpfs. Appends fail with a retriable error once
// it is full, nothing partial becomes readable, and appends resume when space is freed; a queue
// consumer whose share state could not be written delivers again once space returns.
// Needs root (mount); skipped elsewhere with the reason, but never skipped under CI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { DiskFullError, Storage, storage_config_default } from '../src/storage/index.ts';
import { make_batch, read_all, temp_dir } from './support/storage.ts';
import { start_broker } from '../src/compose/start_broker.ts';
import { Sluice } from '../src/sdk/index.ts';
import { until } from './support/until.ts';

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

/** Writes a ballast file until the disk under `dir` is full; returns its path. */
function fill(dir: string): string {
  const ballast = path.join(dir, 'ballast');
  const fd = fs.openSync(ballast, 'w');
  try {
    for (;;) fs.writeSync(fd, Buffer.alloc(1024 * 1024));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    fs.closeSync(fd);
  }
  return ballast;
}

test(
  "a share fetch refused by a full disk keeps the partitions in the member's session " +
    '(queue_consumer_delivers_again_after_its_state_write_failed_on_a_full_disk)',
  { skip: why_not ?? false, timeout: 60_000 },
  async () => {
    const queue_mount = temp_dir('full-queue');
    const cannot = mount_tmpfs(queue_mount, '64m');
    assert.equal(cannot, null);
    const running = await start_broker({
      data_dir: path.join(queue_mount, 'data'),
      kafka: { host: '127.0.0.1', port: 0 },
    });
    const { host, port } = running.kafka_address;
    const sluice = new Sluice({ brokers: [`${host}:${port}`], clientId: 'disk-full-queue' });
    const producer = sluice.producer();
    const queue = sluice.queueConsumer({ groupId: 'full-disk' });
    try {
      await producer.connect();
      const values = Array.from({ length: 200 }, (_, i) => `v${i}`);
      await producer.send({ topic: 'full-queue', messages: values.map((value) => ({ value })) });
      const ballast = fill(queue_mount);
      // Its first fetch acquires records and cannot make that durable: refused, nothing handed out.
      const accepted = new Set<string>();
      await queue.subscribe({ topics: ['full-queue'] });
      await queue.run({ eachMessage: async ({ message }) => void accepted.add(message.value!.toString()) });
      await new Promise((resolve) => setTimeout(resolve, 3000));
      assert.equal(accepted.size, 0, 'nothing is handed out while its acquisition cannot be written');
      fs.unlinkSync(ballast);
      await until(() => accepted.size === values.length, 'every record accepted once the disk has room', 20_000);
    } finally {
      await queue.disconnect();
      await producer.disconnect();
      await running.close();
      execFileSync('umount', [queue_mount]);
      fs.rmSync(queue_mount, { recursive: true, force: true });
    }
  },
);
