// The broker's settings, one entry each: every `sluice start` setting, the broker-wide share-group
// defaults (per-group ones too: Kafka group configs), delayed delivery and the cluster. Each has one
// canonical name (snake_case, `share_groups.record_lock_duration_ms` in a group) from which its name
// on every surface that has it is derived:
//
//   config file   camelCase of the name           shareGroups.recordLockDurationMs, nodeId
//   environment   SLUICE_ + UPPER_SNAKE            SLUICE_NODE_ID        (top-level settings only)
//   CLI flag      --kebab-case                     --node-id             (top-level settings only;
//                                                  --no-auto-create for a flag that is on by default)
//   HTTP API      the name within its group        record_lock_duration_ms
//   Kafka         given in the entry (Kafka's own names are fixed), for per-group share settings
//
// A spelling in use before a name was derived stays accepted as an alias, recorded with its entry.
// `sluice start` (cli/start.ts), the group configs (broker/queues/group_config.ts), the HTTP API
// and docs/settings.md (scripts/docs.ts) read this table; values are read by setting_values.ts.
import { PARTITIONS_MAX } from './names.ts';
import { read_json, refusal, type SettingValue, type TextFormat } from './setting_values.ts';
import { CLI, choice, integer, ms, text, type SettingAlias, type SettingSpec } from './setting_spec.ts';
import { SECURITY_SETTINGS } from './security_settings.ts';
import { BACKGROUND_SETTINGS } from './background_settings.ts';

export type { SettingAlias } from './setting_spec.ts';

export type SettingGroup = 'share_groups' | 'delayed' | 'cluster';
export type Surface = 'file' | 'env' | 'flag' | 'http' | 'kafka';

export interface Setting extends SettingSpec {
  readonly group: SettingGroup | null;
  /** The canonical name: `key`, or `group.key`. */
  readonly name: string;
  /** Its name on each surface that has it. */
  readonly names: Readonly<Partial<Record<Surface, string>>>;
}

// ---- Derivations --------------------------------------------------------------------------------

/** snake_case to camelCase: `record_lock_duration_ms` → `recordLockDurationMs`. */
export function camel_case(snake: string): string {
  return snake.replace(/_([a-z0-9])/g, (_match, c: string) => c.toUpperCase());
}

export function env_name(key: string): string {
  return `SLUICE_${key.toUpperCase()}`;
}

/** `--node-id`; a boolean that is on by default is turned off: `--no-auto-create`. */
export function flag_name(key: string, off = false): string {
  return `--${off ? 'no-' : ''}${key.replace(/_/g, '-')}`;
}

/** The config file's name of a group: `shareGroups`. */
export function file_group_name(group: SettingGroup): string {
  return camel_case(group);
}

function derive(group: SettingGroup | null, spec: SettingSpec): Setting {
  if (group !== null && (spec.on.includes('env') || spec.on.includes('flag'))) {
    throw new Error(`${group}.${spec.key}: only top-level settings have flags and environment variables`);
  }
  const names: Partial<Record<Surface, string>> = {};
  const file_key = camel_case(spec.key);
  if (spec.on.includes('file')) names.file = group ? `${file_group_name(group)}.${file_key}` : file_key;
  if (spec.on.includes('env')) names.env = env_name(spec.key);
  if (spec.on.includes('flag')) names.flag = flag_name(spec.key, spec.type.kind === 'boolean' && spec.default === true);
  if (spec.on.includes('http')) names.http = spec.key;
  if (spec.kafka !== undefined) names.kafka = spec.kafka;
  return { ...spec, group, name: group ? `${group}.${spec.key}` : spec.key, names };
}

// ---- Value formats ------------------------------------------------------------------------------

/** HOST:PORT (the host may be a bracketed IPv6 address), or null. */
export function host_port_of(text: string): { host: string; port: number } | null {
  const at = text.lastIndexOf(':');
  const host = text.slice(0, at).replace(/^\[|\]$/g, '');
  const port = Number(text.slice(at + 1));
  if (at <= 0 || !Number.isInteger(port) || port < 0 || port > 65535) return null;
  return { host, port };
}

