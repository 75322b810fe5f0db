// Topic configuration: the Kafka-named settings a topic accepts, their defaults, types,
// validation, and how they map onto the storage layer's LogConfig; beside them Kafka's standard
// configs that have no effect here (standard_topic_configs.ts), accepted and described all the same.
import { LOG_CONFIG_DEFAULT, type LogConfig } from '../storage/index.ts';
import { BrokerError } from '../core/errors.ts';
import type { ConfigEntry, ConfigSynonym, TopicConfigs } from '../core/types.ts';
import type { CompactionConfig } from './compaction/log_cleaner.ts';
import { IGNORED_TOPIC_CONFIGS, LONG_MAX, boolean, ratio, whole, type ConfigSpec } from './standard_topic_configs.ts';

interface AppliedSpec extends ConfigSpec {
  apply?(config: LogConfig, value: string): void;
}

const APPLIED: Record<string, AppliedSpec> = {
  'retention.ms': {
    default: String(LOG_CONFIG_DEFAULT.retention_ms),
    type: 'long',
    doc: 'how long records are kept before their segment may be deleted (-1: forever)',
    validate: whole(-1),
    apply: (c, v) => (c.retention_ms = Number(v)),
  },
  'retention.bytes': {
    default: String(LOG_CONFIG_DEFAULT.retention_bytes),
    type: 'long',
    doc: "the most bytes a partition's log keeps before its oldest segments go (-1: no limit)",
    validate: whole(-1),
    apply: (c, v) => (c.retention_bytes = Number(v)),
  },
  'segment.bytes': {
    default: String(LOG_CONFIG_DEFAULT.segment_bytes),
    type: 'int',
    doc: 'the size at which a new segment file is started',
    validate: whole(14),
    apply: (c, v) => (c.segment_bytes = Number(v)),
  },
  'segment.ms': {
    default: String(LOG_CONFIG_DEFAULT.segment_ms),
    type: 'long',
    doc: 'the age at which a new segment file is started',
    validate: whole(1),
    apply: (c, v) => (c.segment_ms = Number(v)),
  },
  'index.interval.bytes': {
    default: String(LOG_CONFIG_DEFAULT.index_interval_bytes),
    type: 'int',
    doc: 'bytes written between two entries of the offset index',
    validate: whole(0),
    apply: (c, v) => (c.index_interval_bytes = Number(v)),
  },
  'max.message.bytes': {
    default: String(LOG_CONFIG_DEFAULT.message_bytes_max),
    type: 'int',
    doc: 'the largest record batch accepted',
    validate: whole(0),
    apply: (c, v) => (c.message_bytes_max = Number(v)),
  },
  'message.timestamp.type': {
    default: 'CreateTime',
    type: 'string',
    doc: "whose time a record carries: the producer's (CreateTime) or the broker's on append (LogAppendTime)",
    validate: (v) => (v === 'CreateTime' || v === 'LogAppendTime' ? null : 'must be CreateTime or LogAppendTime'),
    apply: (c, v) => (c.timestamp_type = v === 'LogAppendTime' ? 'log_append' : 'create'),
  },
  'cleanup.policy': {
    default: 'delete',
    type: 'list',
    doc:
      'what becomes of old segments: delete (retention deletes them), compact (the cleaner keeps the ' +
      'latest record of each key), or both',
    validate: (v) => (cleanup_policies(v) ? null : 'must be delete, compact, or compact,delete'),
    apply: (c, v) => (c.cleanup_delete = cleanup_policies(v)!.has('delete')),
  },
  // Log compaction (broker/compaction/log_cleaner.ts reads these from the topic's configs).
  'delete.retention.ms': {
    default: '86400000',
    type: 'long',
    doc: 'how long a tombstone (a record with a null value) stays in a compacted topic',
    validate: whole(0),
  },
  'min.compaction.lag.ms': {
    default: '0',
    type: 'long',
    doc: 'the shortest time a record stays uncompacted',
    validate: whole(0),
  },
  'max.compaction.lag.ms': {
    default: LONG_MAX,
    type: 'long',
    doc: 'the longest time a record may stay uncompacted (a pass runs then whatever the dirty ratio)',
    validate: whole(1),
  },
  'min.cleanable.dirty.ratio': {
    default: '0.5',
    type: 'double',
    doc: "the share of a compacted log's cleanable bytes not yet compacted at which a pass runs",
    validate: ratio,
  },
  'compression.type': {
    default: 'producer',
    type: 'string',
    doc: 'how batches are stored: as the producer compressed them',
    validate: (v) =>
      v === 'producer' ? null : 'only "producer" is supported: batches are stored as the producer compressed them',
  },
  // acks=all is refused (NOT_ENOUGH_REPLICAS) while the in-sync replica set is smaller than this.
  'min.insync.replicas': {
    default: '1',
    type: 'int',
    doc: 'the in-sync replicas an acks=all write needs',
    validate: whole(1),
  },
  // Elect a replica outside the ISR when no ISR member is alive: available, but loses data.
  'unclean.leader.election.enable': {
    default: 'false',
    type: 'boolean',
    doc: 'whether a replica outside the ISR may become leader when no ISR member is alive (losing data)',
    validate: boolean,
  },
  // Sluice's own: how long a message may wait in a share group before it expires (-1: forever;
  // a message's `sluice-ttl-ms` header overrides it), and what happens to it then.
  'sluice.message.ttl.ms': {
    default: '-1',
    type: 'long',
    doc: 'how long a message may wait in a share group before it expires (-1: forever)',
    validate: whole(-1),
  },
  // A full queue: caps on a partition's unconsumed messages and on its log's bytes (-1: none), and
  // what a produce past them gets (see overflow.ts).
  'sluice.max.messages': {
    default: '-1',
    type: 'long',
    doc: 'the most unconsumed messages a partition holds (-1: no limit)',
    validate: whole(-1),
  },
  'sluice.max.bytes': {
    default: '-1',
    type: 'long',
    doc: "the most bytes a partition's log holds (-1: no limit)",
    validate: whole(-1),
  },
  'sluice.overflow.policy': {
    default: 'reject',
    type: 'string',
    doc: 'what a produce past sluice.max.messages or sluice.max.bytes gets: reject, or archive-oldest',
    validate: (v) => (v === 'reject' || v === 'archive-oldest' ? null : 'must be reject or archive-oldest'),
  },
  'sluice.ttl.expired.action': {
    default: 'dead-letter',
    type: 'string',
    doc: 'what becomes of an expired message: dead-letter, or drop',
    validate: (v) => (v === 'dead-letter' || v === 'drop' ? null : 'must be dead-letter or drop'),
  },
};

