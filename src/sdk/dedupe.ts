// Idempotent consumption: `dedupe(handler, { store })` wraps an eachMessage handler so a message
// whose id was already processed is skipped. The id is the message's `message-id` header (the SDK
// producer sets one on every message) unless `idOf` says otherwise; a message without an id is
// always handled.
//
// Two modes:
//   'mark-after' (default): seen(id)? skip : run the handler, then mark(id). A crash (or a failed
//     mark) between the handler's end and the mark repeats the handler on redelivery; nothing is
//     lost. Two deliveries of one id handled at the same time (other consumers, concurrent
//     partitions) can both run.
//   'claim-first': claim(id) atomically before running; a losing claim skips. Concurrent
//     duplicates are skipped, but a process that dies after its claim and before the handler
//     finishes loses that message until the claim expires (`claimTtlMs`). A handler that throws
//     releases its claim, so the consumer's retry runs it again.
//
// Stores: MemoryStore (one process, LRU of at most `max_ids` ids, optional TTL), RedisStore (an
// ioredis client: SET key NX PX ttl; ioredis is only imported by RedisStore.connect) and SqlStore
// (one table through a `{ query(sql, params) }` adapter, so any SQL driver fits).
// docs/sdk.md, "De-duplication", states the guarantees and when a duplicate still passes.
import type { EachMessagePayload } from './consumer.ts';
import type { IHeaders } from './records.ts';

// ------------------------------------------------------------------------------ stores

/** Where processed ids are kept. `ttl_ms` undefined: the store's default (none: no expiry). */
export interface DedupeStore {
  /** Whether `id` is marked (or claimed) and not expired. */
  seen(id: string): Promise<boolean>;
  /** Records `id` as processed for `ttl_ms`, replacing a claim or an earlier mark. */
  mark(id: string, ttl_ms?: number): Promise<void>;
  /** Atomically records `id` unless it is already recorded (and not expired): true when this call recorded it. */
  claim?(id: string, ttl_ms?: number): Promise<boolean>;
  /** Forgets `id` (claim-first mode releases the claim of a handler that threw). */
  release?(id: string): Promise<void>;
}

function check_ttl(ttl_ms: number | undefined, what: string): void {
  if (ttl_ms !== undefined && !(Number.isSafeInteger(ttl_ms) && ttl_ms > 0))
    throw new TypeError(`${what} must be a positive whole number of milliseconds, not ${ttl_ms}`);
}

export interface MemoryStoreOptions {
  /** Ids kept at most; past it the least recently used is forgotten (default 100,000). */
  max_ids?: number;
  /** Default time to live of an id in ms (default: none, only the LRU bound forgets). */
  ttl_ms?: number;
  /** Clock in ms (tests). */
  now?: () => number;
}

/** Ids in this process's memory: an LRU bounded to `max_ids`, each id with an optional expiry. */
export class MemoryStore implements DedupeStore {
  readonly max_ids: number;
  private readonly ttl_ms: number | undefined;
  private readonly now: () => number;
  /** id -> expiry time (Infinity: none); Map order is recency order, least recent first. */
  private readonly ids = new Map<string, number>();

  constructor(options: MemoryStoreOptions = {}) {
    this.max_ids = options.max_ids ?? 100_000;
    if (!(Number.isSafeInteger(this.max_ids) && this.max_ids > 0))
      throw new TypeError(`MemoryStore: max_ids must be a positive whole number, not ${options.max_ids}`);
    check_ttl(options.ttl_ms, 'MemoryStore: ttl_ms');
    this.ttl_ms = options.ttl_ms;
    this.now = options.now ?? Date.now;
  }

  /** Ids held now, expired ones not yet dropped included. */
  get size(): number {
    return this.ids.size;
  }

  async seen(id: string): Promise<boolean> {
    return this.live(id);
  }

  async mark(id: string, ttl_ms?: number): Promise<void> {
    this.put(id, ttl_ms);
  }

  async claim(id: string, ttl_ms?: number): Promise<boolean> {
    if (this.live(id)) return false;
    this.put(id, ttl_ms);
    return true;
  }

  async release(id: string): Promise<void> {
    this.ids.delete(id);
  }

