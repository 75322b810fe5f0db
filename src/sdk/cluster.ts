// The SDK's view of a cluster: bootstrap, one connection per broker with its negotiated API
// versions, cached metadata (brokers, topics, partition leaders), routing to leaders and retries
// with exponential backoff. Works against Sluice and any Kafka-compatible broker.
import { Connection, prepare } from '../protocol/kafka/client_connection.ts';
import {
  ConnectionError,
  KafkaProtocolError,
  SluiceError,
  UnsupportedApiError,
  check_code,
  is_retriable,
} from './errors.ts';
import type { ApiSpec, RequestIn, ResponseOf } from '../protocol/kafka/schema.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { API_VERSIONS } from '../protocol/kafka/messages/18_api_versions.ts';
import { METADATA } from '../protocol/kafka/messages/03_metadata.ts';
import { authenticate, type SaslOptions } from './sasl.ts';
import { ZERO_UUID } from '../protocol/kafka/codec.ts';

export interface RetryOptions {
  /** Attempts after the first one. */
  retries: number;
  initial_retry_ms: number;
  max_retry_ms: number;
}

export interface ClusterOptions {
  brokers: string[];
  client_id: string;
  retry: RetryOptions;
  request_timeout_ms: number;
  /** Requests pipelined per broker connection. */
  max_in_flight: number;
  /** TLS options for every broker connection; null or absent for plain TCP. */
  tls?: import('node:tls').ConnectionOptions | null;
  /** SASL login for every broker connection. */
  sasl?: SaslOptions | null;
}

/** Errors after which the cached topics are dropped before a retry: leaders moved or topics changed. */
const TOPICS_STALE_CODES = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
]);

export const RETRY_DEFAULT: RetryOptions = { retries: 5, initial_retry_ms: 100, max_retry_ms: 5_000 };

export interface BrokerAddress {
  node_id: number;
  host: string;
  port: number;
}

export interface PartitionInfo {
  partition: number;
  leader: number;
  leader_epoch: number;
  replicas: number[];
  isr: number[];
}

export interface TopicInfo {
  name: string;
  topic_id: string;
  is_internal: boolean;
  partitions: PartitionInfo[];
}

/** Turns a failure to open a connection into a ConnectionError (retriable). */
function connect_failed(address: BrokerAddress): (error: unknown) => never {
  return (error: unknown) => {
    throw new ConnectionError(`cannot connect to ${address.host}:${address.port}: ${String(error)}`, {
      cause: error,
    });
  };
}

/** A connection with the API versions its broker supports. */
export class BrokerConnection {
  constructor(
    readonly address: BrokerAddress,
    readonly connection: Connection,
    private readonly ranges: ReadonlyMap<number, { min: number; max: number }>,
    /** The broker's finalized features (ApiVersions v3+) and their levels. */
    private readonly features: ReadonlyMap<string, number> = new Map(),
  ) {}

  /** The finalized level of a feature (0 when the broker names none). */
  feature_level(name: string): number {
    return this.features.get(name) ?? 0;
  }

  /** Whether the broker serves `api` at `version`. */
  serves(api: ApiSpec, version: number): boolean {
    const range = this.ranges.get(api.api_key);
    return range !== undefined && range.min <= version && version <= range.max;
  }

  /** The highest version both this SDK (`min`..`max`) and the broker support. */
  version(api: ApiSpec, min: number, max: number): number {
    const range = this.ranges.get(api.api_key);
    const version = range ? Math.min(max, range.max) : -1;
    if (!range || version < Math.max(min, range.min)) {
      throw new UnsupportedApiError(
        `broker ${this.address.host}:${this.address.port} supports no version of ${api.name} in ${min}-${max}`,
      );
    }
    return version;
  }

  /** Sends `body` with the best common version in `min`..`max`; `body` may depend on the version. */
  send<A extends ApiSpec>(
    api: A,
    min: number,
    max: number,
    body: RequestIn<A> | ((version: number) => RequestIn<A>),
  ): Promise<{ version: number; response: ResponseOf<A> }> {
    const version = this.version(api, min, max);
    const value = typeof body === 'function' ? body(version) : body;
    return this.connection.call(api, version, value).then(
      (response) => ({ version, response }),
      (error: unknown) => {
        throw error instanceof SluiceError
          ? error
          : new ConnectionError(`${api.name} to ${this.address.host}:${this.address.port} failed: ${String(error)}`, {
              cause: error,
            });
      },
    );
  }

