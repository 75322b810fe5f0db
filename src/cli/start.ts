// `sluice start`: settings from flags, SLUICE_* environment variables and an optional JSON config
// file (in that order of precedence), then a broker until SIGTERM or SIGINT.
import type { ClusterOptions } from '../cluster/cluster_node.ts';
import type { SaslOptions } from '../protocol/sasl/client_login.ts';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { start_broker } from '../compose/start_broker.ts';
import { start_heap_growth } from './heap_growth.ts';
import { stop_on_uncaught_errors } from '../core/invariants.ts';
import { console_handler } from '../server/http/console_static.ts';
import type { DurabilityPolicy } from '../storage/index.ts';
import { CredentialStore, read_users_file } from '../broker/credentials.ts';
import { SHARE_GROUP_SETTINGS_DEFAULT, type ShareGroupSettings } from '../broker/queues/group_config.ts';

export interface StartFlags {
  data?: string;
  kafka?: string;
  http?: string;
  amqp?: string;
  nodeId?: string;
  etcd?: string;
  advertise?: string;
  config?: string;
  durability?: string;
  partitions?: string;
  autoCreate?: boolean;
  logLevel?: string;
  saslUsers?: string;
}

const SETTINGS = ['data', 'kafka', 'http', 'amqp', 'nodeId', 'etcd', 'advertise', 'durability', 'partitions', 'logLevel', 'saslUsers'] as const;

function env_name(setting: string): string {
  return `SLUICE_${setting.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;
}

/** Merges flags over environment over config file over defaults. */
export function resolve_settings(flags: StartFlags, env: NodeJS.ProcessEnv = process.env): Required<Omit<StartFlags, 'config' | 'etcd' | 'saslUsers'>> & { etcd?: string; saslUsers?: string; shareGroups?: unknown; delayed?: unknown; cluster?: unknown } {
  const config_file = flags.config ?? env.SLUICE_CONFIG;
  const file: Record<string, unknown> = config_file ? (JSON.parse(fs.readFileSync(config_file, 'utf8')) as Record<string, unknown>) : {};
  const pick = (setting: (typeof SETTINGS)[number], fallback: string | undefined) =>
    (flags[setting] as string | undefined) ?? env[env_name(setting)] ?? (file[setting] as string | undefined) ?? fallback;
  const auto_env = env.SLUICE_AUTO_CREATE;
  return {
    data: pick('data', './sluice-data')!,
    kafka: pick('kafka', '127.0.0.1:9092')!,
    http: pick('http', '127.0.0.1:8080')!,
    amqp: pick('amqp', '127.0.0.1:5672')!,
    nodeId: pick('nodeId', '1')!,
    etcd: pick('etcd', undefined),
    advertise: pick('advertise', '')!,
    durability: pick('durability', 'fsync')!,
    partitions: pick('partitions', '1')!,
    logLevel: pick('logLevel', 'info')!,
    saslUsers: pick('saslUsers', undefined),
    autoCreate: flags.autoCreate === false ? false : auto_env !== undefined ? auto_env !== 'false' : (file.autoCreate as boolean | undefined) ?? true,
    shareGroups: file.shareGroups,
    delayed: file.delayed,
    cluster: file.cluster,
  };
}

/** `--http`: HOST:PORT, or "off" for no HTTP listener. */
export function parse_http(text: string): { host: string; port: number } | null {
  const value = String(text).trim(); // a config file may hold a non-string
  if (value.toLowerCase() === 'off') return null;
  return parse_host_port(value, '--http');
}

function is_loopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

export function parse_host_port(text: string, what: string): { host: string; port: number } {
  const at = text.lastIndexOf(':');
  const host = text.slice(0, at).replace(/^\[|\]$/g, '');
  const port = Number(text.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${what}: expected HOST:PORT, got ${JSON.stringify(text)}`);
  return { host, port };
}

