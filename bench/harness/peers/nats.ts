// NATS JetStream peer driver: 'nats-jetstream'. nats-server with JetStream on loopback, one
// file-storage stream per partition (subject bench.<run>.<i>), publishes acknowledged by JetStream
// publish acks (pipelined, bounded window), consumption by a durable pull consumer per stream with
// AckPolicy.All (cumulative acks, the analogue of AMQP multiple acks).
import path from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import type { DurabilityClass, SystemUnderTest, Unavailable } from '../types.ts';
import {
  CONSUMER_ACK_EVERY,
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
  port_accepts,
  remove_dir,
  spawn_server,
  stop_server,
  wait_until_ready,
  type SpawnedServer,
} from './server.ts';
import { PeerWorkloads } from './workloads.ts';

const ID = 'nats-jetstream';
const LABEL = 'NATS JetStream (file storage)';
const CONSUMER_NAME = 'bench';
const REQUEST_TIMEOUT_MS = 30_000;
const DETAIL_2_9 =
  "JetStream publish ack after the message is appended to the stream's block file with write(2) (flush in place, a " +
  'single-server stream), not fsynced: nats-server 2.9 fsyncs file-store blocks from a background timer every 60 s ' +
  '(defaultSyncInterval, not configurable before 2.10, which added sync_interval with a 2 min default). An OS crash ' +
  'or power loss can lose up to about a minute of acknowledged messages; a server process crash loses none.';

export async function nats_systems(): Promise<Array<SystemUnderTest | Unavailable>> {
  const server = await ensure_executable('nats-server', 'nats-server');
  if ('reason' in server) return [unavailable(ID, LABEL, server.reason)];
  return [new NatsSystem(server.path)];
}

export class NatsSystem extends PeerWorkloads implements SystemUnderTest {
  readonly id = ID;
  readonly label = LABEL;
  readonly durability: DurabilityClass = 'periodic';
  /** Written for nats-server 2.9; start() appends a note when the server turns out to be another version. */
  durability_detail = DETAIL_2_9;
  readonly client = `${package_label('@nats-io/transport-node')} + ${package_label('@nats-io/jetstream')}`;
  /** The server's version, known after start(). */
  server_version: string | undefined;

  private dir: string | undefined;
  private server: SpawnedServer | undefined;
  private port = 0;

  constructor(private readonly server_path = 'nats-server') {
    super();
  }

