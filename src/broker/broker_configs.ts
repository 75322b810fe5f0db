// Broker configs (Kafka's BROKER resource). Every setting the broker started with is one, under
// Kafka's name where Kafka has the same setting and `sluice.<setting>` otherwise; most are read-only.
// The dynamic ones change while the broker runs and are kept in the metadata store (etcd in a
// cluster): for one broker (resource name: its node id) or as the cluster-wide default (resource
// name empty). The topic defaults (log.retention.ms and the like) are cluster-wide only: the
// replicas of a partition must keep the same log, so they may not differ between brokers.
import type { BrokerConfigsApi, SetBrokerConfigsOptions } from '../core/api.ts';
import { BrokerError } from '../core/errors.ts';
import { BROKER_CONFIGS_DEFAULT, TOPIC_DEFAULT_CONFIGS, type MetadataStore } from '../core/metadata_store.ts';
import { SETTINGS, type Setting } from '../core/settings.ts';
import { read_text, text_of, type SettingType } from '../core/setting_values.ts';
import type { ConfigEntry, ConfigSourceName, ConfigSynonym, ConfigValueType } from '../core/types.ts';
import { topic_config_spec, type TopicDefault } from './topic_config.ts';

/** Kafka's names of the settings Kafka has as well. */
const KAFKA_NAMES: Readonly<Record<string, string>> = {
  node_id: 'node.id',
  data: 'log.dirs',
  listeners: 'listeners',
  advertised_listeners: 'advertised.listeners',
  partitions: 'num.partitions',
  auto_create: 'auto.create.topics.enable',
  transaction_max_timeout_ms: 'transaction.max.timeout.ms',
  cleaner_interval_ms: 'log.cleaner.backoff.ms',
  group_consumer_session_timeout_ms: 'group.consumer.session.timeout.ms',
  group_consumer_heartbeat_interval_ms: 'group.consumer.heartbeat.interval.ms',
  cleaner_memory_bytes_max: 'log.cleaner.dedupe.buffer.size',
  cleaner_io_bytes_per_s_max: 'log.cleaner.io.max.bytes.per.second',
  transactional_id_expiration_ms: 'transactional.id.expiration.ms',
  super_users: 'super.users',
  connections_per_ip_max: 'max.connections.per.ip',
  'cluster.replication_factor': 'default.replication.factor',
  'cluster.replica_lag_time_max_ms': 'replica.lag.time.max.ms',
  'share_groups.record_lock_duration_ms': 'group.share.record.lock.duration.ms',
  'share_groups.delivery_count_limit': 'group.share.delivery.count.limit',
  'share_groups.records_in_flight_max': 'group.share.partition.max.record.locks',
  'share_groups.session_timeout_ms': 'group.share.session.timeout.ms',
  'share_groups.heartbeat_interval_ms': 'group.share.heartbeat.interval.ms',
};

/** The settings that change while the broker runs (per broker or cluster-wide). */
const DYNAMIC_SETTINGS: ReadonlySet<string> = new Set([
  'log_level',
  'connections_per_ip_max',
  'connections_per_user_max',
]);

export interface BrokerConfigSpec {
  name: string;
  type: ConfigValueType;
  doc: string;
  default: string;
  /** 'cluster': only as the cluster-wide default; 'broker': per broker too; null: read-only. */
  dynamic: 'cluster' | 'broker' | null;
  /** The setting behind it (its value at start is the static one). */
  setting?: Setting;
  /** An error message, or null when valid. */
  validate(value: string): string | null;
}

function value_type(type: SettingType): ConfigValueType {
  if (type.kind === 'integer') return (type.max ?? Number.MAX_SAFE_INTEGER) <= 2_147_483_647 ? 'int' : 'long';
  if (type.kind === 'boolean') return 'boolean';
  return type.kind === 'ms_list' ? 'list' : 'string';
}

function setting_spec(s: Setting): BrokerConfigSpec {
  return {
    name: KAFKA_NAMES[s.name] ?? `sluice.${s.name}`,
    type: value_type(s.type),
    doc: s.description,
    default: s.default === null ? '' : text_of(s.default),
    dynamic: DYNAMIC_SETTINGS.has(s.name) ? 'broker' : null,
    setting: s,
    validate: (value) => (read_text(s.type, value) === undefined ? `not a valid ${s.name}` : null),
  };
}

function topic_default_spec(name: string, topic_name: string): BrokerConfigSpec {
  const spec = topic_config_spec(topic_name)!;
  return {
    name,
    type: spec.type,
    doc: `the default of the topic config ${topic_name}: ${spec.doc}`,
    default: spec.default,
    dynamic: 'cluster',
    validate: (value) => spec.validate(value),
  };
}

export const BROKER_CONFIG_SPECS: readonly BrokerConfigSpec[] = [
  ...SETTINGS.filter((s) => s.name !== 'config').map(setting_spec),
  ...Object.entries(TOPIC_DEFAULT_CONFIGS).map(([name, topic_name]) => topic_default_spec(name, topic_name)),
];
const BY_NAME = new Map(BROKER_CONFIG_SPECS.map((spec) => [spec.name, spec]));

/** The broker config behind a setting (by canonical name). */
export function broker_config_name(setting_name: string): string {
  return KAFKA_NAMES[setting_name] ?? `sluice.${setting_name}`;
}

export class BrokerConfigs implements BrokerConfigsApi {
  private readonly listeners: Array<() => void> = [];
  private applied = '';

