// `sluice start`: settings from flags, SLUICE_* environment variables and an optional JSON config
// file (in that order of precedence), then a broker until SIGTERM or SIGINT. Which settings there
// are, their name on each of those surfaces, their defaults and checks: the settings table
// (core/settings.ts); this file only merges the surfaces and hands the values to the broker.
import { parse_listeners, type KafkaListenerSpec } from '../compose/kafka_listeners.ts';
import type { ClusterOptions } from '../cluster/cluster_node.ts';
import type { SaslOptions } from '../protocol/sasl/client_login.ts';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { type RunningBroker, start_broker } from '../compose/start_broker.ts';
import { start_heap_growth } from './heap_growth.ts';
import { stop_on_uncaught_errors } from '../core/invariants.ts';
import {
  type Setting,
  SETTING_GROUPS,
  camel_case,
  config_file_keys,
  file_group_name,
  host_port_of,
  read_config_group,
  type SettingGroup,
  setting,
  settings_of,
  url_list_of,
} from '../core/settings.ts';
import { read_json, read_text, refusal, text_of, type SettingValue, type ValueForm } from '../core/setting_values.ts';
import { console_handler } from '../server/http/console_static.ts';
import type { DurabilityPolicy } from '../storage/index.ts';
import { CredentialStore, read_users_file } from '../broker/credentials.ts';
import { share_group_settings, type ShareGroupSettings } from '../broker/queues/group_config.ts';
import type { GuestAccess } from '../server/amqp/authenticate.ts';
import type { ClientAuth, TlsFiles } from '../server/tls_files.ts';
import { dev_tls, type DevTls } from '../server/dev_tls.ts';
import { principals_of } from '../core/security_settings.ts';

/**
 * The options commander parsed, named by the camelCase of each setting's key (`nodeId`): text, or
 * false for `--no-auto-create` (true is commander's default for it, so it means "not given").
 */
export type StartFlags = Readonly<Record<string, string | boolean | undefined>>;

/**
 * The top-level settings after merging, each as text (what its flag would say; booleans as
 * booleans; absent when it has no value), and the config file's groups as given.
 */
export interface ResolvedSettings {
  data: string;
  kafka: string;
  http: string;
  amqp: string;
  amqpGuest: string;
  amqpDiskFreeMinBytes: string;
  nodeId: string;
  etcd?: string;
  advertise?: string;
  listeners?: string;
  advertisedListeners?: string;
  config?: string;
  durability: string;
  partitions: string;
  transactionMaxTimeoutMs: string;
  transactionalIdExpirationMs: string;
  transactionChecksMax: string;
  cleanerIntervalMs: string;
  groupConsumerSessionTimeoutMs: string;
  groupConsumerHeartbeatIntervalMs: string;
  cleanerMemoryBytesMax: string;
  cleanerIoBytesPerSMax: string;
  transactionVersion: string;
  autoCreate: boolean;
  logLevel: string;
  saslUsers?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsCa?: string;
  tlsClientAuth: string;
  devTls: boolean;
  authorization: boolean;
  sasl: boolean;
  superUsers?: string;
  connectionsPerIpMax: string;
  connectionsPerUserMax: string;
  shareGroups?: unknown;
  delayed?: unknown;
  cluster?: unknown;
  /** Deprecated names used and config-file keys nobody reads (logged once there is a logger). */
  warnings: string[];
  /** The settings given (not defaulted), as text by canonical name: what DescribeConfigs reports. */
  given: Record<string, string>;
}

interface Given {
  raw: unknown;
  where: string;
  form: ValueForm;
}

interface Sources {
  flags: StartFlags;
  env: NodeJS.ProcessEnv;
  file: Record<string, unknown>;
  warnings: string[];
}

