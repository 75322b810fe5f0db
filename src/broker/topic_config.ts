// Topic configuration: the Kafka-named settings a topic accepts, their defaults, types,
// validation, and how they map onto the storage layer's LogConfig; beside them Kafka's standard
// configs that have no effect here (standard_topic_configs.ts), accepted and described all the same.
import { LOG_CONFIG_DEFAULT, type LogConfig } from '../storage/index.ts';
import { BrokerError } from '../core/errors.ts';
import type { ConfigEntry, ConfigSynonym, TopicConfigs } from '../core/types.ts';
import { IGNORED_TOPIC_CONFIGS, boolean, whole, type ConfigSpec } from './standard_topic_configs.ts';

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
    doc: 'what retention does with old segments: delete them (compact is not implemented yet)',
    validate: (v) => (v === 'delete' ? null : 'only "delete" is supported; log compaction is not implemented'),
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

export function log_config_of(configs: TopicConfigs): LogConfig {
  const config: LogConfig = { ...LOG_CONFIG_DEFAULT };
  for (const [name, value] of Object.entries(configs)) ENTRIES[name]?.apply?.(config, value);
  return config;
}
