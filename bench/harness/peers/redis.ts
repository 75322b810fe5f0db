// Redis Streams peer drivers: 'redis-always' (AOF, appendfsync always) and 'redis-everysec' (AOF,
// appendfsync everysec), driven by ioredis. One stream per partition (key bench:<run>:<i>).
//
// Publishing: XADD, pipelined (many XADDs in flight per connection, at most the publish window;
// ioredis auto-pipelining coalesces the writes of one tick into one socket write).
// Consuming: XREADGROUP (consumer group created at offset 0 before publishing) + XACK of each batch.
// XREADGROUP + XACK is used for every workload, latency included, rather than XREAD: it is the Redis
// equivalent of a consumer with acknowledgements (a pending-entries list the server persists, like
// AMQP acks and JetStream acks), so all three peers consume with the same at-least-once semantics.
// With the AOF on, XREADGROUP and XACK are writes too (the group's state goes into the AOF).
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import type { DurabilityClass, SystemUnderTest, Unavailable } from '../types.ts';
import {
  CONSUMER_PREFETCH,
  next_run_name,
  unavailable,
  type PeerConsumer,
  type PeerProducer,
  type PeerRun,
} from './adapter.ts';
import { ensure_executable, package_label } from './install.ts';
import {
  free_port,
  make_temp_dir,
  remove_dir,
  spawn_server,
  stop_server,
  wait_until_ready,
  type SpawnedServer,
} from './server.ts';
import { PeerWorkloads } from './workloads.ts';

type FsyncPolicy = 'always' | 'everysec';

interface Variant {
  id: string;
  label: string;
  durability: DurabilityClass;
  durability_detail: string;
}

const VARIANTS: Record<FsyncPolicy, Variant> = {
  always: {
    id: 'redis-always',
    label: 'Redis Streams (AOF, appendfsync always)',
    durability: 'fsync',
    durability_detail:
      'XADD reply after the command is written to the append-only file and fdatasync()ed: Redis 7.0 flushes the ' +
      'AOF buffer (write + fdatasync) in beforeSleep, before it writes any pending replies, once per event-loop ' +
      'iteration, so all commands of that iteration (pipelines, all clients) share one fsync (group commit).',
  },
  everysec: {
    id: 'redis-everysec',
    label: 'Redis Streams (AOF, appendfsync everysec)',
    durability: 'periodic',
    durability_detail:
      'XADD reply after the command is applied in memory and (normally) written to the AOF with write(2); a ' +
      'background thread fdatasync()s the AOF about once per second, and while that fsync is still running Redis ' +
      'may postpone the write itself for up to 2 s. An OS crash or power loss can lose about 1-2 s of ' +
      'acknowledged messages; a process crash can lose what was not yet written.',
  },
};

export async function redis_systems(): Promise<Array<SystemUnderTest | Unavailable>> {
  const server = await ensure_executable('redis-server', 'redis-server');
  const policies: FsyncPolicy[] = ['always', 'everysec'];
  if ('reason' in server)
    return policies.map((policy) => unavailable(VARIANTS[policy].id, VARIANTS[policy].label, server.reason));
  return policies.map((policy) => new RedisSystem(policy, server.path));
}

const CLIENT_OPTIONS = {
  host: '127.0.0.1',
  lazyConnect: true,
  enableOfflineQueue: true,
  maxRetriesPerRequest: 1,
  connectTimeout: 10_000,
  retryStrategy: () => null, // never reconnect: a lost server is an error, not something to wait out
} as const;

export class RedisSystem extends PeerWorkloads implements SystemUnderTest {
  readonly id: string;
  readonly label: string;
  readonly durability: DurabilityClass;
  /** Written for Redis 7.0; start() appends a note when the server is not 7.x. */
  durability_detail: string;
  readonly client = package_label('ioredis');
  /** The server's version, known after start(). */
  server_version: string | undefined;

  private dir: string | undefined;
  private server: SpawnedServer | undefined;
  private port = 0;

  constructor(
    private readonly policy: FsyncPolicy,
    private readonly server_path = 'redis-server',
  ) {
    super();
    const variant = VARIANTS[policy];
    this.id = variant.id;
    this.label = variant.label;
    this.durability = variant.durability;
    this.durability_detail = variant.durability_detail;
  }