/** Where a top-level setting is given first: its flag, its environment variable, the config file. */
function given(s: Setting, { flags, env, file, warnings }: Sources): Given | undefined {
  const flag = flags[camel_case(s.key)];
  const flag_given = flag !== undefined && !(typeof flag === 'boolean' && flag === s.default);
  if (s.names.flag !== undefined && flag_given) return { raw: flag, where: s.names.flag, form: 'text' };
  const names = (surface: 'env' | 'file') => [
    ...(s.names[surface] === undefined ? [] : [{ name: s.names[surface], deprecated: false }]),
    ...(s.aliases ?? []).filter((a) => a.surface === surface).map((a) => ({ name: a.name, deprecated: true })),
  ];
  const found = (surface: 'env' | 'file', source: Record<string, unknown>): Given | undefined => {
    const name = names(surface).find((n) => source[n.name] !== undefined);
    if (!name) return undefined;
    if (name.deprecated) warnings.push(`${name.name} is deprecated: use ${s.names[surface]}`);
    const where = surface === 'file' ? `config ${name.name}` : name.name;
    return { raw: source[name.name], where, form: surface === 'file' ? 'json' : 'text' };
  };
  return found('env', env) ?? found('file', file);
}

/** The value given, or null for none (an empty text for a setting that has no default). */
function value_of(s: Setting, { raw, where, form }: Given): SettingValue | null {
  if (raw === '' && s.default === null) return null;
  const value =
    typeof raw === 'boolean' && s.type.kind === 'boolean'
      ? raw
      : form === 'text'
        ? read_text(s.type, String(raw))
        : read_json(s.type, raw);
  if (value === undefined) throw new Error(refusal(where, s.type, raw, form));
  return value;
}

function read_config_file(file_name: string | undefined): Record<string, unknown> {
  if (!file_name) return {};
  const file: unknown = JSON.parse(fs.readFileSync(file_name, 'utf8'));
  if (typeof file !== 'object' || file === null || Array.isArray(file)) {
    throw new Error(`${file_name}: expected a JSON object`);
  }
  return file as Record<string, unknown>;
}

/** The config file's keys that are no setting's (they are ignored, as they always were). */
function unknown_keys(file: Record<string, unknown>): string[] {
  const known = [...config_file_keys(null).keys(), ...SETTING_GROUPS.map(file_group_name)];
  return Object.keys(file)
    .filter((key) => !known.includes(key))
    .map((key) => `config ${key}: unknown setting, ignored (known: ${known.join(', ')})`);
}

/**
 * The settings a group of the config file gives, as text by canonical name. The group is read again
 * where it is parsed (with its warnings); one it cannot read is refused there, and gives none here.
 */
function group_given(group: SettingGroup, value: unknown): Record<string, string> {
  const texts: Record<string, string> = {};
  let values: Map<string, SettingValue> | undefined;
  try {
    values = read_config_group(group, value);
  } catch {
    return texts;
  }
  for (const [key, setting_value] of values ?? []) texts[`${group}.${key}`] = text_of(setting_value);
  return texts;
}

/** Merges flags over environment over config file over defaults; refuses a value its setting refuses. */
export function resolve_settings(flags: StartFlags, env: NodeJS.ProcessEnv = process.env): ResolvedSettings {
  const sources: Sources = { flags, env, file: {}, warnings: [] };
  const config = setting('config');
  const config_given = given(config, sources);
  sources.file = read_config_file(config_given ? String(value_of(config, config_given) ?? '') : undefined);
  sources.warnings.push(...unknown_keys(sources.file));
  const given_texts: Record<string, string> = {};
  const resolved: Record<string, unknown> = { warnings: sources.warnings, given: given_texts };
  for (const s of settings_of(null)) {
    const from = given(s, sources);
    const value = from ? value_of(s, from) : s.default;
    if (value !== null) resolved[camel_case(s.key)] = typeof value === 'boolean' ? value : text_of(value);
    if (from && value !== null && s.name !== 'config') given_texts[s.name] = text_of(value);
  }
  for (const group of SETTING_GROUPS) {
    resolved[file_group_name(group)] = sources.file[file_group_name(group)];
    Object.assign(given_texts, group_given(group, sources.file[file_group_name(group)]));
  }
  return resolved as unknown as ResolvedSettings;
}