/** Share-group settings from the config file's "shareGroups" object; unknown keys are refused. */
export function parse_share_groups(value: unknown): Partial<ShareGroupSettings> | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('config shareGroups: expected an object');
  const input = value as Record<string, unknown>;
  const number = (name: string, min: number, max: number): number | undefined => {
    const v = input[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) throw new Error(`config shareGroups.${name}: an integer from ${min} to ${max}`);
    return v;
  };
  const known = ['recordLockDurationMs', 'deliveryCountLimit', 'recordsInFlightMax', 'retryBackoffMs', 'sessionTimeoutMs', 'heartbeatIntervalMs', 'autoOffsetReset'];
  for (const key of Object.keys(input)) if (!known.includes(key)) throw new Error(`config shareGroups.${key}: unknown setting (known: ${known.join(', ')})`);
  const backoff = input.retryBackoffMs;
  if (backoff !== undefined && (!Array.isArray(backoff) || backoff.some((b) => typeof b !== 'number' || !Number.isInteger(b) || b < 0))) {
    throw new Error('config shareGroups.retryBackoffMs: a list of non-negative integers (milliseconds)');
  }
  const reset = input.autoOffsetReset;
  if (reset !== undefined && reset !== 'earliest' && reset !== 'latest') throw new Error('config shareGroups.autoOffsetReset: "earliest" or "latest"');
  const defaults = SHARE_GROUP_SETTINGS_DEFAULT;
  return {
    session_timeout_ms: number('sessionTimeoutMs', 1_000, 3_600_000) ?? defaults.session_timeout_ms,
    heartbeat_interval_ms: number('heartbeatIntervalMs', 100, 600_000) ?? defaults.heartbeat_interval_ms,
    auto_offset_reset: (reset as 'earliest' | 'latest' | undefined) ?? defaults.auto_offset_reset,
    partition: {
      record_lock_duration_ms: number('recordLockDurationMs', 100, 3_600_000) ?? defaults.partition.record_lock_duration_ms,
      delivery_count_limit: number('deliveryCountLimit', 1, 1_000) ?? defaults.partition.delivery_count_limit,
      records_in_flight_max: number('recordsInFlightMax', 1, 100_000) ?? defaults.partition.records_in_flight_max,
      retry_backoff_ms: (backoff as number[] | undefined) ?? defaults.partition.retry_backoff_ms,
    },
  };
}

/** Delayed-delivery settings from the config file's "delayed" object: {"maxDelayMs": N}. */
export function parse_delayed(value: unknown): { delay_max_ms: number } | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('config delayed: expected an object');
  const input = value as Record<string, unknown>;
  for (const key of Object.keys(input)) if (key !== 'maxDelayMs') throw new Error(`config delayed.${key}: unknown setting (known: maxDelayMs)`);
  const max = input.maxDelayMs;
  if (max === undefined) return undefined;
  if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 0) throw new Error('config delayed.maxDelayMs: a whole number of milliseconds >= 0');
  return { delay_max_ms: max };
}

const CLUSTER_KEYS = ['prefix', 'leaseTtlMs', 'replicationFactor', 'replicaLagTimeMaxMs', 'leaderRebalanceIntervalMs', 'interBrokerUser'] as const;

/** The `cluster` object of the config file, with the endpoints from --etcd. */
type ClusterSettings = ClusterOptions & { inter_broker_user?: string };

export function parse_cluster(etcd: string, value: unknown): ClusterSettings {
  const endpoints = etcd.split(',').map((url) => url.trim()).filter((url) => url !== '');
  for (const url of endpoints) if (!/^https?:\/\/[^/]+$/.test(url)) throw new Error(`--etcd: expected http://HOST:PORT endpoints, got ${JSON.stringify(url)}`);
  const input = (value ?? {}) as Record<string, unknown>;
  if (typeof input !== 'object' || Array.isArray(input)) throw new Error('config cluster: expected an object');
  for (const key of Object.keys(input)) {
    if (!(CLUSTER_KEYS as readonly string[]).includes(key)) throw new Error(`config cluster.${key}: unknown setting (known: ${CLUSTER_KEYS.join(', ')})`);
  }
  const whole = (key: string, min: number): number | undefined => {
    const v = input[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) throw new Error(`config cluster.${key}: a whole number >= ${min}`);
    return v;
  };
  if (input.prefix !== undefined && typeof input.prefix !== 'string') throw new Error('config cluster.prefix: a string');
  if (input.interBrokerUser !== undefined && (typeof input.interBrokerUser !== 'string' || input.interBrokerUser === '')) throw new Error('config cluster.interBrokerUser: a user name');
  const lag = whole('replicaLagTimeMaxMs', 100);
  return {
    etcd: endpoints,
    prefix: input.prefix as string | undefined,
    lease_ttl_ms: whole('leaseTtlMs', 1000),
    replication_factor_default: whole('replicationFactor', 1),
    leader_rebalance_interval_ms: whole('leaderRebalanceIntervalMs', 0),
    replicas: lag === undefined ? undefined : { replica_lag_time_max_ms: lag },
    inter_broker_user: input.interBrokerUser as string | undefined,
  };
}

