// The composition root: the one place that builds the broker's parts and wires them together —
// the file system and clock (injected, so a whole broker can run on SimFileIO and a manual clock),
// storage, the metadata store and the placement (a single node, or a cluster member on etcd), the
// broker core, and the front ends (the Kafka listener, the HTTP admin API). Used by `sluice start`
// and by tests and applications that embed a broker.
import { Broker } from '../broker/broker.ts';
import type { BrokerSettings } from '../broker/broker_settings.ts';
import type { AclSettings } from '../broker/acls/acls.ts';
import { user_principal } from '../core/acls.ts';
import { DELAYED_SETTINGS_DEFAULT, type DelayedSettings } from '../broker/delayed/delayed_delivery.ts';
import type { TxnSettings } from '../broker/txn/txn_coordinator.ts';
import type { CleanerSettings } from '../broker/compaction/log_cleaner.ts';
import { GROUP_SETTINGS_DEFAULT, type GroupSettings } from '../broker/group_coordinator.ts';
import { SHARE_GROUP_SETTINGS_DEFAULT, type ShareGroupSettings } from '../broker/queues/group_config.ts';
import { TopicManager } from '../broker/topics.ts';
import type { ClusterOptions } from '../cluster/cluster_node.ts';
import type { Clock, Logger } from '../core/clock.ts';
import type { Credentials } from '../core/credentials.ts';
import type { CredentialStore } from '../broker/credentials.ts';
import type { TopicRecord } from '../core/types.ts';
import { default_boolean, default_number, default_text, host_port_of } from '../core/settings.ts';
import {
  listener_sasl,
  listener_tls,
  listeners_problem,
  protocol_of,
  type KafkaListenerSpec,
} from './kafka_listeners.ts';
import { ClientConnectionLimits, type ClientConnectionLimitSettings } from '../server/client_connection_limits.ts';
import { type ConsoleHandler, HttpListener } from '../server/http/server.ts';
import { AmqpListener } from '../server/amqp/listener.ts';
import type { GuestAccess } from '../server/amqp/authenticate.ts';
import type { ConnectionLimits } from '../server/kafka/connection.ts';
import { KafkaListener } from '../server/kafka/listener.ts';
import { own_principal, tls_peer_options, type TlsFiles } from '../server/tls_files.ts';
import { LocalMetadataStore } from '../single_node/local_metadata_store.ts';
import { LocalPlacement } from '../single_node/local_placement.ts';
import {
  type DurabilityPolicy,
  type FileIO,
  MONOTONIC_CLOCK,
  NodeFileIO,
  SILENT_LOGGER,
  SYSTEM_CLOCK,
  Storage,
  type StorageConfig,
  storage_config_default,
} from '../storage/index.ts';

export interface CoreOptions {
  data_dir: string;
  node_id?: number;
  durability?: DurabilityPolicy;
  storage?: Partial<StorageConfig>;
  auto_create_topics?: boolean;
  default_partitions?: number;
  groups?: Partial<Omit<GroupSettings, 'consumer'>> & { consumer?: Partial<GroupSettings['consumer']> };
  share_groups?: Partial<ShareGroupSettings>;
  delayed?: Partial<DelayedSettings>;
  transactions?: Partial<TxnSettings>;
  /** Log compaction's settings (the built-in defaults for the rest). */
  cleaner?: Partial<CleanerSettings>;
  /**
   * The users file's users (SASL PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 on the Kafka listener, AMQP
   * logins, HTTP Basic), beside the users managed while the broker runs; its presence turns SASL on.
   */
  credentials?: CredentialStore | null;
  /** Require logins even without a users file: every user is then a managed one. */
  sasl?: boolean;
  /** Check requests against the ACLs (`enabled`), and the principals allowed anything. */
  acls?: Partial<AclSettings>;
  /** Users no quota applies to (the brokers' own certificate subject); the inter-broker user is one. */
  quota_exempt_users?: readonly string[];
  /** Run as a member of a cluster whose metadata is in etcd (the listener's start joins it). */
  cluster?: ClusterOptions;
  /**
   * The settings given at start (`sluice start`'s flags, environment and config file), as text by
   * canonical name: what DescribeConfigs reports for the broker (the others as their defaults).
   */
  settings_given?: Readonly<Record<string, string>>;
  logger?: Logger;
  /** The file system under everything (default: the real one). */
  io?: FileIO;
  /** The wall clock under everything (default: the system's). */
  clock?: Clock;
  /** For durations that must not jump with the wall clock (default: `clock` when given, else a monotonic one). */
  monotonic_clock?: Clock;
}

