// RabbitMQ peer drivers: 'rabbitmq-quorum' (quorum queues) and 'rabbitmq-classic' (classic durable
// queues, persistent messages), both with publisher confirms, driven by amqplib.
//
// The server runs as a plain process (not the system service), on loopback, with its own node name,
// ports, Erlang cookie (HOME), data/log dirs, config and an empty plugin list, all under a fresh
// directory in the workdir. It also gets its own epmd on a private loopback port, so nothing is
// shared with (or left behind for) a system RabbitMQ.
import fs from 'node:fs';
import path from 'node:path';
import amqp from 'amqplib';
import type { ChannelModel, ConfirmChannel, Channel, ConsumeMessage, Options } from 'amqplib';
import type { DurabilityClass, QueueParams, SystemUnderTest, ThroughputResult, Unavailable } from '../types.ts';
import {
  CONSUMER_ACK_EVERY,
  CONSUMER_PREFETCH,
  next_run_name,
  QUEUE_PREFETCH,
  unavailable,
  type PeerConsumer,
  type PeerProducer,
  type PeerQueueConsumer,
  type QueuePeerRun,
} from './adapter.ts';
import { ensure_executable, package_label } from './install.ts';
import {
  descendant_pids,
  free_ports,
  kill_pid,
  make_temp_dir,
  pid_alive,
  process_name,
  read_tail,
  remove_dir,
  spawn_server,
  stop_server,
  track_pid,
  wait_until_ready,
  type SpawnedServer,
} from './server.ts';
import { PeerWorkloads, run_queue } from './workloads.ts';

const RABBITMQ_SERVER = '/usr/lib/rabbitmq/bin/rabbitmq-server';
const APT_PACKAGE = 'rabbitmq-server';

type QueueKind = 'quorum' | 'classic';

interface Variant {
  id: string;
  label: string;
  durability: DurabilityClass;
  durability_detail: string;
  queue_arguments: Record<string, unknown>;
}

const VARIANTS: Record<QueueKind, Variant> = {
  quorum: {
    id: 'rabbitmq-quorum',
    label: 'RabbitMQ quorum queue',
    durability: 'fsync',
    durability_detail:
      "Publisher confirm after the message is committed to the quorum queue's Raft log, which Ra writes to its " +
      'shared WAL and fsyncs (fdatasync) before it counts an entry as written; single node, so the quorum is this ' +
      'one replica. Ra batches the WAL fsync across all queues (group commit).',
    queue_arguments: { 'x-queue-type': 'quorum' },
  },
  classic: {
    id: 'rabbitmq-classic',
    label: 'RabbitMQ classic durable queue',
    durability: 'fsync',
    durability_detail:
      'Publisher confirm for a persistent message on a durable classic queue (3.10, queue index v1, the 3.10 ' +
      'default) is sent only after the message is fsynced, but fsyncs are batched: the queue fsyncs its index ' +
      'journal (where messages under 4096 B are embedded) when its mailbox runs empty, or every 200 ms under ' +
      'constant load, and the message store (larger messages) every 25 ms, so under load a confirm can wait up to ' +
      'a few hundred ms (group commit with a delay). A message in the message store that a consumer acknowledges ' +
      'before it was written is confirmed without being written.',
    queue_arguments: { 'x-queue-type': 'classic', 'x-queue-version': 1 },
  },
};

/** Availability check (installing rabbitmq-server when missing and root), then both RabbitMQ systems. */
export async function rabbitmq_systems(): Promise<Array<SystemUnderTest | Unavailable>> {
  const server = await ensure_executable(RABBITMQ_SERVER, APT_PACKAGE);
  const epmd = 'path' in server ? await ensure_executable('epmd', 'erlang-base') : server;
  const kinds: QueueKind[] = ['quorum', 'classic'];
  if ('reason' in server || 'reason' in epmd) {
    const reason = 'reason' in server ? server.reason : 'reason' in epmd ? epmd.reason : '';
    return kinds.map((kind) => unavailable(VARIANTS[kind].id, VARIANTS[kind].label, reason));
  }
  return kinds.map((kind) => new RabbitMQSystem(kind, server.path, epmd.path));
}

let node_counter = 0;

export class RabbitMQSystem extends PeerWorkloads implements SystemUnderTest {
  readonly id: string;
  readonly label: string;
  readonly durability: DurabilityClass;
  /** Written for RabbitMQ 3.10; start() appends a note when the server turns out to be another version. */
  durability_detail: string;
  readonly client = package_label('amqplib');
  /** The server's version, known after start(). */
  server_version: string | undefined;