/** `--amqp`, `--amqp-guest` and `--amqp-disk-free-min-bytes`. */
function amqp_listener(settings: ResolvedSettings) {
  const listener = parse_listener(settings.amqp, '--amqp');
  return (
    listener && {
      ...listener,
      guest: settings.amqpGuest as GuestAccess,
      disk_free_min_bytes: Number(settings.amqpDiskFreeMinBytes),
    }
  );
}

/**
 * `--tls-cert` and `--tls-key`: both or neither (paths resolved here); `--tls-client-auth` needs
 * `--tls-ca`. `--dev-tls` makes all three in the data directory instead.
 */
export function tls_files(settings: ResolvedSettings, advertised: string[] = []): TlsFiles | DevTls | null {
  const client_auth = settings.tlsClientAuth as ClientAuth;
  if (settings.devTls) {
    if (settings.tlsCert || settings.tlsKey || settings.tlsCa)
      throw new Error('--dev-tls makes its own certificates: leave out --tls-cert, --tls-key and --tls-ca');
    const hosts = advertised.filter((host) => host !== '0.0.0.0' && host !== '::');
    return { ...dev_tls(path.resolve(settings.data), hosts, Date.now()), client_auth };
  }
  if (!settings.tlsCert && !settings.tlsKey) {
    if (settings.tlsCa || client_auth !== 'none')
      throw new Error('--tls-ca and --tls-client-auth need --tls-cert and --tls-key (or --dev-tls)');
    return null;
  }
  if (!settings.tlsCert || !settings.tlsKey) throw new Error('--tls-cert and --tls-key go together');
  if (client_auth !== 'none' && !settings.tlsCa)
    throw new Error(`--tls-client-auth ${client_auth} needs --tls-ca: the authorities that sign client certificates`);
  return {
    cert_file: path.resolve(settings.tlsCert),
    key_file: path.resolve(settings.tlsKey),
    ca_file: settings.tlsCa ? path.resolve(settings.tlsCa) : null,
    client_auth,
  };
}

/** What a person trying --dev-tls needs to know: which CA to trust, and a client certificate. */
function dev_tls_line(tls: TlsFiles | DevTls | null): string {
  if (!tls || !('client_cert_file' in tls)) return '';
  return (
    `sluice dev-tls: clients trust ${tls.ca_file}; a client certificate: ${tls.client_cert_file} ` +
    `(key ${tls.client_key_file})\n`
  );
}

/** `--http`, `--amqp`: HOST:PORT, or "off" for no such listener. */
function parse_listener(text: string, flag: string): { host: string; port: number } | null {
  const value = String(text).trim(); // a config file may hold a non-string
  if (value.toLowerCase() === 'off') return null;
  return parse_host_port(value, flag);
}

export function parse_http(text: string): { host: string; port: number } | null {
  return parse_listener(text, '--http');
}

function is_loopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

export function parse_host_port(text: string, what: string): { host: string; port: number } {
  const address = host_port_of(text);
  if (!address) throw new Error(`${what}: expected HOST:PORT, got ${JSON.stringify(text)}`);
  return address;
}

/** Share-group settings from the config file's "shareGroups" object (the table's defaults for the rest). */
export function parse_share_groups(value: unknown, warn?: (message: string) => void): ShareGroupSettings | undefined {
  const values = read_config_group('share_groups', value, warn);
  return values && share_group_settings(values);
}

/** Delayed-delivery settings from the config file's "delayed" object: {"delayMaxMs": N}. */
export function parse_delayed(value: unknown, warn?: (message: string) => void): { delay_max_ms: number } | undefined {
  const max = read_config_group('delayed', value, warn)?.get('delay_max_ms');
  return max === undefined ? undefined : { delay_max_ms: max as number };
}

/** The `cluster` object of the config file, with the endpoints from --etcd. */
type ClusterSettings = ClusterOptions & { inter_broker_user?: string };