export interface StartOptions extends CoreOptions {
  kafka?: { host: string; port: number };
  advertise?: { host: string; port: number };
  /** Several Kafka listeners, in place of `kafka` and `advertise`; brokers use the first. */
  kafka_listeners?: KafkaListenerSpec[];
  limits?: Partial<ConnectionLimits>;
  /** Connections one client address, or one user, may hold open on the Kafka and AMQP listeners together. */
  client_limits?: Partial<ClientConnectionLimitSettings>;
  /**
   * TLS (1.2+) on every listener (Kafka, AMQP, HTTP) and between brokers with this certificate and
   * key, client certificates as `client_auth` says; plaintext when absent.
   */
  tls?: TlsFiles | null;
  /** The HTTP admin API, metrics and console; none when absent. */
  http?: { host: string; port: number } | null;
  /**
   * The AMQP 0-9-1 listener (same users as Kafka SASL); none when absent. `guest`: where guest/guest
   * may log in from when there are no credentials (default loopback); `disk_free_min_bytes`: below
   * that much free disk, publishing connections are blocked (default 0: never).
   */
  amqp?: { host: string; port: number; guest?: GuestAccess; disk_free_min_bytes?: number } | null;
  /** Serves GETs outside /api on the HTTP listener (the web console). */
  console_handler?: ConsoleHandler | null;
}

export interface RunningBroker {
  broker: Broker;
  /** The first Kafka listener: the one brokers use for one another. */
  kafka: KafkaListener;
  /** Every Kafka listener, the first first. */
  kafka_listeners: KafkaListener[];
  /** Host and port of the first Kafka listener as clients should use them. */
  kafka_address: { host: string; port: number };
  http: HttpListener | null;
  /** Host and port of the HTTP listener, null when it is off. */
  http_address: { host: string; port: number } | null;
  amqp: AmqpListener | null;
  /** Host and port of the AMQP listener, null when it is off. */
  amqp_address: { host: string; port: number } | null;
  /** Stop accepting, answer requests in flight, flush and close storage. */
  close(): Promise<void>;
}

function broker_settings(options: CoreOptions): BrokerSettings {
  const shares = options.share_groups;
  return {
    auto_create_topics: options.auto_create_topics ?? default_boolean('auto_create'),
    default_partitions: options.default_partitions ?? default_number('partitions'),
    groups: {
      ...GROUP_SETTINGS_DEFAULT,
      ...options.groups,
      consumer: {
        ...GROUP_SETTINGS_DEFAULT.consumer,
        session_timeout_ms: default_number('group_consumer_session_timeout_ms'),
        heartbeat_interval_ms: default_number('group_consumer_heartbeat_interval_ms'),
        ...options.groups?.consumer,
      },
    },
    share_groups: {
      ...SHARE_GROUP_SETTINGS_DEFAULT,
      ...shares,
      partition: { ...SHARE_GROUP_SETTINGS_DEFAULT.partition, ...shares?.partition },
    },
    delayed: { ...DELAYED_SETTINGS_DEFAULT, ...options.delayed },
    transactions: {
      timeout_max_ms: default_number('transaction_max_timeout_ms'),
      id_expiration_ms: default_number('transactional_id_expiration_ms'),
      checks_max: default_number('transaction_checks_max'),
      version: default_number('transaction_version'),
      ...options.transactions,
    },
    cleaner: {
      interval_ms: default_number('cleaner_interval_ms'),
      memory_bytes_max: default_number('cleaner_memory_bytes_max'),
      io_bytes_per_s_max: default_number('cleaner_io_bytes_per_s_max'),
      ...options.cleaner,
    },
    acls: acl_settings(options),
    started_with: {
      ...options.settings_given,
      node_id: String(options.node_id ?? default_number('node_id')),
      data: options.data_dir,
    },
    quota_exempt_users: [
      ...(options.quota_exempt_users ?? []),
      ...(options.cluster?.inter_broker_sasl ? [options.cluster.inter_broker_sasl.username] : []),
    ],
  };
}