/**
 * How brokers log in to each other. With SASL on the listeners they must (followers fetch through
 * the same listener as clients) as cluster.interBrokerUser, a user of the SASL users file whose
 * password is read from it; without SASL they need no login.
 */
export function inter_broker_login(cluster: ClusterSettings, users_file: string | undefined): SaslOptions | null {
  const user = cluster.inter_broker_user;
  if (users_file === undefined) {
    if (user !== undefined) throw new Error('config cluster.interBrokerUser: only with --sasl-users (the listeners then require SASL)');
    return null;
  }
  if (user === undefined) throw new Error('--sasl-users in a cluster: set config cluster.interBrokerUser to a user of that file; brokers log in as it to replicate');
  const password = read_users_file(users_file)[user];
  if (typeof password !== 'string') throw new Error(`config cluster.interBrokerUser: ${JSON.stringify(user)} is not a user of ${users_file}`);
  return { mechanism: 'scram-sha-512', username: user, password };
}

export function parse_durability(text: string): DurabilityPolicy {
  if (text === 'fsync') return { kind: 'fsync' };
  if (text === 'none') return { kind: 'none' };
  const match = /^interval:(\d+)$/.exec(text);
  if (match) return { kind: 'interval', interval_ms: Number(match[1]) };
  throw new Error(`--durability: expected fsync, interval:MS or none, got ${JSON.stringify(text)}`);
}

export async function run_start(flags: StartFlags): Promise<void> {
  const settings = resolve_settings(flags);
  const cluster = settings.etcd ? parse_cluster(settings.etcd, settings.cluster) : undefined;
  const logger = pino({ level: settings.logLevel }, pino.destination(2));
  const durability = parse_durability(settings.durability);
  if (durability.kind !== 'fsync') logger.warn({ durability }, 'acknowledgements do not wait for fsync: see docs/guarantees.md');
  const kafka = parse_host_port(settings.kafka, '--kafka');
  const http = parse_http(settings.http);
  const advertise = settings.advertise ? parse_host_port(settings.advertise, '--advertise') : undefined;
  const node_id = Number(settings.nodeId);
  const credentials = settings.saslUsers ? await CredentialStore.from_file(path.resolve(settings.saslUsers)) : null;
  if (cluster) cluster.inter_broker_sasl = inter_broker_login(cluster, settings.saslUsers ? path.resolve(settings.saslUsers) : undefined);
  if (credentials && http && !is_loopback(http.host)) {
    logger.warn({ http: `${http.host}:${http.port}` }, 'the HTTP admin API has no authentication: with SASL on the Kafka listener, keep it on a loopback address');
  }
  start_heap_growth();
  stop_on_uncaught_errors(logger);
  const running = await start_broker({
    data_dir: path.resolve(settings.data),
    node_id,
    durability,
    kafka,
    advertise,
    default_partitions: Number(settings.partitions),
    auto_create_topics: settings.autoCreate,
    credentials,
    share_groups: parse_share_groups(settings.shareGroups),
    delayed: parse_delayed(settings.delayed),
    cluster,
    http,
    console_handler,
    logger,
  });
  const address = running.kafka_address;
  const http_address = running.http_address ? `${running.http_address.host}:${running.http_address.port}` : 'off';
  process.stdout.write(
    `sluice ready kafka=${address.host}:${address.port} http=${http_address} data=${path.resolve(settings.data)} node=${node_id} durability=${settings.durability}` +
      (credentials ? ` sasl=${credentials.size} users` : '') +
      (cluster ? ` etcd=${cluster.etcd.join(',')}` : '') +
      ` (amqp ${settings.amqp}: not available yet)\n`,
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    running.close().then(
      () => {
        process.stdout.write('sluice stopped\n');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error({ error: String(error) }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