/** The endpoints of a comma-separated list (empty entries dropped). */
export function url_list_of(text: string): string[] {
  return text
    .split(',')
    .map((url) => url.trim())
    .filter((url) => url !== '');
}

const HOST_PORT: TextFormat = { shape: 'HOST:PORT', pattern: true, test: (t) => host_port_of(t) !== null };
const HOST_PORT_OR_OFF: TextFormat = {
  shape: 'HOST:PORT or off',
  pattern: true,
  test: (t) => t.trim().toLowerCase() === 'off' || host_port_of(t.trim()) !== null,
};
const GUEST_ACCESS: TextFormat = {
  shape: 'loopback, anywhere or off',
  pattern: true,
  test: (t) => /^(loopback|anywhere|off)$/.test(t),
};
const DURABILITY: TextFormat = {
  shape: 'fsync, interval:MS or none',
  pattern: true,
  test: (t) => /^(fsync|none|interval:\d+)$/.test(t),
};
const ETCD_URLS: TextFormat = {
  shape: 'http://HOST:PORT endpoints, comma-separated',
  pattern: true,
  test: (t) => url_list_of(t).every((url) => /^https?:\/\/[^/]+$/.test(url)),
};
const TOPIC_OR_EMPTY: TextFormat = {
  shape: 'a topic name (1-249 of a-z A-Z 0-9 . _ -), or empty for <topic>.<group>.dlq',
  pattern: false,
  test: (t) => t === '' || /^[a-zA-Z0-9._-]{1,249}$/.test(t),
};
const USER_NAME: TextFormat = { shape: 'a user name', pattern: false, test: (t) => t !== '' };

// ---- The table ----------------------------------------------------------------------------------

