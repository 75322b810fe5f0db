// kcat (librdkafka) against a real broker process: produce and consume 10,000 lines, a balanced
// consumer group with committed offsets, metadata as JSON, the four compression codecs (batches
// stored as the client sent them), and an idempotent producer. Each test runs its own broker on a
// fresh data directory. Needs kcat on the PATH; skipped with the reason elsewhere, but never
// skipped under CI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { crc32c } from '@node-rs/crc32';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { SLUICE_CLI } from '../support/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const KCAT = process.env.KCAT ?? 'kcat';
/** Every kcat and CLI run is killed after this long. */
const RUN_TIMEOUT_MS = 30_000;
/** librdkafka settings that keep a broken broker from stalling a run until the outer timeout. */
const COMMON = ['-X', 'socket.timeout.ms=10000'];
const PRODUCER = [...COMMON, '-X', 'message.timeout.ms=20000'];
const CONSUMER = [...COMMON, '-X', 'session.timeout.ms=10000'];

function kcat_missing(): string | null {
  const probe = spawnSync(KCAT, ['-V'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error)
    return (
      `kcat is not available (${probe.error.message}); ` +
      'install it (Debian/Ubuntu: apt-get install kcat) to run the kcat interop tests'
    );
  if (probe.status !== 0) return `\`${KCAT} -V\` exited with ${probe.status}: ${probe.stderr.trim()}`;
  return null;
}

const why_not = kcat_missing();
if (why_not && process.env.CI === 'true') throw new Error(`kcat interop tests cannot run under CI: ${why_not}`);

interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a command with `input` on its standard input, killed after `timeout_ms`. */
function run(
  command: string,
  args: string[],
  options: { input?: string; timeout_ms?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: options.timeout_ms ?? RUN_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Runs kcat and asserts a clean exit (not killed by the timeout). */
async function kcat(args: string[], input?: string): Promise<RunResult> {
  const result = await run(KCAT, args, { input });
  assert.ok(
    result.signal === null,
    `kcat ${args.join(' ')} killed by ${result.signal} (timed out?)\nstderr:\n${result.stderr}`,
  );
  assert.equal(result.code, 0, `kcat ${args.join(' ')} exited with ${result.code}\nstderr:\n${result.stderr}`);
  // librdkafka logs protocol errors and warnings (levels 0-4) as `%LEVEL|...` lines; there must be none.
  assert.doesNotMatch(result.stderr, /^%[0-4]\|/m, `kcat ${args.join(' ')} logged errors or warnings`);
  return result;
}

/** Runs `sluice ARGS --bootstrap B --json` and returns the parsed output. */
async function sluice(broker: BrokerProcess, args: string[]): Promise<unknown> {
  const result = await run(process.execPath, [...SLUICE_CLI, ...args, '--bootstrap', broker.bootstrap, '--json']);
  assert.equal(
    result.code,
    0,
    `sluice ${args.join(' ')} exited with ${result.code ?? result.signal}\n${result.stderr}`,
  );
  return JSON.parse(result.stdout.trim().split('\n').pop()!);
}

/** A broker on a fresh data directory, stopped and removed afterwards whatever happens. */
async function with_broker(work: (broker: BrokerProcess) => Promise<void>): Promise<void> {
  const data_dir = new_data_dir('kcat');
  let broker: BrokerProcess | null = null;
  try {
    broker = await start_broker_process({ data_dir });
    await work(broker);
    assert.equal(await broker.stop(), 0, `broker did not stop cleanly:\n${broker.output()}`);
  } finally {
    await broker?.kill();
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
}

interface Consumed {
  partition: number;
  offset: number;
  value: string;
}

/** Output of kcat -f '%p\t%o\t%s\n'. */
function parse_consumed(stdout: string): Consumed[] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [partition, offset, ...value] = line.split('\t');
      return { partition: Number(partition), offset: Number(offset), value: value.join('\t') };
    });
}

const CONSUMED_FORMAT = ['-f', '%p\t%o\t%s\n'];

/** Everything in `topic` from the beginning, read by kcat's simple consumer until it reaches the end. */
async function consume_all(broker: BrokerProcess, topic: string): Promise<Consumed[]> {
  const args = ['-b', broker.bootstrap, '-C', '-e', '-q', '-t', topic, '-o', 'beginning', ...CONSUMED_FORMAT];
  return parse_consumed((await kcat([...args, ...CONSUMER])).stdout);
}

/**
 * Every expected value arrives exactly once, offsets of each partition run 0, 1, 2, ..., and the
 * values of each partition keep the order they were produced in (their index in `expected`).
 */
function check_exactly_once_in_order(consumed: Consumed[], expected: string[], partitions: number): void {
  const index = new Map(expected.map((value, i) => [value, i]));
  const seen = new Set<string>();
  for (const record of consumed) {
    assert.ok(index.has(record.value), `unexpected value ${JSON.stringify(record.value)}`);
    assert.ok(!seen.has(record.value), `${JSON.stringify(record.value)} arrived twice`);
    seen.add(record.value);
  }
  assert.equal(seen.size, expected.length, `${expected.length - seen.size} value(s) missing`);
  for (let p = 0; p < partitions; p++) {
    const mine = consumed.filter((r) => r.partition === p).sort((a, b) => a.offset - b.offset);
    assert.ok(mine.length > 0, `partition ${p} received nothing`);
    mine.forEach((record, i) => assert.equal(record.offset, i, `partition ${p}: offsets not contiguous from 0`));
    for (let i = 1; i < mine.length; i++) {
      assert.ok(
        index.get(mine[i]!.value)! > index.get(mine[i - 1]!.value)!,
        `partition ${p} out of order: ${mine[i - 1]!.value} before ${mine[i]!.value}`,
      );
    }
  }
  assert.equal(new Set(consumed.map((r) => r.partition)).size, partitions, 'records on unexpected partitions');
}

function lines(prefix: string, count: number, pad = 0): string[] {
  return Array.from(
    { length: count },
    (_, i) => `${prefix}-${String(i).padStart(5, '0')}${pad > 0 ? ` ${'x'.repeat(pad)}` : ''}`,
  );
}

interface StoredBatch {
  base_offset: number;
  magic: number;
  attributes: number;
  producer_id: bigint;
  producer_epoch: number;
  base_sequence: number;
  records: number;
  crc_ok: boolean;
}

/** Walks the batch headers of every segment of a partition directory (broker stopped). */
function stored_batches(data_dir: string, topic: string, partition: number): StoredBatch[] {
  const dir = path.join(data_dir, `${topic}-${partition}`);
  const segments = fs
    .readdirSync(dir)
    .filter((name) => name.endsWith('.log'))
    .sort();
  assert.ok(segments.includes('00000000000000000000.log'), `no first segment in ${dir}: ${segments.join(', ')}`);
  const out: StoredBatch[] = [];
  for (const segment of segments) {
    const file = fs.readFileSync(path.join(dir, segment));
    let at = 0;
    while (at < file.length) {
      assert.ok(at + 61 <= file.length, `${segment}: truncated batch header at ${at}`);
      const size = file.readInt32BE(at + 8) + 12;
      assert.ok(size >= 61 && at + size <= file.length, `${segment}: batch at ${at} has bad length ${size}`);
      out.push({
        base_offset: Number(file.readBigInt64BE(at)),
        magic: file.readInt8(at + 16),
        attributes: file.readInt16BE(at + 21),
        producer_id: file.readBigInt64BE(at + 43),
        producer_epoch: file.readInt16BE(at + 51),
        base_sequence: file.readInt32BE(at + 53),
        records: file.readInt32BE(at + 57),
        crc_ok: crc32c(file.subarray(at + 21, at + size)) === file.readUInt32BE(at + 17),
      });
      at += size;
    }
  }
  return out;
}

test(
  'kcat produces 10,000 lines to 3 partitions and reads each back once, in order per partition',
  { skip: why_not ?? false },
  async () => {
    await with_broker(async (broker) => {
      const topic = 'lines';
      assert.deepEqual(await sluice(broker, ['topic', 'create', topic, '--partitions', '3']), { topic, partitions: 3 });
      const expected = lines('line', 10_000);
      // Keyless: without the sticky partitioner every message picks a random partition, so all three get some.
      await kcat(
        ['-b', broker.bootstrap, '-P', '-t', topic, ...PRODUCER, '-X', 'sticky.partitioning.linger.ms=0'],
        `${expected.join('\n')}\n`,
      );
      const records = await consume_all(broker, topic);
      assert.equal(records.length, 10_000);
      check_exactly_once_in_order(records, expected, 3);
      // The end offsets the broker reports agree with what was read.
      const described = (await sluice(broker, ['topic', 'describe', topic])) as {
        partitions: Array<{ partition: number; end_offset: number }>;
      };
      for (const p of described.partitions)
        assert.equal(
          p.end_offset,
          records.filter((r) => r.partition === p.partition).length,
          `end offset of partition ${p.partition}`,
        );
    });
  },
);

test('kcat -G consumes every message in a group and commits the end offsets', { skip: why_not ?? false }, async () => {
  await with_broker(async (broker) => {
    const topic = 'jobs';
    const group = 'kcat-workers';
    await sluice(broker, ['topic', 'create', topic, '--partitions', '3']);
    const expected = lines('job', 3000);
    // Keyed (KEY:VALUE) so the partitioner spreads them by key.
    await kcat(
      ['-b', broker.bootstrap, '-P', '-t', topic, '-K', ':', ...PRODUCER],
      `${expected.map((v, i) => `k${i % 50}:${v}`).join('\n')}\n`,
    );
    // -e exits once every assigned partition reached its end (kcat 1.7 supports it with -G); -c is
    // a second way out after exactly the expected count. Leaving the group commits what was read.
    const consumed = await kcat([
      '-b',
      broker.bootstrap,
      '-G',
      group,
      '-q',
      '-e',
      '-c',
      String(expected.length),
      ...CONSUMED_FORMAT,
      ...CONSUMER,
      '-X',
      'auto.offset.reset=earliest',
      '-X',
      'auto.commit.interval.ms=100',
      topic,
    ]);
    const records = parse_consumed(consumed.stdout);
    assert.equal(records.length, expected.length);
    check_exactly_once_in_order(records, expected, 3);
    const described = (await sluice(broker, ['group', 'describe', group])) as {
      group: string;
      state: string;
      members: unknown[];
      offsets: Array<{ topic: string; partition: number; committed: number; end: number; lag: number | null }>;
    };
    assert.equal(described.group, group);
    assert.equal(described.state, 'Empty', 'kcat left the group');
    assert.deepEqual(described.members, []);
    const offsets = described.offsets.filter((o) => o.topic === topic).sort((a, b) => a.partition - b.partition);
    assert.deepEqual(
      offsets.map((o) => ({ partition: o.partition, committed: o.committed, lag: o.lag })),
      [0, 1, 2].map((partition) => ({
        partition,
        committed: records.filter((r) => r.partition === partition).length,
        lag: 0,
      })),
    );
    // A second run of the same group finds nothing left to read.
    const again = await kcat([
      '-b',
      broker.bootstrap,
      '-G',
      group,
      '-q',
      '-e',
      ...CONSUMED_FORMAT,
      ...CONSUMER,
      '-X',
      'auto.offset.reset=earliest',
      topic,
    ]);
    assert.equal(again.stdout, '');
  });
});

test(
  'kcat -L -J lists the broker, its port, and every topic with partitions and leader',
  { skip: why_not ?? false },
  async () => {
    await with_broker(async (broker) => {
      await sluice(broker, ['topic', 'create', 'meta-three', '--partitions', '3']);
      // Created by the produce, with the default of one partition.
      await kcat(['-b', broker.bootstrap, '-P', '-t', 'meta-auto', ...PRODUCER], 'one\n');
      interface Listing {
        controllerid: number;
        brokers: Array<{ id: number; name: string }>;
        topics: Array<{
          topic: string;
          err?: string;
          partitions: Array<{
            partition: number;
            leader: number;
            replicas: Array<{ id: number }>;
            isrs: Array<{ id: number }>;
          }>;
        }>;
      }
      const listing = JSON.parse((await kcat(['-b', broker.bootstrap, '-L', '-J', ...COMMON])).stdout) as Listing;
      assert.equal(listing.brokers.length, 1);
      const [node] = listing.brokers;
      assert.equal(node!.name, `127.0.0.1:${broker.port}`);
      assert.equal(listing.controllerid, node!.id);
      const by_name = new Map(listing.topics.map((t) => [t.topic, t]));
      for (const [name, count] of [
        ['meta-three', 3],
        ['meta-auto', 1],
      ] as const) {
        const topic = by_name.get(name);
        assert.ok(topic, `${name} missing from ${[...by_name.keys()].join(', ')}`);
        assert.equal(topic.err, undefined, `${name}: ${topic.err}`);
        assert.deepEqual(
          topic.partitions
            .map((p) => ({ partition: p.partition, leader: p.leader, replicas: p.replicas, isrs: p.isrs }))
            .sort((a, b) => a.partition - b.partition),
          Array.from({ length: count }, (_, partition) => ({
            partition,
            leader: node!.id,
            replicas: [{ id: node!.id }],
            isrs: [{ id: node!.id }],
          })),
        );
      }
      // One topic asked for by name.
      const one = JSON.parse(
        (await kcat(['-b', broker.bootstrap, '-L', '-J', '-t', 'meta-three', ...COMMON])).stdout,
      ) as Listing;
      assert.deepEqual(
        one.topics.map((t) => [t.topic, t.partitions.length]),
        [['meta-three', 3]],
      );
    });
  },
);

test(
  'kcat -z gzip, snappy, lz4, zstd: values come back and batches are stored compressed as sent',
  { skip: why_not ?? false },
  async () => {
    const codecs = { gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;
    const sent = new Map<string, string[]>();
    await with_broker(async (broker) => {
      for (const codec of Object.keys(codecs)) {
        const topic = `zip-${codec}`;
        const expected = lines(codec, 400, 60);
        sent.set(codec, expected);
        await kcat(
          [
            '-b',
            broker.bootstrap,
            '-P',
            '-t',
            topic,
            '-z',
            codec,
            ...PRODUCER,
            '-X',
            'linger.ms=50',
            '-X',
            'batch.num.messages=100',
          ],
          `${expected.join('\n')}\n`,
        );
        const records = await consume_all(broker, topic);
        assert.deepEqual(
          records.map((r) => r.value),
          expected,
          `${codec}: values read back`,
        );
        assert.deepEqual(
          records.map((r) => r.offset),
          expected.map((_, i) => i),
          `${codec}: offsets`,
        );
      }
      // Stop before reading files so every write is complete; with_broker's stop() then is a no-op.
      assert.equal(await broker.stop(), 0);
      for (const [codec, id] of Object.entries(codecs)) {
        const batches = stored_batches(broker.data_dir, `zip-${codec}`, 0);
        assert.ok(
          batches.length >= 4,
          `${codec}: ${batches.length} batch(es) stored, expected at least 4 of at most 100 records`,
        );
        let next = 0;
        for (const batch of batches) {
          assert.equal(batch.magic, 2, `${codec}: magic`);
          assert.equal(
            batch.attributes & 0x7,
            id,
            `${codec}: compression bits of the batch at offset ${batch.base_offset}`,
          );
          assert.ok(batch.crc_ok, `${codec}: CRC of the batch at offset ${batch.base_offset}`);
          assert.equal(batch.base_offset, next, `${codec}: batches contiguous`);
          next += batch.records;
        }
        assert.equal(next, sent.get(codec)!.length, `${codec}: records in stored batches`);
      }
    });
  },
);

test(
  'kcat with enable.idempotence=true: every line stored once, with a producer id and contiguous sequences',
  { skip: why_not ?? false },
  async () => {
    await with_broker(async (broker) => {
      const topic = 'idempotent';
      await sluice(broker, ['topic', 'create', topic, '--partitions', '3']);
      const expected = lines('idem', 5000);
      await kcat(
        ['-b', broker.bootstrap, '-P', '-t', topic, '-K', ':', ...PRODUCER, '-X', 'enable.idempotence=true'],
        `${expected.map((v, i) => `k${i % 50}:${v}`).join('\n')}\n`,
      );
      const records = await consume_all(broker, topic);
      assert.equal(records.length, expected.length);
      check_exactly_once_in_order(records, expected, 3);
      assert.equal(await broker.stop(), 0);
      // The batches carry the producer id the broker handed out and per-partition sequences from 0.
      const producer_ids = new Set<bigint>();
      for (let partition = 0; partition < 3; partition++) {
        let sequence = 0;
        for (const batch of stored_batches(broker.data_dir, topic, partition)) {
          assert.ok(batch.producer_id >= 0n, `partition ${partition}: batch without a producer id`);
          assert.ok(batch.producer_epoch >= 0, `partition ${partition}: producer epoch ${batch.producer_epoch}`);
          assert.equal(
            batch.base_sequence,
            sequence,
            `partition ${partition}: base sequence of the batch at offset ${batch.base_offset}`,
          );
          assert.equal(batch.base_offset, sequence, `partition ${partition}: batch offsets`);
          sequence += batch.records;
          producer_ids.add(batch.producer_id);
        }
        assert.equal(
          sequence,
          records.filter((r) => r.partition === partition).length,
          `partition ${partition}: records stored`,
        );
      }
      assert.equal(producer_ids.size, 1, 'one producer id across partitions');
    });
  },
);
