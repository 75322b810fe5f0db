// The de-duplication helper: each store's semantics (seen/mark/claim/release, TTL expiry, the
// MemoryStore's LRU bound; SqlStore on better-sqlite3; RedisStore on a real redis-server started on
// loopback), the dedupe wrapper in both modes fed payloads directly, and end to end: messages
// produced with the SDK producer, one of them resent with the same message-id, consumed once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import {
  dedupe,
  MemoryStore,
  RedisStore,
  SqlStore,
  message_id_of,
  type DedupeStore,
  type SqlAdapter,
  type RedisClientLike,
} from './dedupe.ts';
import { Sluice } from './index.ts';
import type { IHeaders } from './records.ts';
import { start_broker } from '../compose/start_broker.ts';
import { temp_dir } from '../../test/support/storage.ts';

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A payload as eachMessage gets it, with only what dedupe reads. */
interface TestPayload {
  topic: string;
  partition: number;
  message: { key: Buffer | null; value: Buffer | null; headers: IHeaders; offset: string };
}

function payload(value: string, headers: IHeaders = {}, key: string | null = null, offset = '0'): TestPayload {
  return {
    topic: 't',
    partition: 0,
    message: { key: key === null ? null : Buffer.from(key), value: Buffer.from(value), headers, offset },
  };
}

/** A manual clock for the stores that take `now`. */
class FakeClock {
  t = 1_700_000_000_000;
  readonly now = () => this.t;
  async advance(ms: number): Promise<void> {
    this.t += ms;
  }
}

/** better-sqlite3 behind the SqlStore adapter: statements that return rows (SELECT, RETURNING) give them. */
function sqlite_adapter(db: Database.Database): SqlAdapter {
  return {
    async query(sql, params) {
      const statement = db.prepare(sql);
      if (statement.reader) return statement.all(...params) as Array<Record<string, unknown>>;
      statement.run(...params);
      return [];
    },
  };
}

/**
 * What every store does. `advance` moves the store's clock by at least `ms`; `ttl` is a TTL long
 * enough to outlive the test's own steps and `short` one that `advance(short * 2)` expires.
 */
async function store_contract(
  store: DedupeStore,
  advance: (ms: number) => Promise<void>,
  short: number,
): Promise<void> {
  assert.equal(await store.seen('a'), false, 'an unknown id is not seen');
  await store.mark('a');
  assert.equal(await store.seen('a'), true, 'a marked id is seen');
  assert.equal(await store.seen('b'), false, 'only that id');
  await store.mark('a');
  assert.equal(await store.seen('a'), true, 'marking twice is harmless');

  assert.equal(await store.claim!('c'), true, 'the first claim wins');
  assert.equal(await store.claim!('c'), false, 'a second claim loses');
  assert.equal(await store.seen('c'), true, 'a claimed id is seen');
  assert.equal(await store.claim!('a'), false, 'a marked id cannot be claimed');
  await store.release!('c');
  assert.equal(await store.seen('c'), false, 'a released id is forgotten');
  assert.equal(await store.claim!('c'), true, 'and can be claimed again');

  // TTL: a mark and a claim expire; an expired claim can be claimed again; a mark replaces a claim's TTL.
  await store.mark('ttl-mark', short);
  assert.equal(await store.claim!('ttl-claim', short), true);
  assert.equal(await store.claim!('ttl-extended', short), true);
  await store.mark('ttl-extended');
  assert.equal(await store.seen('ttl-mark'), true, 'seen before its TTL');
  await advance(short * 2);
  assert.equal(await store.seen('ttl-mark'), false, 'an expired mark is not seen');
  assert.equal(await store.seen('ttl-claim'), false, 'an expired claim is not seen');
  assert.equal(await store.claim!('ttl-claim', short), true, 'an expired claim can be taken over');
  assert.equal(await store.seen('ttl-extended'), true, 'mark without TTL after a claim keeps the id');
  assert.equal(await store.seen('a'), true, 'ids without TTL stay');

  await assert.rejects(store.mark('x', 0), TypeError, 'a TTL of 0 is refused');
  await assert.rejects(store.mark('x', 1.5), TypeError, 'a fractional TTL is refused');
}

// ------------------------------------------------------------------------------ MemoryStore

test('MemoryStore: seen/mark/claim/release and TTL expiry', async () => {
  const clock = new FakeClock();
  await store_contract(new MemoryStore({ now: clock.now }), (ms) => clock.advance(ms), 1_000);
});