  async start(workdir: string): Promise<void> {
    if (this.server) throw new Error(`${this.id} is already started`);
    const dir = make_temp_dir(workdir, this.id);
    this.dir = dir;
    try {
      this.port = await free_port();
      const args = [
        '-a',
        '127.0.0.1',
        '-p',
        String(this.port),
        '-js',
        '-sd',
        path.join(dir, 'jetstream'),
        '-n',
        `bench-${process.pid}`,
      ];
      this.server = spawn_server(this.server_path, args, { cwd: dir, log_file: path.join(dir, 'nats-server.log') });
      await wait_until_ready(`${this.id} (nats-server)`, this.server, async () => {
        if (!(await port_accepts(this.port))) return false;
        // Ready once the JetStream API answers.
        let nc: NatsConnection | undefined;
        try {
          nc = await connect({ servers: this.server_url(), timeout: 2000, reconnect: false });
          const jsm = await jetstreamManager(nc, { timeout: 2000 });
          await jsm.getAccountInfo();
          this.server_version = nc.info?.version;
          return true;
        } catch {
          return false;
        } finally {
          await nc?.close().catch(() => undefined);
        }
      });
      this.durability_detail = DETAIL_2_9;
      if (!/^2\.9\./.test(this.server_version ?? '')) {
        this.durability_detail +=
          ` [Written for nats-server 2.9; this server is ${this.server_version ?? 'of unknown version'}: ` +
          're-check (2.10+ fsyncs every sync_interval, default 2 min).]';
      }
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  private server_url(): string {
    return `nats://127.0.0.1:${this.port}`;
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
    return new NatsRun(this.server_url(), next_run_name(), partitions);
  }
}

async function nats_connect(url: string, name: string): Promise<NatsConnection> {
  return connect({ servers: url, name, timeout: 10_000, reconnect: false });
}

class NatsRun implements PeerRun {
  private admin: NatsConnection | undefined;
  private jsm: JetStreamManager | undefined;
  private readonly streams: string[];
  private readonly subjects: string[];

  constructor(
    private readonly url: string,
    run: string,
    partitions: number,
  ) {
    this.streams = Array.from({ length: partitions }, (_, i) => `BENCH_${run}_${i}`);
    this.subjects = Array.from({ length: partitions }, (_, i) => `bench.${run}.${i}`);
  }

  async prepare(): Promise<void> {
    this.admin = await nats_connect(this.url, 'bench-admin');
    this.jsm = await jetstreamManager(this.admin, { timeout: REQUEST_TIMEOUT_MS });
    for (let i = 0; i < this.streams.length; i++) {
      await this.jsm.streams.add({
        name: this.streams[i]!,
        subjects: [this.subjects[i]!],
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
        num_replicas: 1,
      });
      // Created before publishing, so it starts at the stream's first message.
      await this.jsm.consumers.add(this.streams[i]!, {
        durable_name: CONSUMER_NAME,
        ack_policy: AckPolicy.All,
        deliver_policy: DeliverPolicy.All,
        max_ack_pending: 10 * CONSUMER_PREFETCH,
      });
    }
  }

  async open_producer(): Promise<PeerProducer> {
    const nc = await nats_connect(this.url, 'bench-producer');
    return new NatsProducer(nc, jetstream(nc, { timeout: REQUEST_TIMEOUT_MS }), this.subjects);
  }

  async open_consumer(): Promise<PeerConsumer> {
    const nc = await nats_connect(this.url, 'bench-consumer');
    return new NatsConsumer(nc, jetstream(nc, { timeout: REQUEST_TIMEOUT_MS }), this.streams);
  }

  async cleanup(): Promise<void> {
    try {
      if (this.jsm) for (const stream of this.streams) await this.jsm.streams.delete(stream).catch(() => undefined);
    } finally {
      await this.admin?.close().catch(() => undefined);
      this.admin = undefined;
      this.jsm = undefined;
    }
  }
}

class NatsProducer implements PeerProducer {
  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly subjects: string[],
  ) {}

  async send(dest: number, payload: Buffer): Promise<void> {
    await this.js.publish(this.subjects[dest]!, payload);
  }

  backpressure(): Promise<void> | undefined {
    return undefined; // bounded by the publish window; the client buffers writes itself
  }

  async close(): Promise<void> {
    await this.nc.close().catch(() => undefined);
  }
}

class NatsConsumer implements PeerConsumer {
  private readonly iterators: ConsumerMessages[] = [];
  private readonly last = new Map<string, JsMsg>();
  private readonly unacked = new Map<string, number>();
  private error: Error | undefined;
  private closing = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly streams: string[],
  ) {
    void nc.closed().then((error) => {
      if (!this.closing) this.error ??= error ?? new Error('consumer connection closed unexpectedly');
    });
  }

  failure(): Error | undefined {
    return this.error;
  }

  async subscribe(dests: number[], on_message: (payload: Uint8Array) => void): Promise<void> {
    for (const dest of dests) {
      const stream = this.streams[dest]!;
      const consumer = await this.js.consumers.get(stream, CONSUMER_NAME);
      this.unacked.set(stream, 0);
      const messages = await consumer.consume({
        max_messages: CONSUMER_PREFETCH,
        callback: (message: JsMsg) => {
          on_message(message.data);
          const count = (this.unacked.get(stream) ?? 0) + 1;
          if (count >= CONSUMER_ACK_EVERY) {
            message.ack(); // AckPolicy.All: acknowledges this and every earlier message
            this.unacked.set(stream, 0);
            this.last.delete(stream);
          } else {
            this.unacked.set(stream, count);
            this.last.set(stream, message);
          }
        },
      });
      this.iterators.push(messages);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    try {
      for (const message of this.last.values()) message.ack();
      this.last.clear();
      for (const messages of this.iterators) await messages.close().catch(() => undefined);
      await this.nc.flush().catch(() => undefined);
    } finally {
      await this.nc.close().catch(() => undefined);
    }
  }
}