  constructor(
    private readonly store: MetadataStore,
    private readonly node_id: number,
    /** The settings the broker started with, as text, by canonical name (the rest have their defaults). */
    private readonly started_with: Readonly<Record<string, string>>,
    /** Whether a broker of this node id belongs to the cluster. */
    private readonly broker_exists: (node_id: number) => boolean,
  ) {}

  /** The scope a BROKER resource's name stands for: '' the cluster-wide defaults, else a node id. */
  scope_of(resource_name: string): string {
    if (resource_name === '') return BROKER_CONFIGS_DEFAULT;
    const id = /^\d{1,10}$/.test(resource_name) ? Number(resource_name) : NaN;
    if (!Number.isInteger(id) || !this.broker_exists(id))
      throw new BrokerError('invalid_request', `no broker ${JSON.stringify(resource_name)} in this cluster`);
    return String(id);
  }

  /**
   * This broker's every config with its value in force (resource name: its node id), or the
   * cluster-wide defaults set (resource name empty).
   */
  entries(resource_name: string): ConfigEntry[] {
    const scope = this.scope_of(resource_name);
    if (scope === BROKER_CONFIGS_DEFAULT) {
      const set = this.store.broker_configs()[BROKER_CONFIGS_DEFAULT] ?? {};
      return Object.entries(set).map(([name, value]) =>
        this.entry(BY_NAME.get(name)!, [{ name, value, source: 'cluster_default' }]),
      );
    }
    if (scope !== String(this.node_id))
      throw new BrokerError(
        'invalid_request',
        `broker ${scope} describes its own configs (this is broker ${this.node_id}): send the request to it`,
      );
    return BROKER_CONFIG_SPECS.map((spec) => this.entry(spec, this.synonyms(spec)));
  }

  private entry(spec: BrokerConfigSpec, synonyms: ConfigSynonym[]): ConfigEntry {
    const first = synonyms[0]!;
    return {
      name: spec.name,
      value: first.value,
      is_set: first.source !== 'default',
      default: spec.default,
      type: spec.type,
      documentation: spec.dynamic ? `${spec.doc}.` : `${spec.doc}. Read-only: set when the broker starts.`,
      source: first.source,
      synonyms,
      read_only: spec.dynamic === null,
    };
  }

  /** Every value a config has here, in precedence order; the last is its default. */
  private synonyms(spec: BrokerConfigSpec): ConfigSynonym[] {
    const all = this.store.broker_configs();
    const found: ConfigSynonym[] = [];
    const add = (value: string | undefined, source: ConfigSourceName) => {
      if (value !== undefined) found.push({ name: spec.name, value, source });
    };
    add(all[String(this.node_id)]?.[spec.name], 'resource');
    add(all[BROKER_CONFIGS_DEFAULT]?.[spec.name], 'cluster_default');
    if (spec.setting) add(this.started_with[spec.setting.name], 'static');
    add(spec.default, 'default');
    return found;
  }

  /** The value in force on this broker of a config named by its setting (canonical name). */
  setting_value(setting_name: string): string {
    return this.synonyms(BY_NAME.get(broker_config_name(setting_name))!)[0]!.value;
  }

  /** The cluster-wide defaults of topic configs, by topic config name. */
  topic_defaults(): Record<string, TopicDefault> {
    const set = this.store.broker_configs()[BROKER_CONFIGS_DEFAULT] ?? {};
    const defaults: Record<string, TopicDefault> = {};
    for (const [name, value] of Object.entries(set)) {
      const topic_name = TOPIC_DEFAULT_CONFIGS[name];
      if (topic_name !== undefined) defaults[topic_name] = { broker_name: name, value };
    }
    return defaults;
  }

  /** Sets, removes or replaces dynamic configs of a scope; refuses read-only and unknown ones by name. */
  async set(
    resource_name: string,
    configs: Readonly<Record<string, string>>,
    options: SetBrokerConfigsOptions = {},
  ): Promise<void> {
    const scope = this.scope_of(resource_name);
    for (const [name, value] of Object.entries(configs)) check_dynamic(name, scope, value);
    for (const name of options.remove ?? []) check_dynamic(name, scope, null);
    if (options.validate_only) return;
    const next = options.replace ? { ...configs } : { ...this.store.broker_configs()[scope], ...configs };
    for (const name of options.remove ?? []) delete next[name];
    await this.store.set_broker_configs(scope, next);
    this.changed();
  }

  /** Calls `listener` whenever the dynamic configs in force may have changed. */
  on_change(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** Tells the listeners when the store's dynamic configs differ from the last ones told (after any view change). */
  changed(): void {
    const now = JSON.stringify(this.store.broker_configs());
    if (now === this.applied) return;
    this.applied = now;
    for (const listener of this.listeners) listener();
  }
}

function check_dynamic(name: string, scope: string, value: string | null): void {
  const spec = BY_NAME.get(name);
  if (!spec) throw new BrokerError('invalid_config', `unknown broker config ${name}`);
  if (spec.dynamic === null)
    throw new BrokerError(
      'invalid_config',
      `${name} is read-only while the broker runs: set it when the broker starts` +
        (spec.setting?.names.flag ? ` (${spec.setting.names.flag})` : ''),
    );
  if (spec.dynamic === 'cluster' && scope !== BROKER_CONFIGS_DEFAULT)
    throw new BrokerError(
      'invalid_config',
      `${name} is a cluster-wide default (every replica of a partition must agree): ` +
        'set it on the BROKER resource with an empty name',
    );
  const problem = value === null ? null : spec.validate(value);
  if (problem) throw new BrokerError('invalid_config', `${name}=${value}: ${problem}`);
}
