// The `sluice` command line against a broker process: topic admin, produce, consume, groups,
// configuration from the environment, and clear errors for bad flags.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { start_broker_process, new_data_dir } from './support/broker_process.ts';
import { SLUICE_CLI } from './support/cli.ts';

function sluice(
  args: string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...SLUICE_CLI, ...args],
      { timeout: 60_000, env: { ...process.env, ...options.env } },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
    if (options.input !== undefined) child.stdin!.end(options.input);
  });
}

test('sluice topic, produce, consume and group commands', { timeout: 180_000 }, async () => {
  const broker = await start_broker_process();
  const b = ['--bootstrap', broker.bootstrap];
  try {
    assert.equal(
      (await sluice(['topic', 'create', 'events', '--partitions', '2', '--config', 'retention.ms=3600000', ...b])).code,
      0,
    );
    const again = await sluice(['topic', 'create', 'events', ...b]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /already exists/);
    const list = await sluice(['topic', 'list', '--json', ...b]);
    assert.deepEqual(JSON.parse(list.stdout), ['events']);

    const lines = Array.from({ length: 50 }, (_, i) => `line-${i}`).join('\n');
    const produced = await sluice(['produce', 'events', '--json', ...b], { input: `${lines}\n` });
    assert.deepEqual(JSON.parse(produced.stdout), { topic: 'events', messages: 50 });

    const consumed = await sluice([
      'consume',
      'events',
      '--group',
      'readers',
      '--from-beginning',
      '--max',
      '50',
      '--json',
      ...b,
    ]);
    const values = consumed.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).value as string);
    assert.deepEqual(values.sort(), Array.from({ length: 50 }, (_, i) => `line-${i}`).sort());

    const described = JSON.parse((await sluice(['topic', 'describe', 'events', '--json', ...b])).stdout);
    assert.equal(described.partitions.length, 2);
    assert.equal(
      described.partitions.reduce((n: number, p: { end_offset: number }) => n + p.end_offset, 0),
      50,
    );
    assert.equal(described.configs['retention.ms'], '3600000');

    const group = JSON.parse((await sluice(['group', 'describe', 'readers', '--json', ...b])).stdout);
    assert.equal(
      group.offsets.reduce((n: number, o: { lag: number }) => n + o.lag, 0),
      0,
      'the group has consumed everything',
    );
    assert.equal(
      (await sluice(['group', 'reset-offsets', 'readers', '--topic', 'events', '--to', 'earliest', ...b])).code,
      0,
    );
    const reset = JSON.parse((await sluice(['group', 'describe', 'readers', '--json', ...b])).stdout);
    assert.equal(
      reset.offsets.reduce((n: number, o: { lag: number }) => n + o.lag, 0),
      50,
      'after a reset the whole topic is lag again',
    );
    const groups = JSON.parse((await sluice(['group', 'list', '--json', ...b])).stdout);
    assert.ok(groups.some((g: { groupId: string }) => g.groupId === 'readers'));

    assert.equal((await sluice(['topic', 'add-partitions', 'events', '--count', '4', ...b])).code, 0);
    assert.equal(
      JSON.parse((await sluice(['topic', 'describe', 'events', '--json', ...b])).stdout).partitions.length,
      4,
    );
    assert.equal((await sluice(['topic', 'delete', 'events', ...b])).code, 0);
    assert.deepEqual(JSON.parse((await sluice(['topic', 'list', '--json', ...b])).stdout), []);
  } finally {
    await broker.stop();
    fs.rmSync(broker.data_dir, { recursive: true, force: true });
  }
});

test(
  'sluice start takes settings from SLUICE_* variables and refuses bad ones clearly',
  { timeout: 60_000 },
  async () => {
    const data_dir = new_data_dir('cli-env');
    try {
      const broker = await start_broker_process({
        data_dir,
        env: { SLUICE_PARTITIONS: '3', SLUICE_DURABILITY: 'interval:50' },
      });
      assert.match(broker.output(), /durability=interval:50/);
      const produced = await sluice(['produce', 'auto', '--value', 'x', '--bootstrap', broker.bootstrap]);
      assert.equal(produced.code, 0, produced.stderr);
      const described = JSON.parse(
        (await sluice(['topic', 'describe', 'auto', '--json', '--bootstrap', broker.bootstrap])).stdout,
      );
      assert.equal(described.partitions.length, 3, 'auto-created with SLUICE_PARTITIONS partitions');
      assert.equal(await broker.stop(), 0);
      const bad = await sluice(['start', '--data', data_dir, '--kafka', 'nonsense', '--http', 'off', '--amqp', 'off']);
      assert.notEqual(bad.code, 0);
      assert.match(bad.stderr, /--kafka: expected HOST:PORT/);
      const cluster = await sluice([
        'start',
        '--data',
        data_dir,
        '--kafka',
        '127.0.0.1:0',
        '--etcd',
        'http://127.0.0.1:1',
        '--http',
        'off',
        '--amqp',
        'off',
      ]);
      assert.notEqual(cluster.code, 0);
      assert.match(cluster.stderr, /etcd at http:\/\/127\.0\.0\.1:1 is not reachable/, 'an unreachable etcd is named');
    } finally {
      fs.rmSync(data_dir, { recursive: true, force: true });
    }
  },
);

test(
  'sluice start serves HTTP on the address given, names it in the ready line, and --http off turns it off',
  { timeout: 60_000 },
  async () => {
    const broker = await start_broker_process(); // with --http 127.0.0.1:0
    try {
      assert.ok(broker.http, `the ready line names the HTTP address: ${broker.output()}`);
      assert.match(broker.output(), /^sluice ready kafka=127\.0\.0\.1:\d+ http=127\.0\.0\.1:\d+ /m);
      const health = await fetch(`http://${broker.http}/healthz`);
      assert.deepEqual([health.status, await health.json()], [200, { status: 'ok' }]);
      const cluster = (await (await fetch(`http://${broker.http}/api/v1/cluster`)).json()) as {
        brokers: Array<{ port: number }>;
      };
      assert.equal(cluster.brokers[0]!.port, broker.port);
      const page = await fetch(`http://${broker.http}/`);
      assert.equal(page.status, 200, 'the web console (or the page saying how to build it) is served at /');
      assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
      assert.equal(await broker.stop(), 0);
    } finally {
      await broker.stop();
      fs.rmSync(broker.data_dir, { recursive: true, force: true });
    }
    const off = await start_broker_process({ args: ['--http', 'off'] });
    try {
      assert.equal(off.http, null);
      assert.match(off.output(), / http=off /);
    } finally {
      await off.stop();
      fs.rmSync(off.data_dir, { recursive: true, force: true });
    }
  },
);