export function parse_cluster(etcd: string, value: unknown, warn?: (message: string) => void): ClusterSettings {
  const endpoints = setting('etcd');
  if (read_text(endpoints.type, etcd) === undefined) {
    throw new Error(refusal(endpoints.names.flag!, endpoints.type, etcd, 'text'));
  }
  const values = read_config_group('cluster', value, warn) ?? new Map<string, SettingValue>();
  const number = (key: string) => values.get(key) as number | undefined;
  const lag = number('replica_lag_time_max_ms');
  return {
    etcd: url_list_of(etcd),
    prefix: values.get('prefix') as string | undefined,
    lease_ttl_ms: number('lease_ttl_ms'),
    replication_factor_default: number('replication_factor'),
    leader_rebalance_interval_ms: number('leader_rebalance_interval_ms'),
    replicas: lag === undefined ? undefined : { replica_lag_time_max_ms: lag },
    inter_broker_user: values.get('inter_broker_user') as string | undefined,
  };
}

/**
 * How brokers log in to each other. With SASL on the listeners they must (followers fetch through
 * the same listener as clients) as cluster.interBrokerUser, a user of the SASL users file whose
 * password is read from it; without SASL they need no login.
 */
export function inter_broker_login(cluster: ClusterSettings, users_file: string | undefined): SaslOptions | null {
  const user = cluster.inter_broker_user;
  const name = `config ${setting('cluster.inter_broker_user').names.file}`;
  const sasl_users = setting('sasl_users').names.flag;
  if (users_file === undefined) {
    if (user !== undefined) throw new Error(`${name}: only with ${sasl_users} (the listeners then require SASL)`);
    return null;
  }
  if (user === undefined) {
    const why = 'brokers log in as it to replicate';
    throw new Error(`${sasl_users} in a cluster: set ${name} to a user of that file; ${why}`);
  }
  const password = read_users_file(users_file)[user];
  if (typeof password !== 'string') throw new Error(`${name}: ${JSON.stringify(user)} is not a user of ${users_file}`);
  return { mechanism: 'scram-sha-512', username: user, password };
}

export function parse_durability(text: string): DurabilityPolicy {
  if (text === 'fsync') return { kind: 'fsync' };
  if (text === 'none') return { kind: 'none' };
  const match = /^interval:(\d+)$/.exec(text);
  if (match) return { kind: 'interval', interval_ms: Number(match[1]) };
  throw new Error(`--durability: expected fsync, interval:MS or none, got ${JSON.stringify(text)}`);
}

/** `--listeners` and `--advertised-listeners`, which take the place of `--kafka` and `--advertise`. */
function listeners_of(settings: ResolvedSettings): KafkaListenerSpec[] | undefined {
  if (!settings.listeners) {
    if (settings.advertisedListeners) throw new Error('--advertised-listeners goes with --listeners');
    return undefined;
  }
  if (settings.advertise) throw new Error('--advertise goes with --kafka; with --listeners use --advertised-listeners');
  return parse_listeners(settings.listeners, settings.advertisedListeners ?? null);
}

function ready_line(settings: ResolvedSettings, running: RunningBroker, extra: string): string {
  const address = running.kafka_address;
  const listeners = running.kafka_listeners.map((l) => `${l.name}://${l.address.host}:${l.address.port}`);
  const http = running.http_address ? `${running.http_address.host}:${running.http_address.port}` : 'off';
  const amqp = running.amqp_address ? `${running.amqp_address.host}:${running.amqp_address.port}` : 'off';
  const node = `node=${Number(settings.nodeId)} durability=${settings.durability}`;
  return (
    `sluice ready kafka=${address.host}:${address.port} http=${http} amqp=${amqp} ` +
    `data=${path.resolve(settings.data)} ${node}${extra}` +
    (listeners.length > 1 ? ` listeners=${listeners.join(',')}\n` : '\n')
  );
}