test('MemoryStore: a store-wide default TTL applies to marks that give none', async () => {
  const clock = new FakeClock();
  const store = new MemoryStore({ ttl_ms: 1_000, now: clock.now });
  await store.mark('a');
  await store.mark('b', 5_000);
  await clock.advance(999);
  assert.equal(await store.seen('a'), true);
  await clock.advance(1);
  assert.equal(await store.seen('a'), false, 'expires exactly at its TTL');
  assert.equal(await store.seen('b'), true, 'a TTL given with the mark wins');
  assert.equal(store.size, 1, 'an expired id found on lookup is dropped');
});

test('MemoryStore: bounded to max_ids, the least recently used id is evicted', async () => {
  assert.equal(new MemoryStore().max_ids, 100_000, 'default bound');
  assert.throws(() => new MemoryStore({ max_ids: 0 }), TypeError);
  const store = new MemoryStore({ max_ids: 3 });
  for (const id of ['a', 'b', 'c']) await store.mark(id);
  assert.equal(await store.seen('a'), true, 'a lookup makes a the most recently used');
  await store.mark('d');
  assert.equal(store.size, 3);
  assert.equal(await store.seen('b'), false, 'b, least recently used, was evicted');
  assert.deepEqual(await Promise.all(['a', 'c', 'd'].map((id) => store.seen(id))), [true, true, true]);
  await store.mark('c'); // a mark refreshes too: order now a, d, c
  await store.mark('e');
  assert.equal(await store.seen('a'), false, 'a evicted next');
  assert.deepEqual(await Promise.all(['d', 'c', 'e'].map((id) => store.seen(id))), [true, true, true]);

  // Many ids: never more than max_ids held; the newest ones are the ones kept.
  const big = new MemoryStore({ max_ids: 1_000 });
  for (let i = 0; i < 5_000; i++) await big.mark(`id-${i}`);
  assert.equal(big.size, 1_000);
  assert.equal(await big.seen('id-3999'), false);
  assert.equal(await big.seen('id-4000'), true);
  assert.equal(await big.seen('id-4999'), true);
});

// ------------------------------------------------------------------------------ SqlStore