/** The inter-broker user is a super user: brokers replicate, forward and write markers as it. */
function acl_settings(options: CoreOptions): AclSettings {
  const brokers = options.cluster?.inter_broker_sasl?.username;
  const super_users = [...(options.acls?.super_users ?? []), ...(brokers ? [user_principal(brokers)] : [])];
  return { enabled: options.acls?.enabled ?? default_boolean('authorization'), super_users };
}

async function open_storage(
  options: CoreOptions,
  io: FileIO,
  clock: Clock,
  logger: Logger,
  topics: readonly TopicRecord[],
): Promise<Storage> {
  const config: StorageConfig = {
    ...storage_config_default(options.data_dir),
    ...(options.durability ? { durability: options.durability } : {}),
    ...options.storage,
  };
  return Storage.open(config, { io, clock, logger, log_config: (name) => TopicManager.log_config_for(topics, name) });
}

/**
 * Opens the broker core without front ends: storage, the metadata store, the placement. A cluster
 * member connects to etcd here (failing with the endpoint named) and joins once its listener is
 * up (Broker.join).
 */
export async function open_core(options: CoreOptions): Promise<Broker> {
  const io = options.io ?? new NodeFileIO();
  const clock = options.clock ?? SYSTEM_CLOCK;
  // A clock handed in (a simulated one) serves both: time then moves as the caller says.
  const monotonic_clock = options.monotonic_clock ?? options.clock ?? MONOTONIC_CLOCK;
  const logger = options.logger ?? SILENT_LOGGER;
  const node_id = options.node_id ?? default_number('node_id');
  const settings = broker_settings(options);
  const users_file = options.credentials ?? null;
  const common = { node_id, data_dir: options.data_dir, io, clock, monotonic_clock, logger, settings, users_file };
  await io.mkdir(options.data_dir);
  if (!options.cluster) {
    const metadata = await LocalMetadataStore.open(io, options.data_dir);
    const storage = await open_storage(options, io, clock, logger, metadata.topics());
    return Broker.start({ ...common, storage, metadata, placement: new LocalPlacement(node_id, storage, metadata) });
  }
  // Loaded only for a cluster member: a single node never loads etcd's gRPC client.
  const { open_cluster_member } = await import('./open_cluster_member.ts');
  return open_cluster_member(options.cluster, common, () => open_storage(options, io, clock, logger, []));
}

/** The Kafka listeners to open: those of `kafka_listeners`, else one at `kafka`, secured as TLS and logins are. */
function kafka_listener_specs(options: StartOptions): KafkaListenerSpec[] {
  const tls = (options.tls ?? null) !== null;
  const sasl = Boolean(options.credentials || options.sasl);
  const bind = options.kafka ?? host_port_of(default_text('kafka'))!;
  const specs = options.kafka_listeners ?? [{ name: protocol_of(tls, sasl), ...bind, advertised: options.advertise }];
  const problem = listeners_problem(specs, tls, sasl);
  if (problem) throw new Error(problem);
  if (options.cluster?.inter_broker_sasl && !listener_sasl(specs[0]!.name))
    throw new Error(
      `brokers log in to one another on the first listener, which is ${specs[0]!.name}: make it a SASL one`,
    );
  return specs;
}

/** What the HTTP listener shows of the Kafka listeners: the first's address, the connections of all. */
function kafka_summary(listeners: readonly KafkaListener[]) {
  return {
    address: listeners[0]!.address,
    name: listeners[0]!.name,
    get connection_count() {
      return listeners.reduce((sum, listener) => sum + listener.connection_count, 0);
    },
  };
}

/** A Kafka listener's address, and its TLS and logins as its protocol says. */
function listener_options(spec: KafkaListenerSpec, credentials: Credentials | null, tls: TlsFiles | null) {
  return {
    name: spec.name,
    host: spec.host,
    port: spec.port,
    advertised_host: spec.advertised?.host,
    advertised_port: spec.advertised?.port,
    credentials: listener_sasl(spec.name) ? credentials : null,
    tls: listener_tls(spec.name) ? tls : null,
  };
}