const ENTRIES: Readonly<Record<string, AppliedSpec>> = { ...APPLIED, ...IGNORED_TOPIC_CONFIGS };

/** A topic config's default, type, check and meaning; undefined for an unknown name. */
export function topic_config_spec(name: string): ConfigSpec | undefined {
  return ENTRIES[name];
}

/**
 * The cluster-wide dynamic default of a topic config, under its broker config's name
 * (log.retention.ms for retention.ms), when one is set.
 */
export interface TopicDefault {
  broker_name: string;
  value: string;
}

/**
 * A topic's every config: the value in force (set on the topic, else the cluster-wide default,
 * else the built-in one), where it comes from, its type and what it does.
 */
export function topic_config_entries(
  configs: TopicConfigs,
  defaults: Readonly<Record<string, TopicDefault>> = {},
): ConfigEntry[] {
  return Object.entries(ENTRIES).map(([name, spec]) => {
    const synonyms: ConfigSynonym[] = [];
    if (configs[name] !== undefined) synonyms.push({ name, value: configs[name], source: 'resource' });
    const cluster = defaults[name];
    if (cluster) synonyms.push({ name: cluster.broker_name, value: cluster.value, source: 'cluster_default' });
    synonyms.push({ name, value: spec.default, source: 'default' });
    return {
      name,
      value: synonyms[0]!.value,
      is_set: configs[name] !== undefined,
      default: spec.default,
      type: spec.type,
      documentation: spec.ignored ? `${spec.doc}. Accepted; no effect in Sluice: ${spec.ignored}.` : `${spec.doc}.`,
      source: synonyms[0]!.source,
      synonyms,
    };
  });
}

/** Throws invalid_config naming the first unknown or invalid setting. */
export function validate_configs(configs: TopicConfigs): void {
  for (const [name, value] of Object.entries(configs)) {
    const entry = ENTRIES[name];
    if (!entry) throw new BrokerError('invalid_config', `unknown topic config ${name}`);
    const problem = entry.validate(value);
    if (problem) throw new BrokerError('invalid_config', `${name}=${value}: ${problem}`);
  }
}

/** The policies of a cleanup.policy value (delete, compact), or null when it names another. */
export function cleanup_policies(value: string): Set<string> | null {
  const policies = new Set(value.split(',').map((p) => p.trim().toLowerCase()));
  for (const policy of policies) if (policy !== 'delete' && policy !== 'compact') return null;
  return policies.size > 0 ? policies : null;
}

/** The compaction configs in force of a compacted topic (its configs with defaults); null when it is not compacted. */
export function compaction_config_of(configs: TopicConfigs): CompactionConfig | null {
  const value = (name: string) => configs[name] ?? APPLIED[name]!.default;
  if (!cleanup_policies(value('cleanup.policy'))?.has('compact')) return null;
  return {
    delete_retention_ms: Number(value('delete.retention.ms')),
    min_compaction_lag_ms: Number(value('min.compaction.lag.ms')),
    max_compaction_lag_ms: Number(value('max.compaction.lag.ms')),
    min_cleanable_dirty_ratio: Number(value('min.cleanable.dirty.ratio')),
  };
}

export function log_config_of(configs: TopicConfigs): LogConfig {
  const config: LogConfig = { ...LOG_CONFIG_DEFAULT };
  for (const [name, value] of Object.entries(configs)) ENTRIES[name]?.apply?.(config, value);
  return config;
}