test('SqlStore on better-sqlite3: seen/mark/claim/release, TTL expiry, purge, ids survive a reopen', async () => {
  const dir = temp_dir('dedupe-sql');
  const file = path.join(dir, 'dedupe.db');
  try {
    const clock = new FakeClock();
    const db = new Database(file);
    const store = new SqlStore(sqlite_adapter(db), { now: clock.now });
    await store_contract(store, (ms) => clock.advance(ms), 1_000);

    const count = () => (db.prepare('SELECT COUNT(*) AS n FROM sluice_dedupe').get() as { n: number }).n;
    await store.mark('expiring', 10);
    const before = count();
    await clock.advance(2_000);
    await store.purge();
    assert.equal(count(), before - 3, 'purge deletes the expired rows (ttl-mark, ttl-claim, expiring) and only them');
    const row = db.prepare('SELECT id, processed_at, expires_at FROM sluice_dedupe WHERE id = ?').get('a') as {
      processed_at: number;
      expires_at: number | null;
    };
    assert.equal(row.expires_at, null);
    assert.ok(row.processed_at >= 1_700_000_000_000);
    db.close();

    const reopened = new Database(file);
    const again = new SqlStore(sqlite_adapter(reopened), { now: clock.now });
    assert.equal(await again.seen('a'), true, 'processed ids are in the table after a restart');
    assert.equal(await again.seen('never'), false);
    reopened.close();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('SqlStore: table name checked, a store-wide TTL, $n placeholders for PostgreSQL', async () => {
  const db = new Database(':memory:');
  assert.throws(() => new SqlStore(sqlite_adapter(db), { table: 'x; DROP TABLE y' }), TypeError);
  const clock = new FakeClock();
  const store = new SqlStore(sqlite_adapter(db), { table: 'orders_dedupe', ttl_ms: 100, now: clock.now });
  await store.mark('a');
  assert.equal(await store.seen('a'), true);
  await clock.advance(100);
  assert.equal(await store.seen('a'), false);
  db.close();

  const statements: string[] = [];
  const recording: SqlAdapter = {
    async query(sql, params) {
      statements.push(`${sql} ${JSON.stringify(params)}`);
      return [];
    },
  };
  const pg = new SqlStore(recording, { placeholders: '$n', create_table: false });
  await pg.claim('id-1', 50);
  assert.equal(statements.length, 1, 'create_table: false runs no CREATE');
  assert.match(statements[0]!, /VALUES \(\$1, \$2, \$3\).*expires_at <= \$4 RETURNING id/);
});

// ------------------------------------------------------------------------------ the wrapper

test('dedupe: the same message twice is handled once; other ids and id-less messages pass', async () => {
  const handled: string[] = [];
  const duplicates: string[] = [];
  const each = dedupe<TestPayload>(async ({ message }) => void handled.push(message.value!.toString()), {
    store: new MemoryStore(),
    onDuplicate: (id) => duplicates.push(id),
  });
  const first = payload('charge order 1', { 'message-id': Buffer.from('m-1') });
  await each(first);
  await each(first);
  await each(payload('charge order 1 (resent)', { 'message-id': 'm-1' }, null, '7'));
  await each(payload('charge order 2', { 'message-id': Buffer.from('m-2') }));
  await each(payload('no id'));
  await each(payload('no id'));
  await each(payload('empty id', { 'message-id': Buffer.alloc(0) }));
  await each(payload('empty id', { 'message-id': Buffer.alloc(0) }));
  await each(payload('repeated header', { 'message-id': [Buffer.from('m-3'), Buffer.from('other')] }));
  await each(payload('repeated header', { 'message-id': [Buffer.from('m-3')] }));
  assert.deepEqual(handled, [
    'charge order 1',
    'charge order 2',
    'no id',
    'no id',
    'empty id',
    'empty id',
    'repeated header',
  ]);
  assert.deepEqual(duplicates, ['m-1', 'm-1', 'm-3']);
  assert.equal(message_id_of(payload('x', { 'message-id': 'abc' })), 'abc');
});

test('dedupe: idOf overrides the id; undefined from idOf passes the message through', async () => {
  const handled: string[] = [];
  const store = new MemoryStore();
  const each = dedupe<TestPayload>((p) => void handled.push(p.message.value!.toString()), {
    store,
    idOf: ({ topic, message }) => (message.key ? `${topic}/${message.key.toString()}` : undefined),
    ttlMs: 60_000,
  });
  await each(payload('k1 first', { 'message-id': 'a' }, 'k1'));
  await each(payload('k1 again', { 'message-id': 'b' }, 'k1'));
  await each(payload('k2', {}, 'k2'));
  await each(payload('no key 1', { 'message-id': 'a' }));
  await each(payload('no key 2', { 'message-id': 'a' }));
  assert.deepEqual(handled, ['k1 first', 'k2', 'no key 1', 'no key 2']);
  assert.equal(await store.seen('t/k1'), true);
  assert.equal(await store.seen('a'), false, 'the header is not used when idOf is given');
});

test('dedupe (mark-after): a handler that throws leaves the id unmarked, so the retry runs', async () => {
  const store = new MemoryStore();
  let calls = 0;
  const each = dedupe<TestPayload>(
    async () => {
      calls++;
      if (calls === 1) throw new Error('downstream unavailable');
    },
    { store },
  );
  const message = payload('x', { 'message-id': 'm' });
  await assert.rejects(each(message), /downstream unavailable/);
  assert.equal(await store.seen('m'), false);
  await each(message);
  await each(message);
  assert.equal(calls, 2, 'failed once, handled once, then skipped');

  // A failing store surfaces too (the consumer retries the message), the handler not run.
  const broken: DedupeStore = { seen: async () => Promise.reject(new Error('store down')), mark: async () => {} };
  let ran = false;
  await assert.rejects(dedupe<TestPayload>(() => void (ran = true), { store: broken })(message), /store down/);
  assert.equal(ran, false);
  // The documented window: the handler ran, the mark failed: the retry runs the handler again.
  let runs = 0;
  let fail_mark = true;
  const flaky = new MemoryStore();
  const flaky_store: DedupeStore = {
    seen: (id) => flaky.seen(id),
    mark: async (id) => (fail_mark ? Promise.reject(new Error('mark lost')) : flaky.mark(id)),
  };
  const each2 = dedupe<TestPayload>(() => void runs++, { store: flaky_store });
  await assert.rejects(each2(message), /mark lost/);
  fail_mark = false;
  await each2(message);
  await each2(message);
  assert.equal(runs, 2, 'handler repeated once after the lost mark, then skipped');
});

test('dedupe (mark-after): two deliveries of one id at the same time both run', async () => {
  let runs = 0;
  const each = dedupe<TestPayload>(
    async () => {
      runs++;
      await sleep(20);
    },
    { store: new MemoryStore() },
  );
  const message = payload('x', { 'message-id': 'm' });
  await Promise.all([each(message), each(message)]);
  assert.equal(runs, 2, 'mark-after does not guard concurrent duplicates (claim-first does)');
  await each(message);
  assert.equal(runs, 2);
});

test('claim-first dedupe: concurrent duplicates skipped, failed handlers unclaim, crashed claims expire', async () => {
  assert.throws(
    () =>
      dedupe<TestPayload>(() => {}, { store: { seen: async () => false, mark: async () => {} }, mode: 'claim-first' }),
    /needs a store with claim/,
  );
  assert.throws(() => dedupe<TestPayload>(() => {}, { store: new MemoryStore(), ttlMs: -1 }), TypeError);

  const clock = new FakeClock();
  const store = new MemoryStore({ now: clock.now });
  let runs = 0;
  let fail = false;
  const each = dedupe<TestPayload>(
    async () => {
      runs++;
      await sleep(20);
      if (fail) throw new Error('boom');
    },
    { store, mode: 'claim-first', ttlMs: 3_600_000, claimTtlMs: 30_000 },
  );
  const m = payload('x', { 'message-id': 'm' });
  await Promise.all([each(m), each(m), each(m)]);
  assert.equal(runs, 1, 'one of three concurrent deliveries ran');
  await clock.advance(60_000);
  await each(m);
  assert.equal(runs, 1, 'after success the claim became a mark for ttlMs, past claimTtlMs');

  fail = true;
  const f = payload('y', { 'message-id': 'f' });
  await assert.rejects(each(f), /boom/);
  assert.equal(await store.seen('f'), false, 'released');
  fail = false;
  await each(f);
  assert.equal(runs, 3, 'the retry ran');

  // A process that claimed and died: its claim (claimTtlMs) makes redeliveries skip until it expires.
  assert.equal(await store.claim('lost', 30_000), true);
  const lost = payload('z', { 'message-id': 'lost' });
  await each(lost);
  assert.equal(runs, 3, 'skipped while the dead claim holds: this delivery is lost');
  await clock.advance(30_000);
  await each(lost);
  assert.equal(runs, 4, 'a redelivery after the claim expired runs');

  const none = payload('no id');
  await each(none);
  await each(none);
  assert.equal(runs, 6, 'id-less messages always run');
});

// ------------------------------------------------------------------------------ RedisStore

function find_redis_server(): string | undefined {
  const candidates = [
    '/usr/bin/redis-server',
    ...(process.env.PATH ?? '')
      .split(path.delimiter)
      .filter(Boolean)
      .map((dir) => path.join(dir, 'redis-server')),
  ];
  return candidates.find((file) => {
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

async function free_port(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

/** redis-server on 127.0.0.1:port with no persistence, its files in `dir`; resolves once it accepts connections. */
async function start_redis(binary: string, port: number, dir: string): Promise<ChildProcess> {
  const child = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start within 10 s:\n${output}`)), 10_000);
    const on_data = (chunk: Buffer) => {
      output += chunk.toString();
      if (/ready to accept connections/i.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on('data', on_data);
    child.stderr!.on('data', on_data);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited with ${code}:\n${output}`));
    });
  });
  return child;
}

const REDIS_SERVER = find_redis_server();
const REDIS_REQUIRED = process.env.CI === 'true';

test(
  'RedisStore on a real redis-server: seen/mark/claim/release, PX expiry, prefixes, two clients',
  {
    skip:
      !REDIS_SERVER && !REDIS_REQUIRED
        ? 'redis-server is not installed (apt-get install redis-server); CI requires it'
        : false,
    timeout: 60_000,
  },
  async () => {
    if (!REDIS_SERVER)
      assert.fail('redis-server is not installed, and CI=true requires the Redis test (.ci/run installs redis-server)');
    const { Redis } = await import('ioredis');
    const dir = temp_dir('dedupe-redis');
    const port = await free_port();
    const server = await start_redis(REDIS_SERVER, port, dir);
    const options = { host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null };
    const a = new Redis(options);
    const b = new Redis(options);
    try {
      await a.connect();
      await b.connect();
      const client: RedisClientLike = a; // an ioredis client fits the interface
      const store = new RedisStore(client, { prefix: 'test:' });
      await store_contract(store, sleep, 500);
      assert.equal(await a.exists('test:a'), 1, 'ids are keys under the prefix');
      const pttl = await a.pttl('test:ttl-claim');
      assert.ok(pttl > 0 && pttl <= 500, `a claim with a TTL sets PX (pttl ${pttl})`);
      assert.equal(await a.pttl('test:a'), -1, 'no TTL: no expiry');

      // A second client (another consumer process) sees the same ids; claims are atomic across them.
      const other = new RedisStore(b, { prefix: 'test:', ttl_ms: 60_000 });
      assert.equal(await other.seen('a'), true);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? store : other).claim('race', 60_000)),
      );
      assert.equal(results.filter(Boolean).length, 1, 'exactly one of 20 concurrent claims wins');
      await other.mark('default-ttl');
      const default_pttl = await b.pttl('test:default-ttl');
      assert.ok(default_pttl > 59_000 && default_pttl <= 60_000, 'the store-wide TTL applies');
      const separate = new RedisStore(b, { prefix: 'other-group:' });
      assert.equal(await separate.seen('a'), false, 'another prefix is another set of ids');

      // Through the wrapper, claim-first across two "consumers" sharing the server.
      let runs = 0;
      const handler = async () => {
        runs++;
        await sleep(20);
      };
      const c1 = dedupe<TestPayload>(handler, { store, mode: 'claim-first', ttlMs: 60_000 });
      const c2 = dedupe<TestPayload>(handler, { store: other, mode: 'claim-first', ttlMs: 60_000 });
      const m = payload('x', { 'message-id': 'wrapped' });
      await Promise.all([c1(m), c2(m)]);
      await c1(m);
      assert.equal(runs, 1);

      // RedisStore.connect imports ioredis itself.
      const connected = await RedisStore.connect({ host: '127.0.0.1', port }, { prefix: 'test:' });
      assert.equal(await connected.seen('a'), true);
      await (connected.client as unknown as InstanceType<typeof Redis>).quit();
    } finally {
      a.disconnect();
      b.disconnect();
      server.kill('SIGTERM');
      await new Promise((resolve) => (server.exitCode !== null ? resolve(undefined) : server.once('exit', resolve)));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);