  private dir: string | undefined;
  private server: SpawnedServer | undefined;
  private epmd: SpawnedServer | undefined;
  private beam_pid: number | undefined;
  private port = 0;
  private node_log: string | undefined;

  constructor(
    private readonly kind: QueueKind,
    private readonly server_path = RABBITMQ_SERVER,
    private readonly epmd_path = 'epmd',
  ) {
    super();
    const variant = VARIANTS[kind];
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
      const [amqp_port, dist_port, epmd_port] = await free_ports(3);
      this.port = amqp_port!;
      node_counter++;
      const node_name = `bench${process.pid}x${node_counter}@localhost`;
      this.node_log = path.join(dir, 'log', `${node_name}.log`);
      const files = write_node_files(dir, amqp_port!);
      // Our own epmd, loopback only, on a private port: the node registers there and nowhere else.
      this.epmd = spawn_server(this.epmd_path, ['-address', '127.0.0.1', '-port', String(epmd_port)], {
        cwd: dir,
        log_file: path.join(files.logs, 'epmd.log'),
      });
      const env = node_env(files, node_name, { amqp: amqp_port!, dist: dist_port!, epmd: epmd_port! });
      // The packaged /usr/sbin/rabbitmq-server wrapper switches to the rabbitmq user when run as root;
      // the script under /usr/lib/rabbitmq/bin runs the node as the current user, which is what we want.
      this.server = spawn_server(this.server_path, [], {
        cwd: dir,
        env,
        log_file: path.join(files.logs, 'stdout.log'),
      });
      const url = this.url();
      await wait_until_ready(`${this.id} (rabbitmq-server)`, this.server, async () => {
        try {
          const connection = await amqp.connect(url, { timeout: 2000 });
          const version = connection.connection.serverProperties.version;
          this.server_version = typeof version === 'string' ? version : undefined;
          await connection.close();
          return true;
        } catch {
          return false;
        }
      });
      this.note_version();
      this.beam_pid = this.find_beam();
      if (this.beam_pid !== undefined) track_pid(this.beam_pid);
    } catch (error) {
      const log = this.node_log ? read_tail(this.node_log) : '';
      await this.stop();
      throw log
        ? new Error(`${error instanceof Error ? error.message : String(error)}\nnode log tail:\n${log}`)
        : error;
    }
  }

  /**
   * The classic-queue argument x-queue-version 1 (the 3.10 default index, whose fsync behaviour the
   * detail describes) exists in 3.10 to 3.13 only; other versions get their default, and a note.
   */
  private queue_arguments(): Record<string, unknown> {
    const args = { ...VARIANTS[this.kind].queue_arguments };
    if (this.kind === 'classic' && !/^3\.1[0-3]\./.test(this.server_version ?? '')) delete args['x-queue-version'];
    return args;
  }

  private note_version(): void {
    const base = VARIANTS[this.kind].durability_detail;
    this.durability_detail = /^3\.10\./.test(this.server_version ?? '')
      ? base
      : `${base} [Written for RabbitMQ 3.10; this server is ${this.server_version ?? 'of unknown version'}: re-check.]`;
  }

  /** beam.smp: from the pid file, else the process tree under the start script. */
  private find_beam(): number | undefined {
    if (!this.server || !this.dir) return undefined;
    try {
      const pid = Number(fs.readFileSync(path.join(this.dir, 'rabbitmq.pid'), 'utf8').trim());
      if (Number.isSafeInteger(pid) && pid > 0 && pid_alive(pid) && process_name(pid).startsWith('beam')) return pid;
    } catch {
      /* no pid file */
    }
    if (process_name(this.server.pid).startsWith('beam')) return this.server.pid;
    return descendant_pids(this.server.pid).find((pid) => process_name(pid).startsWith('beam'));
  }

  private url(): string {
    return `amqp://guest:guest@127.0.0.1:${this.port}`;
  }

  async stop(): Promise<void> {
    const beam = this.beam_pid ?? this.find_beam();
    const script = this.server?.pid;
    // SIGTERM to beam.smp stops the node cleanly; the start script then exits by itself.
    if (beam !== undefined) await kill_pid(beam);
    if (this.server) await stop_server(this.server);
    else if (script !== undefined) await kill_pid(script);
    if (this.epmd) await stop_server(this.epmd);
    this.server = undefined;
    this.epmd = undefined;
    this.beam_pid = undefined;
    remove_dir(this.dir);
    this.dir = undefined;
  }

  server_pids(): number[] {
    const beam = this.beam_pid ?? this.find_beam();
    return beam !== undefined ? [beam] : [];
  }

  protected new_run(partitions: number): RabbitRun {
    return new RabbitRun(this.url(), next_run_name(), partitions, this.queue_arguments());
  }

  /**
   * Queue delivery with per-message acknowledgement: persistent messages published with publisher
   * confirms to a fresh queue (the publish workload's code), then `params.consumers` consumers,
   * each on its own connection and channel with prefetch QUEUE_PREFETCH and noAck false, calling
   * channel.ack(message) for every message.
   */
  queue(params: QueueParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    return run_queue((partitions) => this.new_run(partitions), params, progress);
  }
}