  /** Like send(), for a request the broker does not answer (Produce with acks 0). */
  send_without_response<A extends ApiSpec>(
    api: A,
    min: number,
    max: number,
    body: RequestIn<A>,
  ): Promise<{ version: number }> {
    const version = this.version(api, min, max);
    return this.connection.send_only(prepare(api, version, body)).then(
      () => ({ version }),
      (error: unknown) => {
        throw new ConnectionError(`${api.name} to ${this.address.host}:${this.address.port} failed: ${String(error)}`, {
          cause: error,
        });
      },
    );
  }

  get closed(): boolean {
    return this.connection.is_closed;
  }
}

function parse_broker(text: string): { host: string; port: number } {
  const at = text.lastIndexOf(':');
  const port = Number(text.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port)) {
    throw new SluiceError(`broker address ${JSON.stringify(text)} is not HOST:PORT`, false);
  }
  return { host: text.slice(0, at), port };
}

export class Cluster {
  private readonly connections = new Map<number, Promise<BrokerConnection>>();
  private bootstrap_connection: Promise<BrokerConnection> | null = null;
  brokers = new Map<number, BrokerAddress>();
  topics = new Map<string, TopicInfo>();
  cluster_id: string | null = null;
  controller_id = -1;
  private closed = false;

  constructor(readonly options: ClusterOptions) {
    if (options.brokers.length === 0) throw new SluiceError('at least one broker address is needed', false);
  }

  private connect(address: BrokerAddress): Promise<Connection> {
    return Connection.connect(address.host, address.port, {
      client_id: this.options.client_id,
      max_in_flight: this.options.max_in_flight,
      request_timeout_ms: this.options.request_timeout_ms,
      tls: this.options.tls ?? null,
    });
  }

  private async open(address: BrokerAddress): Promise<BrokerConnection> {
    const connection = await this.connect(address).catch(connect_failed(address));
    // ApiVersions v3 first; a broker that does not know it answers UNSUPPORTED_VERSION in v0 form.
    let response = await connection
      .call(API_VERSIONS, 3, { client_software_name: 'sluice-sdk', client_software_version: '0.1.0' })
      .catch(() => null);
    if (!response || response.error_code === ErrorCode.UNSUPPORTED_VERSION) {
      if (response === null || connection.is_closed) {
        connection.close();
        return this.open_v0(address);
      }
      response = await connection.call(API_VERSIONS, 0, {}).catch(connect_failed(address));
    }
    return this.ready(address, connection, response, 'ApiVersions');
  }

  /**
   * A broker that closed the connection during ApiVersions v3 (one stopping, or one that does not
   * know v3): a new connection with v0. Its failures are connection errors too, which callers retry
   * (a consumer whose coordinator was killed gave up on the plain error before).
   */
  private async open_v0(address: BrokerAddress): Promise<BrokerConnection> {
    const connection = await this.connect(address).catch(connect_failed(address));
    const response = await connection.call(API_VERSIONS, 0, {}).catch(connect_failed(address));
    return this.ready(address, connection, response, 'ApiVersions v0');
  }

  /** Reads the broker's API ranges and authenticates when SASL is configured. */
  private async ready(
    address: BrokerAddress,
    connection: Connection,
    api_versions: ResponseOf<typeof API_VERSIONS>,
    context: string,
  ): Promise<BrokerConnection> {
    try {
      check_code(api_versions.error_code, context);
      const ranges = new Map<number, { min: number; max: number }>();
      for (const key of api_versions.api_keys) {
        ranges.set(key.api_key, { min: key.min_version, max: key.max_version });
      }
      if (this.options.sasl) await authenticate(connection, ranges, this.options.sasl);
      const features = new Map((api_versions.finalized_features ?? []).map((f) => [f.name, f.max_version_level]));
      return new BrokerConnection(address, connection, ranges, features);
    } catch (error) {
      connection.close();
      throw error;
    }
  }

  /** A connection to any broker: the bootstrap list first, then known brokers. */
  async any(): Promise<BrokerConnection> {
    if (this.closed) throw new SluiceError('the client is disconnected', false);
    const current = this.bootstrap_connection && (await this.bootstrap_connection.catch(() => null));
    if (current && !current.closed) return current;
    let last: unknown = null;
    const candidates = [
      ...this.options.brokers.map(parse_broker).map((b) => ({ node_id: -1, ...b })),
      ...this.brokers.values(),
    ];
    for (const address of candidates) {
      try {
        this.bootstrap_connection = this.open(address);
        return await this.bootstrap_connection;
      } catch (error) {
        last = error;
      }
    }
    this.bootstrap_connection = null;
    throw last instanceof SluiceError
      ? last
      : new ConnectionError(`no broker reachable (${this.options.brokers.join(', ')})`, { cause: last });
  }