const TOP_LEVEL: SettingSpec[] = [
  {
    key: 'data',
    type: text(),
    default: './sluice-data',
    on: CLI,
    placeholder: '<dir>',
    option: 'data_dir',
    description: "data directory: partition logs, indexes and the broker's metadata",
  },
  {
    key: 'kafka',
    type: text(HOST_PORT),
    default: '127.0.0.1:9092',
    on: CLI,
    placeholder: '<host:port>',
    description: 'Kafka listener',
  },
  {
    key: 'http',
    type: text(HOST_PORT_OR_OFF),
    default: '127.0.0.1:8080',
    on: CLI,
    placeholder: '<host:port|off>',
    description: 'HTTP admin API, metrics and console; "off" for none',
  },
  {
    key: 'amqp',
    type: text(HOST_PORT_OR_OFF),
    default: '127.0.0.1:5672',
    on: CLI,
    placeholder: '<host:port|off>',
    description: 'AMQP 0-9-1 listener (RabbitMQ clients); "off" for none',
  },
  {
    key: 'amqp_guest',
    type: text(GUEST_ACCESS),
    default: 'loopback',
    on: CLI,
    placeholder: '<loopback|anywhere|off>',
    option: 'amqp.guest',
    description: 'without a users file: where AMQP guest/guest may log in from (RabbitMQ lets it in on loopback only)',
  },
  {
    key: 'amqp_disk_free_min_bytes',
    type: integer(0, Number.MAX_SAFE_INTEGER),
    default: 50 * 1024 * 1024,
    on: CLI,
    placeholder: '<bytes>',
    option: 'amqp.disk_free_min_bytes',
    description: 'free data-directory space below which AMQP publishers are blocked (connection.blocked); 0: never',
  },
  {
    key: 'node_id',
    type: integer(0, 2_147_483_647),
    default: 1,
    on: [...CLI, 'http'],
    placeholder: '<n>',
    description: "this broker's node id, unique in a cluster",
  },
  {
    key: 'etcd',
    type: text(ETCD_URLS),
    default: null,
    none: 'a single node',
    on: CLI,
    placeholder: '<urls>',
    option: 'cluster.etcd',
    description: 'etcd endpoints: run as a member of their cluster',
  },
  {
    key: 'advertise',
    type: text(HOST_PORT),
    default: null,
    none: "the Kafka listener's address",
    on: CLI,
    placeholder: '<host:port>',
    description: 'the address Metadata gives clients and other brokers',
  },
  {
    key: 'listeners',
    type: text(),
    default: null,
    none: 'one listener at kafka, secured as tls_cert and sasl_users say',
    on: CLI,
    placeholder: '<listeners>',
    option: 'kafka_listeners',
    description:
      'several Kafka listeners in place of kafka, comma-separated PROTOCOL://HOST:PORT (PLAINTEXT, SSL, ' +
      'SASL_PLAINTEXT, SASL_SSL), e.g. PLAINTEXT://127.0.0.1:9092,SASL_SSL://0.0.0.0:9093; brokers use the first',
  },
  {
    key: 'advertised_listeners',
    type: text(),
    default: null,
    none: 'where each listener listens',
    on: CLI,
    placeholder: '<listeners>',
    option: 'kafka_listeners[].advertised',
    description:
      'the address each of the listeners is advertised at (Metadata, FindCoordinator), as PROTOCOL://HOST:PORT',
  },
  {
    key: 'config',
    type: text(),
    default: null,
    none: 'no file',
    on: ['env', 'flag'],
    placeholder: '<file>',
    option: null,
    description: 'JSON file with any of these settings',
  },
  {
    key: 'durability',
    type: text(DURABILITY),
    default: 'fsync',
    on: CLI,
    placeholder: '<policy>',
    description: 'when an append is acknowledged: after its fsync, within an fsync interval, or unsynced',
  },
  {
    key: 'partitions',
    type: integer(1, PARTITIONS_MAX),
    default: 1,
    on: CLI,
    placeholder: '<n>',
    option: 'default_partitions',
    description: 'partitions of a topic created without a count (auto-created ones)',
  },
  {
    key: 'transaction_max_timeout_ms',
    type: ms(1_000),
    default: 900_000,
    on: CLI,
    placeholder: '<ms>',
    option: 'transactions.timeout_max_ms',
    description: 'the longest transaction timeout a transactional producer may ask for (transaction.max.timeout.ms)',
  },
  {
    key: 'transactional_id_expiration_ms',
    type: ms(1_000),
    default: 604_800_000,
    on: CLI,
    placeholder: '<ms>',
    option: 'transactions.id_expiration_ms',
    description: 'a transactional id with no transaction for this long is forgotten (transactional.id.expiration.ms)',
  },
  {
    key: 'transaction_checks_max',
    type: integer(1, 1000),
    default: 15,
    on: CLI,
    placeholder: '<n>',
    option: 'transactions.checks_max',
    description: 'check-back requests for a half message before it is moved to the unresolved topic',
  },
  {
    key: 'transaction_version',
    type: integer(1, 2),
    default: 2,
    on: CLI,
    placeholder: '<n>',
    option: 'transactions.version',
    description: 'transaction.version offered to clients: 2 (KIP-890: a new epoch per transaction) or 1',
  },
  ...BACKGROUND_SETTINGS,
  {
    key: 'auto_create',
    type: { kind: 'boolean' },
    default: true,
    on: CLI,
    option: 'auto_create_topics',
    description: 'create a topic that a client names but that does not exist',
  },
  {
    key: 'log_level',
    type: choice('trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'),
    default: 'info',
    on: CLI,
    placeholder: '<level>',
    option: 'logger',
    description: 'what is logged (JSON lines on standard error)',
  },
  ...SECURITY_SETTINGS,
];