/** One set of queues: bench.<run>.<i>. Also drives Sluice's AMQP listener (sluice/amqp.ts). */
export class RabbitRun implements QueuePeerRun {
  private admin: ChannelModel | undefined;
  private readonly queues: string[];

  constructor(
    private readonly url: string,
    run: string,
    partitions: number,
    private readonly queue_arguments: Record<string, unknown>,
  ) {
    this.queues = Array.from({ length: partitions }, (_, i) => `bench.${run}.${i}`);
  }

  async prepare(): Promise<void> {
    this.admin = await amqp.connect(this.url, { timeout: 10_000 });
    this.admin.on('error', () => undefined);
    const channel = await this.admin.createChannel();
    for (const queue of this.queues) {
      await channel.assertQueue(queue, {
        durable: true,
        autoDelete: false,
        exclusive: false,
        arguments: this.queue_arguments,
      });
    }
    await channel.close();
  }

  async open_producer(): Promise<PeerProducer> {
    const connection = await amqp.connect(this.url, { timeout: 10_000 });
    connection.on('error', () => undefined);
    const channel: ConfirmChannel = await connection.createConfirmChannel();
    channel.on('error', () => undefined);
    return new RabbitProducer(connection, channel, this.queues);
  }

  async open_consumer(): Promise<PeerConsumer> {
    const connection = await amqp.connect(this.url, { timeout: 10_000 });
    const channel = await connection.createChannel();
    const consumer = new RabbitConsumer(connection, channel, this.queues);
    await channel.prefetch(CONSUMER_PREFETCH, false);
    return consumer;
  }

  async open_queue_consumer(): Promise<PeerQueueConsumer> {
    const connection = await amqp.connect(this.url, { timeout: 10_000 });
    const channel = await connection.createChannel();
    const consumer = new RabbitQueueConsumer(connection, channel, this.queues);
    await channel.prefetch(QUEUE_PREFETCH, false); // per consumer on this channel
    return consumer;
  }

  async cleanup(): Promise<void> {
    if (!this.admin) return;
    try {
      const channel = await this.admin.createChannel();
      for (const queue of this.queues) await channel.deleteQueue(queue).catch(() => undefined);
      await channel.close().catch(() => undefined);
    } finally {
      await this.admin.close().catch(() => undefined);
      this.admin = undefined;
    }
  }
}

const PERSISTENT: Options.Publish = { persistent: true };

class RabbitProducer implements PeerProducer {
  private blocked: Promise<void> | undefined;

  constructor(
    private readonly connection: ChannelModel,
    private readonly channel: ConfirmChannel,
    private readonly queues: string[],
  ) {}

  send(dest: number, payload: Buffer): Promise<void> {
    return new Promise((resolve, reject) => {
      const ok = this.channel.sendToQueue(this.queues[dest]!, payload, PERSISTENT, (error: unknown) => {
        if (error) reject(error instanceof Error ? error : new Error(`publish nacked: ${String(error)}`));
        else resolve();
      });
      if (!ok && !this.blocked) {
        this.blocked = new Promise<void>((done) => this.channel.once('drain', () => done())).finally(() => {
          this.blocked = undefined;
        });
      }
    });
  }

  backpressure(): Promise<void> | undefined {
    return this.blocked;
  }

  async close(): Promise<void> {
    await this.channel.close().catch(() => undefined);
    await this.connection.close().catch(() => undefined);
  }
}

/** A consumer's connection and channel: the first unexpected error or close is kept for failure(). */
abstract class RabbitChannelHolder {
  protected error: Error | undefined;
  protected closing = false;

  constructor(
    protected readonly connection: ChannelModel,
    protected readonly channel: Channel,
    protected readonly queues: string[],
  ) {
    const record = (error?: Error) => {
      if (!this.closing) this.error ??= error ?? new Error('consumer channel closed unexpectedly');
    };
    connection.on('error', record);
    connection.on('close', record);
    channel.on('error', record);
    channel.on('close', () => record());
  }

  failure(): Error | undefined {
    return this.error;
  }
}

class RabbitConsumer extends RabbitChannelHolder implements PeerConsumer {
  private last: ConsumeMessage | undefined;
  private unacked = 0;
  private tags: string[] = [];

