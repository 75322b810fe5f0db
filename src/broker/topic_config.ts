// Topic configuration: the Kafka-named settings a topic accepts, their defaults, validation, and
// how they map onto the storage layer's LogConfig.
import { LOG_CONFIG_DEFAULT, type LogConfig } from '../storage/index.ts';
import { BrokerError } from '../core/errors.ts';
import type { TopicConfigs } from '../core/types.ts';

interface ConfigEntry {
  default: string;
  validate(value: string): string | null; // an error message, or null when valid
  apply?(config: LogConfig, value: string): void;
}

function integer(min: number) {
  return (value: string) => (/^-?\d+$/.test(value) && Number(value) >= min ? null : `must be an integer >= ${min}`);
}

const ENTRIES: Record<string, ConfigEntry> = {
  'retention.ms': {
    default: String(LOG_CONFIG_DEFAULT.retention_ms),
    validate: integer(-1),
    apply: (c, v) => (c.retention_ms = Number(v)),
  },
  'retention.bytes': {
    default: String(LOG_CONFIG_DEFAULT.retention_bytes),
    validate: integer(-1),
    apply: (c, v) => (c.retention_bytes = Number(v)),
  },
  'segment.bytes': {
    default: String(LOG_CONFIG_DEFAULT.segment_bytes),
    validate: integer(14),
    apply: (c, v) => (c.segment_bytes = Number(v)),
  },
  'segment.ms': {
    default: String(LOG_CONFIG_DEFAULT.segment_ms),
    validate: integer(1),
    apply: (c, v) => (c.segment_ms = Number(v)),
  },
  'index.interval.bytes': {
    default: String(LOG_CONFIG_DEFAULT.index_interval_bytes),
    validate: integer(0),
    apply: (c, v) => (c.index_interval_bytes = Number(v)),
  },
  'max.message.bytes': {
    default: String(LOG_CONFIG_DEFAULT.message_bytes_max),
    validate: integer(0),
    apply: (c, v) => (c.message_bytes_max = Number(v)),
  },
  'message.timestamp.type': {
    default: 'CreateTime',
    validate: (v) => (v === 'CreateTime' || v === 'LogAppendTime' ? null : 'must be CreateTime or LogAppendTime'),
    apply: (c, v) => (c.timestamp_type = v === 'LogAppendTime' ? 'log_append' : 'create'),
  },
  'cleanup.policy': {
    default: 'delete',
    validate: (v) => (v === 'delete' ? null : 'only "delete" is supported; log compaction is not implemented'),
  },
  'compression.type': {
    default: 'producer',
    validate: (v) =>
      v === 'producer' ? null : 'only "producer" is supported: batches are stored as the producer compressed them',
  },
  // acks=all is refused (NOT_ENOUGH_REPLICAS) while the in-sync replica set is smaller than this.
  'min.insync.replicas': { default: '1', validate: integer(1) },
  // Elect a replica outside the ISR when no ISR member is alive: available, but loses data.
  'unclean.leader.election.enable': {
    default: 'false',
    validate: (v) => (v === 'true' || v === 'false' ? null : 'must be true or false'),
  },
  // Sluice's own: how long a message may wait in a share group before it expires (-1: forever;
  // a message's `sluice-ttl-ms` header overrides it), and what happens to it then.
  'sluice.message.ttl.ms': { default: '-1', validate: integer(-1) },
  // A full queue: caps on a partition's unconsumed messages and on its log's bytes (-1: none), and
  // what a produce past them gets (see overflow.ts).
  'sluice.max.messages': { default: '-1', validate: integer(-1) },
  'sluice.max.bytes': { default: '-1', validate: integer(-1) },
  'sluice.overflow.policy': {
    default: 'reject',
    validate: (v) => (v === 'reject' || v === 'archive-oldest' ? null : 'must be reject or archive-oldest'),
  },
  'sluice.ttl.expired.action': {
    default: 'dead-letter',
    validate: (v) => (v === 'dead-letter' || v === 'drop' ? null : 'must be dead-letter or drop'),
  },
};

export function config_names(): string[] {
  return Object.keys(ENTRIES);
}

export function config_default(name: string): string | undefined {
  return ENTRIES[name]?.default;
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