/** Under the config file's "shareGroups": the broker-wide defaults; the Kafka names set one group's. */
const SHARE_GROUPS: SettingSpec[] = [
  {
    key: 'record_lock_duration_ms',
    type: ms(100, 3_600_000),
    default: 30_000,
    on: ['file', 'http'],
    kafka: 'share.record.lock.duration.ms',
    option: 'share_groups.partition.record_lock_duration_ms',
    description: 'how long a consumer holds an acquired record before it is offered again',
  },
  {
    key: 'delivery_count_limit',
    type: integer(1, 1_000),
    default: 5,
    on: ['file', 'http'],
    kafka: 'share.delivery.count.limit',
    option: 'share_groups.partition.delivery_count_limit',
    description: 'deliveries of a record before it is dead-lettered',
  },
  {
    key: 'records_in_flight_max',
    type: integer(1, 100_000),
    default: 5_000,
    on: ['file', 'http'],
    kafka: 'share.partition.max.record.locks',
    option: 'share_groups.partition.records_in_flight_max',
    description: 'records of one partition a group tracks at once: the bound on records in flight',
  },
  {
    key: 'auto_offset_reset',
    type: choice('earliest', 'latest'),
    default: 'earliest',
    on: ['file', 'http'],
    kafka: 'share.auto.offset.reset',
    description: 'where a group starts on a partition it has no state for',
  },
  {
    key: 'retry_backoff_ms',
    type: { kind: 'ms_list' },
    default: [1_000, 5_000, 30_000, 120_000],
    on: ['file', 'http'],
    kafka: 'sluice.share.retry.backoff.ms',
    option: 'share_groups.partition.retry_backoff_ms',
    description: 'wait before the n-th redelivery of a released or timed-out record (the last one repeats)',
  },
  {
    key: 'dead_letter_topic',
    type: text(TOPIC_OR_EMPTY),
    default: '',
    on: ['http'],
    kafka: 'sluice.share.dlq.topic',
    option: null,
    description: "where the group's dead letters go; empty: <topic>.<group>.dlq",
  },
  {
    key: 'ordering',
    type: choice('none', 'key'),
    default: 'none',
    on: ['http'],
    kafka: 'sluice.share.ordering',
    option: null,
    description: 'key: records of one key are never in flight together',
  },
  {
    key: 'isolation_level',
    type: choice('read_committed', 'read_uncommitted'),
    default: 'read_committed',
    on: ['http'],
    kafka: 'share.isolation.level',
    option: null,
    description: "read_committed: only committed transactions' records, none past the last stable offset",
  },
  {
    key: 'session_timeout_ms',
    type: ms(1_000, 3_600_000),
    default: 45_000,
    on: ['file'],
    description: 'a member that has not sent a heartbeat for this long leaves its group',
  },
  {
    key: 'heartbeat_interval_ms',
    type: ms(100, 600_000),
    default: 5_000,
    on: ['file'],
    description: 'how often members are asked to send a heartbeat',
  },
];

const DELAYED: SettingSpec[] = [
  {
    key: 'delay_max_ms',
    type: ms(0),
    default: 7 * 24 * 3600 * 1000,
    on: ['file', 'http'],
    aliases: [{ surface: 'file', name: 'delayed.maxDelayMs', note: 'its name before the settings table' }],
    description: 'the furthest in the future a record may be delayed; a produce asking for more is refused',
  },
];

const CLUSTER: SettingSpec[] = [
  {
    key: 'prefix',
    type: text(),
    default: '/sluice/default/',
    on: ['file'],
    description: "where this cluster's keys live in etcd (several clusters can share one etcd)",
  },
  {
    key: 'lease_ttl_ms',
    type: ms(1_000),
    default: 3_000,
    on: ['file'],
    description: 'a broker etcd has not heard from for this long loses its registration and leaderships',
  },
  {
    key: 'replication_factor',
    type: integer(1),
    default: 3,
    on: ['file'],
    option: 'cluster.replication_factor_default',
    description: 'copies of a topic created without a replication factor (capped by the live brokers)',
  },
  {
    key: 'replica_lag_time_max_ms',
    type: ms(100),
    default: 10_000,
    on: ['file'],
    option: 'cluster.replicas.replica_lag_time_max_ms',
    description: 'a follower that has not caught up for this long leaves the ISR',
  },
  {
    key: 'leader_rebalance_interval_ms',
    type: ms(0),
    default: 60_000,
    on: ['file'],
    description: 'how often the controller hands leadership back to preferred replicas; 0: never',
  },
  {
    key: 'inter_broker_user',
    type: text(USER_NAME),
    default: null,
    none: 'no login between brokers',
    on: ['file'],
    option: 'cluster.inter_broker_sasl',
    description: 'with --sasl-users (then required): the user of that file brokers log in to each other as',
  },
];

