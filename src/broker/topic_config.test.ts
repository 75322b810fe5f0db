import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerError } from '../core/errors.ts';
import { topic_config_entries, validate_configs } from './topic_config.ts';

/** Kafka 4's topic configs (TopicConfig, plus the replication throttles). */
const KAFKA_TOPIC_CONFIGS = [
  'cleanup.policy',
  'compression.gzip.level',
  'compression.lz4.level',
  'compression.type',
  'compression.zstd.level',
  'delete.retention.ms',
  'file.delete.delay.ms',
  'flush.messages',
  'flush.ms',
  'follower.replication.throttled.replicas',
  'index.interval.bytes',
  'leader.replication.throttled.replicas',
  'local.retention.bytes',
  'local.retention.ms',
  'max.compaction.lag.ms',
  'max.message.bytes',
  'message.downconversion.enable',
  'message.format.version',
  'message.timestamp.after.max.ms',
  'message.timestamp.before.max.ms',
  'message.timestamp.difference.max.ms',
  'message.timestamp.type',
  'min.cleanable.dirty.ratio',
  'min.compaction.lag.ms',
  'min.insync.replicas',
  'preallocate',
  'remote.log.copy.disable',
  'remote.log.delete.on.disable',
  'remote.storage.enable',
  'retention.bytes',
  'retention.ms',
  'segment.bytes',
  'segment.index.bytes',
  'segment.jitter.ms',
  'segment.ms',
  'unclean.leader.election.enable',
];

const refused = (configs: Record<string, string>, reason: RegExp) =>
  assert.throws(
    () => validate_configs(configs),
    (error: unknown) => error instanceof BrokerError && error.kind === 'invalid_config' && reason.test(error.message),
  );

test('every Kafka topic config is accepted at its default, typed and documented', () => {
  const entries = new Map(topic_config_entries({}).map((entry) => [entry.name, entry]));
  for (const name of KAFKA_TOPIC_CONFIGS) {
    const entry = entries.get(name);
    assert.ok(entry, `${name} is known`);
    assert.doesNotThrow(() => validate_configs({ [name]: entry.default! }), name);
    assert.ok(entry.type && entry.documentation, `${name} has a type and documentation`);
  }
  assert.match(entries.get('flush.messages')!.documentation!, /no effect in Sluice: flushing follows/);
  assert.doesNotMatch(entries.get('retention.ms')!.documentation!, /no effect/);
});

test('values are checked as Kafka checks them', () => {
  validate_configs({ 'min.cleanable.dirty.ratio': '0.25', 'follower.replication.throttled.replicas': '0:1,1:2' });
  validate_configs({ 'compression.gzip.level': '-1', 'compression.zstd.level': '-5', preallocate: 'true' });
  refused({ 'min.cleanable.dirty.ratio': '1.5' }, /from 0 to 1/);
  refused({ 'compression.lz4.level': '18' }, /from 1 to 17/);
  refused({ 'compression.gzip.level': '0' }, /from 1 to 9/);
  refused({ 'delete.retention.ms': '-1' }, /integer from 0/);
  refused({ 'leader.replication.throttled.replicas': 'all' }, /partition:broker/);
  refused({ 'remote.storage.enable': 'true' }, /tiered storage is not implemented/);
  refused({ 'no.such.config': '1' }, /unknown topic config/);
});

test('a set value is in force and said to be set; the default stays known', () => {
  const entry = topic_config_entries({ 'segment.jitter.ms': '500' }).find((e) => e.name === 'segment.jitter.ms')!;
  assert.deepEqual([entry.value, entry.is_set, entry.default], ['500', true, '0']);
});
