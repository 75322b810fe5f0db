// A real full disk: the data directory on a small tmpfs. Appends fail with a retriable error once
// it is full, nothing partial becomes readable, and appends resume when space is freed; a queue
// consumer whose share state could not be written delivers again once space returns; an AMQP
// publisher is blocked while free space is below the minimum.
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
import amqp from 'amqplib';

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

test(
  'an AMQP publisher is blocked (connection.blocked) while free disk is below the minimum; consumers go on',
  { skip: why_not ?? false, timeout: 60_000 },
  async () => {
    const amqp_mount = temp_dir('full-amqp');
    assert.equal(mount_tmpfs(amqp_mount, '64m'), null);
    const running = await start_broker({
      data_dir: path.join(amqp_mount, 'data'),
      kafka: { host: '127.0.0.1', port: 0 },
      amqp: { host: '127.0.0.1', port: 0, disk_free_min_bytes: 16 * 1024 * 1024 },
    });
    const url = `amqp://guest:guest@127.0.0.1:${running.amqp_address!.port}`;
    const publisher = await amqp.connect(url);
    const consumer = await amqp.connect(url);
    try {
      const channel = await publisher.createConfirmChannel();
      await channel.assertQueue('blocked-q', { durable: true });
      channel.sendToQueue('blocked-q', Buffer.from('before'), { persistent: true });
      await channel.waitForConfirms();
      const events: string[] = [];
      publisher.on('blocked', (reason: string) => events.push(`blocked: ${reason}`));
      publisher.on('unblocked', () => events.push('unblocked'));
      // A ballast leaving less than the minimum free (not a full disk: the broker can still write).
      const ballast = path.join(amqp_mount, 'ballast');
      fs.writeFileSync(ballast, Buffer.alloc(56 * 1024 * 1024));
      channel.sendToQueue('blocked-q', Buffer.from('seen-then-blocked'), { persistent: true });
      await until(() => events.length > 0, 'connection.blocked', 10_000);
      assert.match(events[0]!, /^blocked: low on disk/);
      let late_confirmed = false;
      channel.sendToQueue('blocked-q', Buffer.from('held'), { persistent: true }, () => (late_confirmed = true));
      const reader = await consumer.createChannel();
      const got: string[] = [];
      await reader.consume('blocked-q', (m) => {
        got.push(m!.content.toString());
        reader.ack(m!);
      });
      await until(() => got.includes('before'), 'a consumer is not blocked');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      assert.equal(late_confirmed, false, 'a publish after the block is not read');
      fs.unlinkSync(ballast);
      await until(() => events.includes('unblocked'), 'connection.unblocked', 10_000);
      await until(() => late_confirmed && got.includes('held'), 'the held publish stored and delivered', 10_000);
    } finally {
      await publisher.close().catch(() => undefined);
      await consumer.close().catch(() => undefined);
      await running.close();
      execFileSync('umount', [amqp_mount]);
      fs.rmSync(amqp_mount, { recursive: true, force: true });
    }
  },
);