  async subscribe(dests: number[], on_message: (payload: Uint8Array) => void): Promise<void> {
    for (const dest of dests) {
      const reply = await this.channel.consume(
        this.queues[dest]!,
        (message) => {
          if (!message) return; // cancelled by the server
          on_message(message.content);
          this.last = message;
          if (++this.unacked >= CONSUMER_ACK_EVERY) {
            this.channel.ack(message, true); // multiple: everything up to this delivery on the channel
            this.unacked = 0;
            this.last = undefined;
          }
        },
        { noAck: false },
      );
      this.tags.push(reply.consumerTag);
    }
  }

  async close(): Promise<void> {
    this.closing = true;
    try {
      if (this.last && this.unacked > 0 && !this.error) this.channel.ack(this.last, true);
      for (const tag of this.tags) await this.channel.cancel(tag).catch(() => undefined);
      await this.channel.close().catch(() => undefined);
    } finally {
      await this.connection.close().catch(() => undefined);
    }
  }
}

/** Queue workload consumer: one channel on its own connection, manual acknowledgement of every message. */
class RabbitQueueConsumer extends RabbitChannelHolder implements PeerQueueConsumer {
  private tag: string | undefined;

  async subscribe(dest: number, on_delivery: () => void, on_acked: () => void): Promise<void> {
    const reply = await this.channel.consume(
      this.queues[dest]!,
      (message) => {
        if (!message) return; // cancelled by the server
        on_delivery();
        this.channel.ack(message); // this delivery only
        on_acked();
      },
      { noAck: false },
    );
    this.tag = reply.consumerTag;
  }

  async close(): Promise<void> {
    this.closing = true;
    try {
      if (this.tag !== undefined) await this.channel.cancel(this.tag).catch(() => undefined);
      await this.channel.close().catch(() => undefined);
    } finally {
      await this.connection.close().catch(() => undefined);
    }
  }
}

/** The node's own directories and files under `dir`: nothing is read from /etc/rabbitmq. */
interface NodeFiles {
  dir: string;
  mnesia: string;
  logs: string;
  config: string;
  plugins: string;
  env_file: string;
}

function write_node_files(dir: string, amqp_port: number): NodeFiles {
  const mnesia = path.join(dir, 'mnesia');
  const logs = path.join(dir, 'log');
  fs.mkdirSync(mnesia, { recursive: true });
  fs.mkdirSync(logs, { recursive: true });
  const config = path.join(dir, 'rabbitmq.conf');
  fs.writeFileSync(
    config,
    [
      `listeners.tcp.default = 127.0.0.1:${amqp_port}`,
      'disk_free_limit.absolute = 50MB',
      'log.console = false',
      'log.file.level = warning',
      '',
    ].join('\n'),
  );
  const plugins = path.join(dir, 'enabled_plugins');
  fs.writeFileSync(plugins, '[].\n'); // no plugins: management and everything else stay off
  const env_file = path.join(dir, 'rabbitmq-env.conf');
  fs.writeFileSync(env_file, ''); // instead of /etc/rabbitmq/rabbitmq-env.conf
  return { dir, mnesia, logs, config, plugins, env_file };
}

/** The server's environment: its files, node name and ports, everything on loopback. */
function node_env(
  files: NodeFiles,
  node_name: string,
  ports: { amqp: number; dist: number; epmd: number },
): NodeJS.ProcessEnv {
  const { dir } = files;
  return {
    ...process.env,
    HOME: dir,
    RABBITMQ_CONF_ENV_FILE: files.env_file,
    RABBITMQ_MNESIA_BASE: files.mnesia,
    RABBITMQ_LOG_BASE: files.logs,
    RABBITMQ_NODENAME: node_name,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(ports.amqp),
    RABBITMQ_DIST_PORT: String(ports.dist),
    RABBITMQ_CONFIG_FILE: files.config,
    RABBITMQ_ADVANCED_CONFIG_FILE: path.join(dir, 'advanced.config'),
    RABBITMQ_ENABLED_PLUGINS_FILE: files.plugins,
    RABBITMQ_PLUGINS_EXPAND_DIR: path.join(dir, 'plugins-expand'),
    RABBITMQ_PID_FILE: path.join(dir, 'rabbitmq.pid'),
    RABBITMQ_FEATURE_FLAGS_FILE: path.join(dir, 'feature_flags'),
    // Erlang distribution listens on loopback only.
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-kernel inet_dist_use_interface {127,0,0,1}',
    ERL_EPMD_ADDRESS: '127.0.0.1',
    ERL_EPMD_PORT: String(ports.epmd),
  };
}