  async start(workdir: string): Promise<void> {
    if (this.server) throw new Error(`${this.id} is already started`);
    const dir = make_temp_dir(workdir, this.id);
    this.dir = dir;
    try {
      this.port = await free_port();
      const config = path.join(dir, 'redis.conf');
      fs.writeFileSync(
        config,
        [
          `port ${this.port}`,
          'bind 127.0.0.1',
          'protected-mode yes',
          'daemonize no',
          `dir ${dir}`,
          `logfile ${path.join(dir, 'redis.log')}`,
          'save ""',
          'appendonly yes',
          `appendfsync ${this.policy}`,
          'appendfilename "appendonly.aof"',
          'appenddirname "appendonlydir"',
          // No AOF rewrite in the middle of a measurement.
          'auto-aof-rewrite-percentage 0',
          'no-appendfsync-on-rewrite no',
          '',
        ].join('\n'),
      );
      this.server = spawn_server(this.server_path, [config], {
        cwd: dir,
        log_file: path.join(dir, 'redis-stdout.log'),
      });
      await wait_until_ready(`${this.id} (redis-server)`, this.server, async () => {
        const client = new Redis({ ...CLIENT_OPTIONS, port: this.port });
        client.on('error', () => undefined);
        try {
          await client.connect();
          const info = await client.info();
          this.server_version = /redis_version:([^\r\n]+)/.exec(info)?.[1];
          return /aof_enabled:1/.test(info) && !/loading:1/.test(info);
        } catch {
          return false;
        } finally {
          client.disconnect();
        }
      });
      if (!/^7\./.test(this.server_version ?? '')) {
        this.durability_detail =
          `${VARIANTS[this.policy].durability_detail} [Written for Redis 7.0; ` +
          `this server is ${this.server_version ?? 'of unknown version'}: re-check.]`;
      }
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  async stop(): Promise<void> {
    if (this.server) await stop_server(this.server);
    this.server = undefined;
    remove_dir(this.dir);
    this.dir = undefined;
  }

  server_pids(): number[] {
    return this.server && !this.server.exited() ? [this.server.pid] : [];
  }

  protected new_run(partitions: number): PeerRun {
    return new RedisRun(this.port, next_run_name(), partitions);
  }
}

const GROUP = 'bench';
const FIELD = 'd';

async function open_client(port: number, auto_pipeline: boolean): Promise<Redis> {
  const client = new Redis({ ...CLIENT_OPTIONS, port, enableAutoPipelining: auto_pipeline });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

class RedisRun implements PeerRun {
  private admin: Redis | undefined;
  private readonly keys: string[];

  constructor(
    private readonly port: number,
    run: string,
    partitions: number,
  ) {
    this.keys = Array.from({ length: partitions }, (_, i) => `bench:${run}:${i}`);
  }

  async prepare(): Promise<void> {
    this.admin = await open_client(this.port, false);
    // Group at offset 0, created before publishing: consumers read every message of the run.
    for (const key of this.keys) await this.admin.xgroup('CREATE', key, GROUP, '0', 'MKSTREAM');
  }

  async open_producer(): Promise<PeerProducer> {
    return new RedisProducer(await open_client(this.port, true), this.keys);
  }

  async open_consumer(index: number): Promise<PeerConsumer> {
    return new RedisConsumer(await open_client(this.port, false), this.keys, `c${index}`);
  }

  async cleanup(): Promise<void> {
    try {
      if (this.admin && this.keys.length > 0) await this.admin.del(...this.keys).catch(() => undefined);
    } finally {
      this.admin?.disconnect();
      this.admin = undefined;
    }
  }
}

class RedisProducer implements PeerProducer {
  constructor(
    private readonly client: Redis,
    private readonly keys: string[],
  ) {}

  async send(dest: number, payload: Buffer): Promise<void> {
    const id = await this.client.xadd(this.keys[dest]!, '*', FIELD, payload);
    if (id === null) throw new Error('XADD returned nil');
  }

  backpressure(): Promise<void> | undefined {
    return undefined; // bounded by the publish window
  }

  async close(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect());
  }
}

/** XREADGROUP reply (RESP2, buffers): [[key, [[id, [field, value, ...]], ...]], ...] or null on timeout. */
type ReadGroupReply = Array<[Buffer, Array<[Buffer, Buffer[]]>]> | null;

/** How long one blocking XREADGROUP waits for data; also bounds how long close() waits for the loop. */
const BLOCK_MS = 100;

class RedisConsumer implements PeerConsumer {
  private stopped = false;
  private loop: Promise<void> | undefined;
  private acks: Promise<unknown> = Promise.resolve();
  private failure_seen: unknown;

  constructor(
    private readonly client: Redis,
    private readonly keys: string[],
    private readonly name: string,
  ) {}

  async subscribe(dests: number[], on_message: (payload: Uint8Array) => void): Promise<void> {
    if (this.loop) throw new Error('a Redis consumer subscribes once');
    const keys = dests.map((dest) => this.keys[dest]!);
    const args: Array<string | number> = [
      'GROUP',
      GROUP,
      this.name,
      'COUNT',
      CONSUMER_PREFETCH,
      'BLOCK',
      BLOCK_MS,
      'STREAMS',
      ...keys,
      ...keys.map(() => '>'),
    ];
    this.loop = (async () => {
      // Bounded: it ends when close() sets stopped, on an error, or after a day at the latest.
      const give_up_at = performance.now() + 24 * 3600_000;
      while (!this.stopped && performance.now() < give_up_at) {
        let reply: ReadGroupReply;
        try {
          reply = (await this.client.callBuffer('XREADGROUP', ...args)) as ReadGroupReply;
        } catch (error) {
          if (!this.stopped) this.failure_seen = error;
          return;
        }
        if (!reply) continue;
        for (const [key, entries] of reply) {
          if (entries.length === 0) continue;
          const ids: Buffer[] = [];
          for (const [id, fields] of entries) {
            ids.push(id);
            for (let f = 0; f + 1 < fields.length; f += 2) {
              if (fields[f]!.toString() === FIELD) on_message(fields[f + 1]!);
            }
          }
          // One XACK per batch (the analogue of a multiple ack); sent on this connection ahead of the next read.
          this.acks = this.client.xack(key, GROUP, ...ids).catch((error: unknown) => {
            this.failure_seen ??= error;
          });
        }
      }
    })();
  }

  failure(): Error | undefined {
    if (this.failure_seen === undefined) return undefined;
    return this.failure_seen instanceof Error ? this.failure_seen : new Error(String(this.failure_seen));
  }

  async close(): Promise<void> {
    this.stopped = true;
    try {
      await this.loop;
      await this.acks;
      await this.client.quit();
    } catch {
      this.client.disconnect();
    }
    if (this.failure_seen !== undefined)
      throw this.failure_seen instanceof Error ? this.failure_seen : new Error(String(this.failure_seen));
  }
}