// ------------------------------------------------------------------------------ end to end

test(
  'end to end: a message resent with the same message-id is produced twice and handled once',
  { timeout: 60_000 },
  async () => {
    const data_dir = temp_dir('sdk-dedupe');
    const broker = await start_broker({ data_dir, kafka: { host: '127.0.0.1', port: 0 } });
    const { host, port } = broker.kafka_address;
    const sluice = new Sluice({ brokers: [`${host}:${port}`], clientId: 'dedupe-test' });
    const consumer = sluice.consumer({
      groupId: 'billing',
      heartbeatInterval: 200,
      sessionTimeout: 6000,
      maxWaitTimeInMs: 100,
    });
    try {
      const admin = sluice.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic: 'payments', numPartitions: 2 }] });
      await admin.disconnect();

      const producer = sluice.producer();
      await producer.connect();
      const charge = { key: 'customer-7', value: 'charge 7', headers: { 'message-id': 'payment-7' } };
      await producer.send({ topic: 'payments', messages: [charge, { key: 'customer-8', value: 'charge 8' }] });
      // The application's retry after a lost acknowledgement: the same message, the same message-id.
      await producer.send({
        topic: 'payments',
        messages: [charge, { key: 'customer-9', value: 'charge 9' }, { key: 'customer-9', value: 'charge 9b' }],
      });
      await producer.disconnect();

      const delivered: string[] = [];
      const handled: string[] = [];
      const skipped: string[] = [];
      const store = new MemoryStore();
      const handle = dedupe(async ({ message }) => void handled.push(message.value!.toString()), {
        store,
        ttlMs: 3_600_000,
        onDuplicate: (id) => skipped.push(id),
      });
      await consumer.connect();
      await consumer.subscribe({ topics: ['payments'], fromBeginning: true });
      await consumer.run({
        eachMessage: async (payload) => {
          delivered.push(payload.message.value!.toString());
          await handle(payload);
        },
      });
      const deadline = Date.now() + 20_000;
      while (delivered.length < 5 && Date.now() < deadline) await sleep(50);
      await sleep(200);
      assert.deepEqual(
        [...delivered].sort(),
        ['charge 7', 'charge 7', 'charge 8', 'charge 9', 'charge 9b'],
        'the broker holds both copies',
      );
      assert.deepEqual(
        [...handled].sort(),
        ['charge 7', 'charge 8', 'charge 9', 'charge 9b'],
        'handled once each; producer-made ids are distinct',
      );
      assert.deepEqual(skipped, ['payment-7']);
      assert.equal(await store.seen('payment-7'), true);
      assert.equal(store.size, 4);
    } finally {
      await consumer.disconnect().catch(() => {});
      await broker.close();
      fs.rmSync(data_dir, { recursive: true, force: true });
    }
  },
);