  /** The connection to broker `node_id` (opened on first use, reopened after a failure). */
  async node(node_id: number): Promise<BrokerConnection> {
    if (this.closed) throw new SluiceError('the client is disconnected', false);
    const existing = this.connections.get(node_id);
    if (existing) {
      const connection = await existing.catch(() => null);
      if (connection && !connection.closed) return connection;
      this.connections.delete(node_id);
    }
    let address = this.brokers.get(node_id);
    if (!address) {
      await this.refresh_metadata();
      address = this.brokers.get(node_id);
      if (!address) {
        throw new KafkaProtocolError(
          ErrorCode.LEADER_NOT_AVAILABLE,
          `broker ${node_id} is not in the cluster metadata`,
        );
      }
    }
    const opening = this.open(address);
    this.connections.set(node_id, opening);
    return opening;
  }

  /**
   * Refreshes metadata for `topics` (all topics when null). With `allow_auto_create`, the broker
   * may create missing topics. Topic-level errors are returned, not thrown.
   */
  async refresh_metadata(topics: string[] | null = null, allow_auto_create = false): Promise<Map<string, number>> {
    const connection = await this.any();
    const { response } = await connection.send(METADATA, 1, 12, {
      topics: topics === null ? null : topics.map((name) => ({ name, topic_id: ZERO_UUID })),
      allow_auto_topic_creation: allow_auto_create,
      include_topic_authorized_operations: false,
      include_cluster_authorized_operations: false,
    });
    this.brokers = new Map();
    for (const broker of response.brokers) {
      this.brokers.set(broker.node_id, { node_id: broker.node_id, host: broker.host, port: broker.port });
    }
    this.cluster_id = response.cluster_id;
    this.controller_id = response.controller_id;
    const errors = new Map<string, number>();
    for (const topic of response.topics) {
      const name = topic.name;
      // Null only for a topic asked for by id (v12+); this client asks by name.
      if (name === null) continue;
      const code = topic.error_code;
      if (code !== ErrorCode.NONE) {
        errors.set(name, code);
        this.topics.delete(name);
        continue;
      }
      this.topics.set(name, {
        name,
        topic_id: topic.topic_id,
        is_internal: topic.is_internal,
        partitions: topic.partitions
          .map((p) => ({
            partition: p.partition_index,
            leader: p.leader_id,
            leader_epoch: p.leader_epoch,
            replicas: p.replica_nodes,
            isr: p.isr_nodes,
          }))
          .sort((a, b) => a.partition - b.partition),
      });
    }
    return errors;
  }

  /** Metadata of `topic`, fetched (and auto-created when allowed) if not cached. */
  async topic(name: string, allow_auto_create = false): Promise<TopicInfo> {
    const cached = this.topics.get(name);
    if (cached) return cached;
    return this.with_retry(`metadata for ${name}`, async () => {
      const errors = await this.refresh_metadata([name], allow_auto_create);
      const code = errors.get(name);
      if (code !== undefined) throw new KafkaProtocolError(code, `topic ${name}`);
      const info = this.topics.get(name);
      if (!info) throw new KafkaProtocolError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `topic ${name}`);
      return info;
    });
  }

  /** The connection to the controller (topic administration). */
  async controller(): Promise<BrokerConnection> {
    if (this.controller_id < 0) await this.refresh_metadata([]);
    return this.node(this.controller_id);
  }

  /** Runs `work`, retrying retriable errors with exponential backoff and jitter. */
  async with_retry<T>(_what: string, work: (attempt: number) => Promise<T>): Promise<T> {
    const { retries, initial_retry_ms, max_retry_ms } = this.options.retry;
    for (let attempt = 0; ; attempt++) {
      try {
        return await work(attempt);
      } catch (error) {
        if (!is_retriable(error) || attempt >= retries || this.closed) throw error;
        if (error instanceof KafkaProtocolError && TOPICS_STALE_CODES.has(error.code)) {
          this.topics.clear(); // leaders moved or topics changed: fetch them again
        }
        const backoff = Math.min(max_retry_ms, initial_retry_ms * 2 ** attempt);
        await new Promise((resolve) => setTimeout(resolve, backoff * (0.8 + Math.random() * 0.4)));
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.connections.values(), ...(this.bootstrap_connection ? [this.bootstrap_connection] : [])];
    this.connections.clear();
    this.bootstrap_connection = null;
    for (const pending of all) (await pending.catch(() => null))?.connection.close();
  }
}