function stop_on_signals(running: RunningBroker, logger: pino.Logger): void {
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

/** The transaction coordinator's, the log cleaner's and KIP-848 consumer groups' settings. */
function log_settings(settings: ResolvedSettings) {
  return {
    groups: {
      consumer: {
        session_timeout_ms: Number(settings.groupConsumerSessionTimeoutMs),
        heartbeat_interval_ms: Number(settings.groupConsumerHeartbeatIntervalMs),
      },
    },
    transactions: {
      timeout_max_ms: Number(settings.transactionMaxTimeoutMs),
      id_expiration_ms: Number(settings.transactionalIdExpirationMs),
      checks_max: Number(settings.transactionChecksMax),
      version: Number(settings.transactionVersion),
    },
    cleaner: {
      interval_ms: Number(settings.cleanerIntervalMs),
      memory_bytes_max: Number(settings.cleanerMemoryBytesMax),
      io_bytes_per_s_max: Number(settings.cleanerIoBytesPerSMax),
    },
  };
}

export async function run_start(flags: StartFlags): Promise<void> {
  const settings = resolve_settings(flags);
  const warnings = settings.warnings;
  const warn = (message: string) => warnings.push(message);
  const cluster = settings.etcd ? parse_cluster(settings.etcd, settings.cluster, warn) : undefined;
  const share_groups = parse_share_groups(settings.shareGroups, warn);
  const delayed = parse_delayed(settings.delayed, warn);
  const logger = pino({ level: settings.logLevel }, pino.destination(2));
  for (const warning of warnings) logger.warn(warning);
  const durability = parse_durability(settings.durability);
  if (durability.kind !== 'fsync') {
    logger.warn({ durability }, 'acknowledgements do not wait for fsync: see docs/guarantees.md');
  }
  const http = parse_http(settings.http);
  const users_file = settings.saslUsers ? path.resolve(settings.saslUsers) : undefined;
  const credentials = users_file ? await CredentialStore.from_file(users_file) : null;
  if (cluster && settings.sasl && !users_file)
    throw new Error('--sasl in a cluster needs --sasl-users: brokers log in to each other as a user of that file');
  if (cluster) cluster.inter_broker_sasl = inter_broker_login(cluster, users_file);
  if (http && !is_loopback(http.host) && !(settings.tlsCert || settings.devTls)) {
    const message = credentials
      ? 'the HTTP admin API takes HTTP Basic logins: without TLS their passwords cross the network in the clear'
      : 'the HTTP admin API has no users (--sasl-users): anyone who reaches it may change anything';
    logger.warn({ http: `${http.host}:${http.port}` }, message);
  }
  const kafka = parse_host_port(settings.kafka, '--kafka');
  const advertise = settings.advertise ? parse_host_port(settings.advertise, '--advertise') : undefined;
  const kafka_listeners = listeners_of(settings);
  const hosts = kafka_listeners
    ? kafka_listeners.flatMap((spec) => [spec.host, ...(spec.advertised ? [spec.advertised.host] : [])])
    : [kafka.host, ...(advertise ? [advertise.host] : [])];
  const tls = tls_files(settings, hosts);
  start_heap_growth();
  stop_on_uncaught_errors(logger);
  const running = await start_broker({
    data_dir: path.resolve(settings.data),
    node_id: Number(settings.nodeId),
    durability,
    kafka,
    advertise,
    kafka_listeners,
    default_partitions: Number(settings.partitions),
    auto_create_topics: settings.autoCreate,
    ...log_settings(settings),
    credentials,
    tls,
    acls: { enabled: settings.authorization, super_users: principals_of(settings.superUsers ?? '') },
    sasl: settings.sasl,
    client_limits: {
      per_ip_max: Number(settings.connectionsPerIpMax),
      per_user_max: Number(settings.connectionsPerUserMax),
    },
    share_groups,
    delayed,
    cluster,
    http,
    amqp: amqp_listener(settings),
    console_handler,
    logger,
    settings_given: settings.given,
  });
  // log_level is a dynamic broker config (sluice.log_level): set while the broker runs, it applies at once.
  const apply_log_level = () => (logger.level = running.broker.configs.setting_value('log_level'));
  running.broker.configs.on_change(apply_log_level);
  apply_log_level();
  const extra =
    (tls ? ` tls${settings.tlsClientAuth === 'none' ? '' : `=mtls-${settings.tlsClientAuth}`}` : '') +
    (credentials ? ` sasl=${credentials.size} users` : '') +
    (settings.authorization ? ' authorization' : '') +
    (cluster ? ` etcd=${cluster.etcd.join(',')}` : '');
  process.stdout.write(dev_tls_line(tls) + ready_line(settings, running, extra));
  stop_on_signals(running, logger);
}