  /** Whether `id` is held and unexpired; a hit becomes the most recently used. */
  private live(id: string): boolean {
    const expires = this.ids.get(id);
    if (expires === undefined) return false;
    this.ids.delete(id);
    if (expires <= this.now()) return false;
    this.ids.set(id, expires);
    return true;
  }

  private put(id: string, ttl_ms: number | undefined): void {
    check_ttl(ttl_ms, 'ttl_ms');
    const ttl = ttl_ms ?? this.ttl_ms;
    this.ids.delete(id);
    this.ids.set(id, ttl === undefined ? Infinity : this.now() + ttl);
    while (this.ids.size > this.max_ids) this.ids.delete(this.ids.keys().next().value!);
  }
}

/** The part of an ioredis client RedisStore uses (ioredis's `Redis` and `Cluster` fit). */
export interface RedisClientLike {
  set(key: string, value: string, px: 'PX', ttl_ms: number, nx: 'NX'): Promise<'OK' | null>;
  set(key: string, value: string, px: 'PX', ttl_ms: number): Promise<'OK'>;
  set(key: string, value: string, nx: 'NX'): Promise<'OK' | null>;
  set(key: string, value: string): Promise<'OK'>;
  exists(key: string): Promise<number>;
  del(key: string): Promise<number>;
}

export interface RedisStoreOptions {
  /** Prepended to each id to make its key (default 'sluice:dedupe:'); give each consumer group its own. */
  prefix?: string;
  /** Default time to live of an id in ms (default: none; keys then stay until deleted). */
  ttl_ms?: number;
}

/** Ids as Redis keys: mark is SET key PX ttl, claim is SET key NX PX ttl (atomic across processes). */
export class RedisStore implements DedupeStore {
  private readonly prefix: string;
  private readonly ttl_ms: number | undefined;

  /** `client`: a connected ioredis client (closing it stays the caller's job). */
  constructor(
    readonly client: RedisClientLike,
    options: RedisStoreOptions = {},
  ) {
    check_ttl(options.ttl_ms, 'RedisStore: ttl_ms');
    this.prefix = options.prefix ?? 'sluice:dedupe:';
    this.ttl_ms = options.ttl_ms;
  }

  /**
   * A store on a new ioredis client (ioredis, an optional dependency, is imported here). The caller quits
   * `store.client`.
   */
  static async connect(redis: string | Record<string, unknown>, options: RedisStoreOptions = {}): Promise<RedisStore> {
    let module: { Redis: new (arg: never) => RedisClientLike };
    try {
      module = (await import('ioredis')) as unknown as typeof module;
    } catch (error) {
      throw new Error(
        `RedisStore.connect needs the ioredis package (npm install ioredis): ` +
          `${error instanceof Error ? error.message : String(error)}`,
      );
    }
    return new RedisStore(new module.Redis(redis as never), options);
  }

  async seen(id: string): Promise<boolean> {
    return (await this.client.exists(this.prefix + id)) > 0;
  }

  async mark(id: string, ttl_ms?: number): Promise<void> {
    check_ttl(ttl_ms, 'ttl_ms');
    const ttl = ttl_ms ?? this.ttl_ms;
    const value = String(Date.now());
    if (ttl === undefined) await this.client.set(this.prefix + id, value);
    else await this.client.set(this.prefix + id, value, 'PX', ttl);
  }

  async claim(id: string, ttl_ms?: number): Promise<boolean> {
    check_ttl(ttl_ms, 'ttl_ms');
    const ttl = ttl_ms ?? this.ttl_ms;
    const value = String(Date.now());
    const reply =
      ttl === undefined
        ? await this.client.set(this.prefix + id, value, 'NX')
        : await this.client.set(this.prefix + id, value, 'PX', ttl, 'NX');
    return reply === 'OK';
  }

  async release(id: string): Promise<void> {
    await this.client.del(this.prefix + id);
  }
}

/** Any SQL driver: run `sql` with positional `params`, resolve with the rows it returns ([] for none). */
export interface SqlAdapter {
  query(sql: string, params: unknown[]): Promise<Array<Record<string, unknown>>>;
}