/** The connection limits an embedded broker was given, as the settings they are (their start values). */
function client_limits_given(options: StartOptions): Record<string, string> {
  const given: Record<string, string> = {};
  const { per_ip_max, per_user_max } = options.client_limits ?? {};
  if (per_ip_max !== undefined) given.connections_per_ip_max = String(per_ip_max);
  if (per_user_max !== undefined) given.connections_per_user_max = String(per_user_max);
  return given;
}

/** The broker core plus its listeners, started and stopped together. */
export async function start_broker(options: StartOptions): Promise<RunningBroker> {
  const logger = options.logger ?? SILENT_LOGGER;
  const tls = options.tls ?? null;
  const specs = kafka_listener_specs(options);
  // Brokers reach one another on the first Kafka listener, so they dial TLS when it takes it.
  const cluster =
    options.cluster && listener_tls(specs[0]!.name)
      ? { ...options.cluster, inter_broker_tls: () => tls_peer_options(tls!) }
      : options.cluster;
  const certified = tls ? own_principal(tls) : null;
  const acls = certified
    ? { ...options.acls, super_users: [...(options.acls?.super_users ?? []), user_principal(certified)] }
    : options.acls;
  const quota_exempt_users = certified ? [certified] : [];
  const settings_given = { ...options.settings_given, ...client_limits_given(options) };
  const broker = await open_core({ ...options, cluster, acls, quota_exempt_users, settings_given });
  // Logins (Kafka SASL, AMQP, HTTP Basic) check the users file's users and the managed ones.
  const credentials: Credentials | null = options.credentials || options.sasl ? broker.users : null;
  // Dynamic broker configs (max.connections.per.ip, sluice.connections_per_user_max) over the settings.
  const connection_limits = new ClientConnectionLimits(() => ({
    per_ip_max: Number(broker.configs.setting_value('connections_per_ip_max')),
    per_user_max: Number(broker.configs.setting_value('connections_per_user_max')),
  }));
  const kafka_listeners = specs.map(
    (spec) =>
      new KafkaListener(broker, {
        ...listener_options(spec, credentials, tls),
        limits: options.limits,
        connection_limits,
        logger,
      }),
  );
  const kafka = kafka_listeners[0]!;
  let http: HttpListener | null = null;
  const amqp = options.amqp
    ? new AmqpListener(broker, { ...options.amqp, credentials, tls, connection_limits, logger })
    : null;
  try {
    for (const listener of kafka_listeners) await listener.listen();
    // A cluster member registers the addresses it is reachable at, so it joins once listening.
    await broker.join(kafka.address, Object.fromEntries(kafka_listeners.map((l) => [l.name, l.address])));
    await amqp?.listen();
    const console_handler = options.console_handler ?? null;
    http = options.http
      ? new HttpListener({
          ...options.http,
          core: broker,
          kafka: kafka_summary(kafka_listeners),
          amqp,
          logger,
          console_handler,
          tls,
          credentials,
        })
      : null;
    await http?.listen();
  } catch (error) {
    await amqp?.close();
    for (const listener of kafka_listeners) await listener.close();
    await broker.close();
    throw error;
  }
  const close = closer(broker, kafka_listeners, amqp, http);
  const amqp_address = amqp?.address ?? null;
  return {
    broker,
    kafka,
    kafka_listeners,
    kafka_address: kafka.address,
    http,
    http_address: http?.address ?? null,
    amqp,
    amqp_address,
    close,
  };
}

/** Stops the broker once, however often called: HTTP last, so probes see the whole shutdown. */
function closer(
  broker: Broker,
  kafka_listeners: readonly KafkaListener[],
  amqp: AmqpListener | null,
  http: HttpListener | null,
): () => Promise<void> {
  let closing: Promise<void> | null = null;
  return () => {
    closing ??= (async () => {
      // /readyz turns 503 first.
      http?.begin_shutdown();
      try {
        broker.begin_shutdown();
        await amqp?.close();
        await Promise.all(kafka_listeners.map((listener) => listener.close()));
        await broker.close();
      } finally {
        await http?.close();
      }
    })();
    return closing;
  };
}

/** The in-process API for embedding, in the SDK's naming style. */
export const startBroker = start_broker;
