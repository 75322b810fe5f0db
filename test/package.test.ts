// The package as a user gets it: `npm pack` of this checkout installed into an empty project, then
// plain JavaScript (ESM and CommonJS) and strict TypeScript use `sluice`, and `npx sluice start`
// serves a kafkajs round trip. Every Node binary runs the same programs: the one running the tests,
// and those listed in SLUICE_TEST_NODES (colon-separated paths; .ci/run sets Node 22 and Node 24).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '..');
const run_file = promisify(execFile);
const INSTALL_TIMEOUT_MS = 300_000;
const RUN_TIMEOUT_MS = 60_000;

/** The Node binaries to run the package under, the one running the tests first, each once. */
function node_binaries(): string[] {
  const listed = (process.env.SLUICE_TEST_NODES ?? '').split(':').filter((p) => p !== '');
  for (const bin of listed) assert.ok(fs.existsSync(bin), `SLUICE_TEST_NODES names ${bin}, which does not exist`);
  return [...new Set([process.execPath, ...listed].map((bin) => fs.realpathSync(bin)))];
}

const NODES = node_binaries();
const others_missing =
  NODES.length === 1 ? 'SLUICE_TEST_NODES is empty: only the Node running the tests (.ci/run adds 22 and 24)' : null;
test(
  'the package is tested on Node 22 and 24',
  { skip: process.env.CI ? false : (others_missing ?? false) },
  async () => {
    const versions = await Promise.all(NODES.map(async (bin) => (await run_file(bin, ['--version'])).stdout.trim()));
    assert.ok(
      versions.some((v) => v.startsWith('v22.')),
      `no Node 22 among ${versions.join(', ')}`,
    );
    assert.ok(
      versions.some((v) => v.startsWith('v24.')),
      `no Node 24 among ${versions.join(', ')}`,
    );
  },
);

let work = '';
let app = '';

before(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-package-'));
  app = path.join(work, 'app');
  fs.mkdirSync(app);
  // The build is incremental (a no-op after `npm test`'s pretest); packing skips `prepare` so that
  // nothing rewrites dist/ while other tests run the benchmark harness on it.
  await run_file('npm', ['run', '-s', 'build'], { cwd: ROOT, timeout: INSTALL_TIMEOUT_MS });
  const packed = await run_file('npm', ['pack', '--silent', '--ignore-scripts', '--pack-destination', work], {
    cwd: ROOT,
    timeout: INSTALL_TIMEOUT_MS,
    maxBuffer: 16 << 20,
  });
  const tarball = path.join(work, packed.stdout.trim().split('\n').at(-1)!);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  // kafkajs is the round trip's client; both come from the cache that `npm ci` filled, where it can.
  await run_file('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball, 'kafkajs@2'], {
    cwd: app,
    timeout: INSTALL_TIMEOUT_MS,
  });
  for (const [name, text] of Object.entries(PROGRAMS)) fs.writeFileSync(path.join(app, name), text);
});