export interface SqlStoreOptions {
  /** Table name (default 'sluice_dedupe'); give each consumer group its own. Letters, digits, '_' and '.'. */
  table?: string;
  /** Parameter style: '?' (SQLite, MySQL; the default) or '$n' (PostgreSQL). */
  placeholders?: '?' | '$n';
  /** CREATE TABLE IF NOT EXISTS before first use (default true). */
  create_table?: boolean;
  /** Default time to live of an id in ms (default: none). Expired rows stop counting; purge() deletes them. */
  ttl_ms?: number;
  /** Clock in ms (tests). */
  now?: () => number;
}

/**
 * Ids as rows of one table: (id TEXT PRIMARY KEY, processed_at BIGINT NOT NULL, expires_at BIGINT).
 * The statements are SQLite's and PostgreSQL's (INSERT ... ON CONFLICT, RETURNING); claim is one
 * atomic INSERT that succeeds for a new id or takes over an expired row.
 */
export class SqlStore implements DedupeStore {
  private readonly table: string;
  private readonly ttl_ms: number | undefined;
  private readonly now: () => number;
  private readonly p: (n: number) => string;
  private ready: Promise<void> | undefined;

  constructor(
    private readonly db: SqlAdapter,
    private readonly options: SqlStoreOptions = {},
  ) {
    this.table = options.table ?? 'sluice_dedupe';
    if (!/^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$/.test(this.table))
      throw new TypeError(`SqlStore: table ${JSON.stringify(this.table)} is not a plain SQL name`);
    check_ttl(options.ttl_ms, 'SqlStore: ttl_ms');
    this.ttl_ms = options.ttl_ms;
    this.now = options.now ?? Date.now;
    this.p = options.placeholders === '$n' ? (n) => `$${n}` : () => '?';
  }

  /** Creates the table if it does not exist (done on first use unless create_table is false). */
  init(): Promise<void> {
    this.ready ??=
      (this.options.create_table ?? true)
        ? this.db
            .query(
              `CREATE TABLE IF NOT EXISTS ${this.table} (id TEXT PRIMARY KEY, processed_at BIGINT NOT NULL, ` +
                `expires_at BIGINT)`,
              [],
            )
            .then(
              () => undefined,
              (error: unknown) => {
                this.ready = undefined;
                throw error;
              },
            )
        : Promise.resolve();
    return this.ready;
  }

  async seen(id: string): Promise<boolean> {
    await this.init();
    const rows = await this.db.query(
      `SELECT 1 AS hit FROM ${this.table} WHERE id = ${this.p(1)} AND (expires_at IS NULL OR expires_at > ` +
        `${this.p(2)})`,
      [id, this.now()],
    );
    return rows.length > 0;
  }

  async mark(id: string, ttl_ms?: number): Promise<void> {
    await this.init();
    const { now, expires } = this.times(ttl_ms);
    await this.db.query(
      `INSERT INTO ${this.table} (id, processed_at, expires_at) VALUES (${this.p(1)}, ${this.p(2)}, ${this.p(3)}) ` +
        `ON CONFLICT (id) DO UPDATE SET processed_at = excluded.processed_at, expires_at = excluded.expires_at`,
      [id, now, expires],
    );
  }

  async claim(id: string, ttl_ms?: number): Promise<boolean> {
    await this.init();
    const { now, expires } = this.times(ttl_ms);
    const rows = await this.db.query(
      `INSERT INTO ${this.table} (id, processed_at, expires_at) VALUES (${this.p(1)}, ${this.p(2)}, ${this.p(3)}) ` +
        `ON CONFLICT (id) DO UPDATE SET processed_at = excluded.processed_at, expires_at = excluded.expires_at ` +
        `WHERE ${this.table}.expires_at IS NOT NULL AND ${this.table}.expires_at <= ${this.p(4)} RETURNING id`,
      [id, now, expires, now],
    );
    return rows.length > 0;
  }

  async release(id: string): Promise<void> {
    await this.init();
    await this.db.query(`DELETE FROM ${this.table} WHERE id = ${this.p(1)}`, [id]);
  }

  /** Deletes expired rows (the table does not shrink by itself); resolves with nothing. */
  async purge(): Promise<void> {
    await this.init();
    await this.db.query(`DELETE FROM ${this.table} WHERE expires_at IS NOT NULL AND expires_at <= ${this.p(1)}`, [
      this.now(),
    ]);
  }