export const SETTINGS: readonly Setting[] = [
  ...TOP_LEVEL.map((spec) => derive(null, spec)),
  ...SHARE_GROUPS.map((spec) => derive('share_groups', spec)),
  ...DELAYED.map((spec) => derive('delayed', spec)),
  ...CLUSTER.map((spec) => derive('cluster', spec)),
];

export const SETTING_GROUPS: readonly SettingGroup[] = ['share_groups', 'delayed', 'cluster'];

const BY_NAME = new Map(SETTINGS.map((s) => [s.name, s]));
const BY_KAFKA = new Map(SETTINGS.filter((s) => s.kafka !== undefined).map((s) => [s.kafka!, s]));

// ---- Lookups ------------------------------------------------------------------------------------

/** The setting of a canonical name; throws for an unknown one (a mistake in the code). */
export function setting(name: string): Setting {
  const found = BY_NAME.get(name);
  if (!found) throw new Error(`no setting ${name}`);
  return found;
}

/** The settings of a group (null: the top-level ones), in table order. */
export function settings_of(group: SettingGroup | null): Setting[] {
  return SETTINGS.filter((s) => s.group === group);
}

export function setting_of_group_config(kafka_name: string): Setting | undefined {
  return BY_KAFKA.get(kafka_name);
}

export function default_number(name: string): number {
  const value = setting(name).default;
  if (typeof value !== 'number') throw new Error(`${name}: no number default`);
  return value;
}

export function default_boolean(name: string): boolean {
  const value = setting(name).default;
  if (typeof value !== 'boolean') throw new Error(`${name}: no boolean default`);
  return value;
}

export function default_text(name: string): string {
  const value = setting(name).default;
  if (typeof value !== 'string') throw new Error(`${name}: no text default`);
  return value;
}

export function default_list(name: string): number[] {
  const value = setting(name).default;
  if (!Array.isArray(value)) throw new Error(`${name}: no list default`);
  return [...value];
}

/** The last part of a config file name: the key within its group's object (`delayed.maxDelayMs` → `maxDelayMs`). */
function last_part(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1);
}

/**
 * The file's names (and aliases) of a group's settings, keyed by their key within the group's
 * object (or the file's top level for group null).
 */
export function config_file_keys(group: SettingGroup | null): Map<string, { setting: Setting; alias?: SettingAlias }> {
  const keys = new Map<string, { setting: Setting; alias?: SettingAlias }>();
  for (const s of settings_of(group)) {
    if (s.names.file !== undefined) keys.set(last_part(s.names.file), { setting: s });
    for (const alias of s.aliases ?? []) {
      if (alias.surface === 'file') keys.set(last_part(alias.name), { setting: s, alias });
    }
  }
  return keys;
}

/**
 * Reads a group's object of the config file (`"shareGroups": {...}`): the values given, keyed by
 * setting key. Refuses a non-object, an unknown key (listing the known ones), a value the setting's
 * type refuses, and a setting given under two names; `warn` hears of deprecated names used.
 */
export function read_config_group(
  group: SettingGroup,
  value: unknown,
  warn: (message: string) => void = () => {},
): Map<string, SettingValue> | undefined {
  if (value === undefined || value === null) return undefined;
  const where = `config ${file_group_name(group)}`;
  if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`${where}: expected an object`);
  const keys = config_file_keys(group);
  const known = [...keys].filter(([, entry]) => entry.alias === undefined).map(([key]) => key);
  const values = new Map<string, SettingValue>();
  const given = new Map<string, string>();
  for (const [key, raw] of Object.entries(value as Record<string, unknown>)) {
    const entry = keys.get(key);
    if (!entry) throw new Error(`${where}.${key}: unknown setting (known: ${known.join(', ')})`);
    const s = entry.setting;
    const earlier = given.get(s.key);
    if (earlier !== undefined) {
      throw new Error(`${where}.${key}: the same setting as ${where}.${earlier}; give one of them`);
    }
    given.set(s.key, key);
    if (entry.alias) warn(`${where}.${key} is deprecated: use ${s.names.file}`);
    const parsed = read_json(s.type, raw);
    if (parsed === undefined) throw new Error(refusal(`${where}.${key}`, s.type, raw, 'json'));
    values.set(s.key, parsed);
  }
  return values;
}