after(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** A produce and consume through the SDK against an embedded broker; the names come from the header. */
const ROUND_TRIP = `
const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-app-'));
const broker = await startBroker({ data_dir, kafka: { host: '127.0.0.1', port: 0 } });
try {
  const { host, port } = broker.kafka_address;
  const sluice = new Sluice({ brokers: [host + ':' + port], clientId: 'package-test' });
  const admin = sluice.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'greetings', numPartitions: 1 }] });
  await admin.disconnect();
  const producer = sluice.producer();
  await producer.connect();
  await producer.send({ topic: 'greetings', messages: [{ key: 'k', value: 'hello from ' + process.version }] });
  await producer.disconnect();
  const consumer = sluice.consumer({ groupId: 'package-test' });
  await consumer.connect();
  await consumer.subscribe({ topics: ['greetings'], fromBeginning: true });
  const value = await new Promise((resolve) => {
    void consumer.run({ eachMessage: async ({ message }) => resolve(message.value.toString()) });
  });
  await consumer.disconnect();
  console.log('round trip: ' + value);
} finally {
  await broker.close();
  fs.rmSync(data_dir, { recursive: true, force: true });
}
`;

/** kafkajs against the broker that `npx sluice start` runs; its address is argv[2]. */
const KAFKAJS = `
import { Kafka, logLevel } from 'kafkajs';
const kafka = new Kafka({ brokers: [process.argv[2]], clientId: 'package-test', logLevel: logLevel.NOTHING });
const producer = kafka.producer();
await producer.connect();
await producer.send({ topic: 'kafkajs', acks: -1, messages: [{ value: 'hello kafkajs' }] });
await producer.disconnect();
const consumer = kafka.consumer({ groupId: 'package-test' });
await consumer.connect();
await consumer.subscribe({ topic: 'kafkajs', fromBeginning: true });
const value = await new Promise((resolve) => {
  void consumer.run({ eachMessage: async ({ message }) => resolve(message.value.toString()) });
});
await consumer.disconnect();
console.log('kafkajs: ' + value);
`;

/** Strict TypeScript against the package's declarations, under two module resolutions. */
const TYPED = `
import { Sluice, startBroker, KafkaProtocolError, type RunningBroker } from 'sluice';
import { Sluice as SdkSluice, type ProducerConfig } from 'sluice/sdk';

export async function use(): Promise<number> {
  const broker: RunningBroker = await startBroker({ data_dir: 'data', kafka: { host: '127.0.0.1', port: 0 } });
  const config: ProducerConfig = {};
  const { host, port } = broker.kafka_address;
  const producer = new Sluice({ brokers: [host + ':' + port] }).producer(config);
  const sent = await producer.send({ topic: 't', messages: [{ key: 'k', value: 'v' }] });
  // @ts-expect-error a misspelt option is refused
  new SdkSluice({ brokerz: ['127.0.0.1:9092'] });
  const failure: unknown = null;
  if (failure instanceof KafkaProtocolError) return failure.code;
  await broker.close();
  return sent.length;
}
`;

const typescript_config = (resolution: 'nodenext' | 'bundler', file: string) =>
  JSON.stringify({
    compilerOptions: {
      strict: true,
      target: 'es2022',
      module: resolution === 'nodenext' ? 'nodenext' : 'esnext',
      moduleResolution: resolution,
      noEmit: true,
      skipLibCheck: false,
      types: ['node'],
      typeRoots: [path.join(ROOT, 'node_modules', '@types')],
    },
    files: [file],
  });

const PROGRAMS: Record<string, string> = {
  'round_trip.mjs': `import fs from 'node:fs';\nimport os from 'node:os';\nimport path from 'node:path';
import { Sluice, startBroker } from 'sluice';\n${ROUND_TRIP}`,
  'round_trip.cjs': `const fs = require('node:fs');\nconst os = require('node:os');\nconst path = require('node:path');
const { Sluice, startBroker } = require('sluice');
(async () => {${ROUND_TRIP}})().catch((error) => {\n  console.error(error);\n  process.exit(1);\n});\n`,
  'kafkajs.mjs': KAFKAJS,
  'typed.mts': TYPED,
  'typed_bundler.ts': TYPED,
  'tsconfig.nodenext.json': typescript_config('nodenext', 'typed.mts'),
  'tsconfig.bundler.json': typescript_config('bundler', 'typed_bundler.ts'),
};

/** `node FILE` in the app with the given binary; its stdout. */
async function run_node(node: string, args: string[]): Promise<string> {
  const { stdout } = await run_file(node, args, { cwd: app, timeout: RUN_TIMEOUT_MS });
  return stdout;
}

/** PATH with `node`'s folder first, so that npx and the bin's `#!/usr/bin/env node` run under it. */
const path_with = (node: string) => `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}`;

interface Started {
  address: string;
  /** Resolves once the broker has said it stopped and npx has exited. */
  stopped: Promise<string>;
  child: ChildProcess;
}

/**
 * `npx sluice start` under `node` until its ready line. npx runs in a process group of its own:
 * npm does not pass SIGTERM on to the program it runs, so the test signals the whole group as a
 * terminal's Ctrl-C would.
 */
async function npx_start(node: string): Promise<Started> {
  const data = fs.mkdtempSync(path.join(work, 'data-'));
  const args = [
    'sluice',
    'start',
    '--data',
    data,
    '--kafka',
    '127.0.0.1:0',
    '--http',
    'off',
    '--amqp',
    'off',
    '--log-level',
    'warn',
  ];
  const env = { ...process.env, PATH: path_with(node) };
  const child = spawn('npx', args, { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // 'close', not 'exit': the broker holds the pipes until it has stopped, after npx has gone.
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const stopped = exited.then(() => output);
  const address = await until_ready(() => output, exited);
  return { address, stopped, child };
}

/** The Kafka address of the ready line in `output()`, or a failure naming what was printed. */
async function until_ready(output: () => string, exited: Promise<void>): Promise<string> {
  const deadline = Date.now() + RUN_TIMEOUT_MS;
  let gone = false;
  void exited.then(() => (gone = true));
  for (;;) {
    const ready = /sluice ready kafka=(\S+)/.exec(output());
    if (ready) return ready[1]!;
    if (gone || Date.now() > deadline) throw new Error(`npx sluice start printed no ready line:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

for (const node of NODES) {
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  const label = `Node ${version}`;
  test(`under ${label}: import and require of 'sluice' start a broker and round-trip a message`, async () => {
    assert.match(await run_node(node, ['round_trip.mjs']), new RegExp(`round trip: hello from ${version}`));
    assert.match(await run_node(node, ['round_trip.cjs']), new RegExp(`round trip: hello from ${version}`));
  });

  test(`under ${label}: npx sluice start serves kafkajs and stops cleanly on SIGTERM`, async () => {
    const { address, stopped, child } = await npx_start(node);
    try {
      assert.match(await run_node(node, ['kafkajs.mjs', address]), /kafkajs: hello kafkajs/);
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
    }
    assert.match(await stopped, /sluice stopped/, 'the broker shuts down cleanly on SIGTERM');
  });
}

test('strict TypeScript type-checks against the package with nodenext and with bundler resolution', async () => {
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  for (const config of ['tsconfig.nodenext.json', 'tsconfig.bundler.json']) {
    const result = await run_file(process.execPath, [tsc, '-p', config], { cwd: app }).catch((error) => error);
    assert.equal(result.code ?? 0, 0, `${config}:\n${result.stdout}${result.stderr}`);
  }
});

test('the installed package is compiled JavaScript: no TypeScript loader, sources, tests or benches', () => {
  const installed = path.join(app, 'node_modules', 'sluice');
  const manifest = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'));
  assert.equal(manifest.dependencies.tsx, undefined, 'tsx is not a runtime dependency');
  assert.equal(fs.existsSync(path.join(app, 'node_modules', 'tsx')), false, 'tsx is not installed with it');
  const files = fs.readdirSync(installed, { recursive: true, encoding: 'utf8' });
  const sources = files.filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
  assert.deepEqual(sources, [], 'no TypeScript sources');
  assert.deepEqual(
    files.filter((f) => /(^|\/)(test|bench|src)(\/|$)|\.test\./.test(f)),
    [],
    'no tests, benches or sources',
  );
  assert.ok(files.includes(path.join('dist', 'index.d.ts')), 'declarations');
  assert.ok(files.includes(path.join('console', 'dist', 'index.html')), 'the web console');
});