  private times(ttl_ms: number | undefined): { now: number; expires: number | null } {
    check_ttl(ttl_ms, 'ttl_ms');
    const ttl = ttl_ms ?? this.ttl_ms;
    const now = this.now();
    return { now, expires: ttl === undefined ? null : now + ttl };
  }
}

// ------------------------------------------------------------------------------ the wrapper

/** What dedupe needs of a payload: eachMessage's, or anything with a message and its headers. */
export interface DedupePayload {
  message: { headers?: IHeaders };
}

export interface DedupeOptions<P extends DedupePayload = EachMessagePayload> {
  store: DedupeStore;
  /**
   * The id of a message (default: its 'message-id' header); undefined, null or '' means none: the message is handled.
   */
  idOf?: (payload: P) => string | Buffer | null | undefined;
  /** How long a processed id is remembered, in ms (default: the store's own default). */
  ttlMs?: number;
  /** 'mark-after' (default): run, then mark. 'claim-first': claim atomically, then run (needs store.claim). */
  mode?: 'mark-after' | 'claim-first';
  /**
   * claim-first: how long a claim holds before the handler finishes (default ttlMs); past it a redelivery runs again.
   */
  claimTtlMs?: number;
  /** Called for each skipped duplicate (logging, metrics). */
  onDuplicate?: (id: string, payload: P) => void;
}

/** The 'message-id' header as a string; none when absent or empty. */
export function message_id_of(payload: DedupePayload): string | undefined {
  let raw = payload.message.headers?.['message-id'];
  if (Array.isArray(raw)) raw = raw[0];
  if (raw === undefined || raw === null) return undefined;
  const id = typeof raw === 'string' ? raw : raw.toString('utf8');
  return id === '' ? undefined : id;
}

/**
 * An eachMessage handler that runs `handler` once per message id: a message whose id the store
 * holds is skipped. A message without an id is always handled. Store errors and handler errors are
 * thrown (the consumer retries the message), and a failed handler leaves its id unmarked.
 */
export function dedupe<P extends DedupePayload = EachMessagePayload>(
  handler: (payload: P) => Promise<void> | void,
  options: DedupeOptions<P>,
): (payload: P) => Promise<void> {
  const { store, ttlMs } = options;
  if (!store || typeof store.seen !== 'function' || typeof store.mark !== 'function')
    throw new TypeError('dedupe: options.store must have seen(id) and mark(id, ttl_ms)');
  check_ttl(ttlMs, 'dedupe: ttlMs');
  check_ttl(options.claimTtlMs, 'dedupe: claimTtlMs');
  const mode = options.mode ?? 'mark-after';
  if (mode !== 'mark-after' && mode !== 'claim-first')
    throw new TypeError(`dedupe: mode must be 'mark-after' or 'claim-first', not ${JSON.stringify(mode)}`);
  if (mode === 'claim-first' && typeof store.claim !== 'function')
    throw new TypeError('dedupe: claim-first mode needs a store with claim(id, ttl_ms)');
  const id_of = (payload: P): string | undefined => {
    if (!options.idOf) return message_id_of(payload);
    const raw = options.idOf(payload);
    if (raw === undefined || raw === null) return undefined;
    const id = typeof raw === 'string' ? raw : raw.toString('utf8');
    return id === '' ? undefined : id;
  };

  if (mode === 'claim-first') {
    const claim_ttl = options.claimTtlMs ?? ttlMs;
    return async (payload) => {
      const id = id_of(payload);
      if (id === undefined) return handler(payload);
      if (!(await store.claim!(id, claim_ttl))) {
        options.onDuplicate?.(id, payload);
        return;
      }
      try {
        await handler(payload);
      } catch (error) {
        if (store.release) await store.release(id).catch(() => {});
        throw error;
      }
      // A claim with its own (shorter) lifetime becomes a mark for the full one.
      if (claim_ttl !== ttlMs) await store.mark(id, ttlMs);
    };
  }

  return async (payload) => {
    const id = id_of(payload);
    if (id === undefined) return handler(payload);
    if (await store.seen(id)) {
      options.onDuplicate?.(id, payload);
      return;
    }
    await handler(payload);
    await store.mark(id, ttlMs);
  };
}
