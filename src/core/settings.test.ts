// The settings table: names derived per surface, the names in use before the table still
// accepted, aliases, value checks and their messages, and the defaults the code uses.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SETTINGS,
  camel_case,
  config_file_keys,
  default_number,
  host_port_of,
  read_config_group,
  setting,
  setting_of_group_config,
  settings_of,
  type Surface,
} from './settings.ts';
import { expectation, kafka_refusal, read_json, read_text, refusal, text_of, type_text } from './setting_values.ts';
import { SHARE_GROUP_SETTINGS_DEFAULT, group_config_names, group_settings_of } from '../broker/queues/group_config.ts';
import { DELAYED_SETTINGS_DEFAULT } from '../broker/delayed/delayed_delivery.ts';
import { CLUSTER_DEFAULTS } from '../cluster/cluster_node.ts';
import { REPLICA_SETTINGS_DEFAULT } from '../cluster/replica.ts';

test('names are derived from the canonical name on every surface that has the setting', () => {
  const lock = setting('share_groups.record_lock_duration_ms');
  assert.deepEqual(lock.names, {
    file: 'shareGroups.recordLockDurationMs',
    http: 'record_lock_duration_ms',
    kafka: 'share.record.lock.duration.ms',
  });
  const node_id = { file: 'nodeId', env: 'SLUICE_NODE_ID', flag: '--node-id', http: 'node_id' };
  assert.deepEqual(setting('node_id').names, node_id);
  assert.deepEqual(setting('delayed.delay_max_ms').names, { file: 'delayed.delayMaxMs', http: 'delay_max_ms' });
  assert.deepEqual(setting('config').names, { env: 'SLUICE_CONFIG', flag: '--config' }, 'a config file names no other');
  assert.equal(camel_case('replica_lag_time_max_ms'), 'replicaLagTimeMaxMs');
  for (const s of SETTINGS) {
    const group = s.group === null ? '' : `${camel_case(s.group)}.`;
    if (s.names.file !== undefined) assert.equal(s.names.file, `${group}${camel_case(s.key)}`, s.name);
    if (s.names.env !== undefined) assert.equal(s.names.env, `SLUICE_${s.key.toUpperCase()}`, s.name);
    const off = s.type.kind === 'boolean' && s.default === true ? 'no-' : '';
    if (s.names.flag !== undefined) assert.equal(s.names.flag, `--${off}${s.key.replaceAll('_', '-')}`, s.name);
    if (s.names.http !== undefined) assert.equal(s.names.http, s.key, s.name);
    assert.equal(s.name, s.group === null ? s.key : `${s.group}.${s.key}`);
    assert.match(s.key, /^[a-z][a-z0-9_]*$/, 'canonical names are snake_case');
    const top_level_only = !s.names.env && !s.names.flag;
    if (s.group !== null) assert.ok(top_level_only, `${s.name}: flags and environment are top-level only`);
    assert.ok(s.description.length > 0 && !s.description.includes('\n'), `${s.name}: a one-line description`);
  }
});

test('no two settings share a name on one surface, aliases included', () => {
  const seen = new Map<string, string>();
  for (const s of SETTINGS) {
    const names: Array<[string, string]> = Object.entries(s.names).map(([surface, name]) => [surface, name]);
    for (const alias of s.aliases ?? []) names.push([alias.surface, alias.name]);
    for (const [surface, name] of names) {
      // HTTP names are unique within the answer that shows them (a group's settings, /api/v1/delayed).
      const key = surface === 'http' ? `${surface} ${s.group} ${name}` : `${surface} ${name}`;
      assert.equal(seen.get(key), undefined, `${key} is both ${seen.get(key)} and ${s.name}`);
      seen.set(key, s.name);
    }
  }
});

/** Every name a user could set before the table: sluice start's flags, SLUICE_* and config-file keys. */
const NAMES_IN_USE: Partial<Record<Surface, string[]>> = {
  flag: [
    '--data',
    '--kafka',
    '--http',
    '--amqp',
    '--node-id',
    '--etcd',
    '--advertise',
    '--config',
    '--durability',
    '--partitions',
    '--no-auto-create',
    '--log-level',
    '--sasl-users',
  ],
  env: [
    'SLUICE_DATA',
    'SLUICE_KAFKA',
    'SLUICE_HTTP',
    'SLUICE_AMQP',
    'SLUICE_NODE_ID',
    'SLUICE_ETCD',
    'SLUICE_ADVERTISE',
    'SLUICE_CONFIG',
    'SLUICE_DURABILITY',
    'SLUICE_PARTITIONS',
    'SLUICE_AUTO_CREATE',
    'SLUICE_LOG_LEVEL',
    'SLUICE_SASL_USERS',
  ],
  file: [
    'data',
    'kafka',
    'http',
    'amqp',
    'nodeId',
    'etcd',
    'advertise',
    'durability',
    'partitions',
    'autoCreate',
    'logLevel',
    'saslUsers',
    'shareGroups.recordLockDurationMs',
    'shareGroups.deliveryCountLimit',
    'shareGroups.recordsInFlightMax',
    'shareGroups.retryBackoffMs',
    'shareGroups.sessionTimeoutMs',
    'shareGroups.heartbeatIntervalMs',
    'shareGroups.autoOffsetReset',
    'delayed.maxDelayMs',
    'cluster.prefix',
    'cluster.leaseTtlMs',
    'cluster.replicationFactor',
    'cluster.replicaLagTimeMaxMs',
    'cluster.leaderRebalanceIntervalMs',
    'cluster.interBrokerUser',
  ],
  http: [
    'node_id',
    'delivery_count_limit',
    'record_lock_duration_ms',
    'records_in_flight_max',
    'retry_backoff_ms',
    'auto_offset_reset',
    'dead_letter_topic',
    'ordering',
    'isolation_level',
    'delay_max_ms',
  ],
  kafka: [
    'share.record.lock.duration.ms',
    'share.delivery.count.limit',
    'share.partition.max.record.locks',
    'share.auto.offset.reset',
    'sluice.share.retry.backoff.ms',
    'sluice.share.dlq.topic',
    'sluice.share.ordering',
    'share.isolation.level',
  ],
};

test("every name in use before the table is a setting's name or a recorded alias", () => {
  for (const [surface, names] of Object.entries(NAMES_IN_USE) as Array<[Surface, string[]]>) {
    for (const name of names) {
      const known = SETTINGS.some(
        (s) => s.names[surface] === name || (s.aliases ?? []).some((a) => a.surface === surface && a.name === name),
      );
      assert.ok(known, `${surface} ${name} still works`);
    }
  }
  assert.deepEqual(
    SETTINGS.flatMap((s) => (s.aliases ?? []).map((a) => `${a.surface} ${a.name} -> ${s.name}`)),
    ['file delayed.maxDelayMs -> delayed.delay_max_ms'],
    'the one alias: the HTTP API has always said delay_max_ms',
  );
});

test('Kafka group configs: the names and order DescribeConfigs lists, share groups first', () => {
  // Then KIP-848 consumer groups' two, which override top-level settings (consumer_groups/group_configs.ts).
  const consumer = ['consumer.session.timeout.ms', 'consumer.heartbeat.interval.ms'];
  assert.deepEqual(group_config_names(), [...NAMES_IN_USE.kafka!, ...consumer]);
  assert.equal(setting_of_group_config('share.delivery.count.limit')!.name, 'share_groups.delivery_count_limit');
  assert.equal(setting_of_group_config('share.no.such'), undefined);
  for (const s of SETTINGS) if (s.kafka !== undefined) assert.equal(s.group, 'share_groups', s.name);
});

test("a group's settings in force have the HTTP names of the settings a group can set", () => {
  const http = settings_of('share_groups')
    .filter((s) => s.kafka !== undefined)
    .map((s) => s.names.http);
  assert.deepEqual(Object.keys(group_settings_of(SHARE_GROUP_SETTINGS_DEFAULT, {})).sort(), [...http].sort());
  const set = group_settings_of(SHARE_GROUP_SETTINGS_DEFAULT, {
    'share.record.lock.duration.ms': '5000',
    'sluice.share.retry.backoff.ms': '10, 20',
    'sluice.share.ordering': 'key',
    'share.delivery.count.limit': 'garbage', // stored before it was checked: the default holds
  });
  assert.equal(set.record_lock_duration_ms, 5000);
  assert.deepEqual(set.retry_backoff_ms, [10, 20]);
  assert.equal(set.ordering, 'key');
  assert.equal(set.delivery_count_limit, 5);
});

/** Every setting's default by canonical name. */
const DEFAULTS_EXPECTED = {
  data: './sluice-data',
  kafka: '127.0.0.1:9092',
  http: '127.0.0.1:8080',
  amqp: '127.0.0.1:5672',
  amqp_guest: 'loopback',
  amqp_disk_free_min_bytes: 52428800,
  node_id: 1,
  etcd: null,
  advertise: null,
  listeners: null,
  advertised_listeners: null,
  config: null,
  durability: 'fsync',
  partitions: 1,
  transaction_max_timeout_ms: 900_000,
  transactional_id_expiration_ms: 604_800_000,
  transaction_checks_max: 15,
  transaction_version: 2,
  group_consumer_session_timeout_ms: 45_000,
  group_consumer_heartbeat_interval_ms: 5_000,
  cleaner_interval_ms: 15_000,
  cleaner_memory_bytes_max: 134_217_728,
  cleaner_io_bytes_per_s_max: 0,
  auto_create: true,
  log_level: 'info',
  tls_cert: null,
  tls_key: null,
  dev_tls: false,
  tls_ca: null,
  tls_client_auth: 'none',
  sasl: false,
  authorization: false,
  super_users: null,
  connections_per_ip_max: 0,
  connections_per_user_max: 0,
  sasl_users: null,
  'share_groups.record_lock_duration_ms': 30_000,
  'share_groups.delivery_count_limit': 5,
  'share_groups.records_in_flight_max': 5_000,
  'share_groups.auto_offset_reset': 'earliest',
  'share_groups.retry_backoff_ms': [1_000, 5_000, 30_000, 120_000],
  'share_groups.dead_letter_topic': '',
  'share_groups.ordering': 'none',
  'share_groups.isolation_level': 'read_committed',
  'share_groups.session_timeout_ms': 45_000,
  'share_groups.heartbeat_interval_ms': 5_000,
  'delayed.delay_max_ms': 604_800_000,
  'cluster.prefix': '/sluice/default/',
  'cluster.lease_ttl_ms': 3_000,
  'cluster.replication_factor': 3,
  'cluster.replica_lag_time_max_ms': 10_000,
  'cluster.leader_rebalance_interval_ms': 60_000,
  'cluster.inter_broker_user': null,
};

test('defaults are the ones the broker has always had, and the code takes them from the table', () => {
  const defaults = Object.fromEntries(SETTINGS.map((s) => [s.name, s.default]));
  assert.deepEqual(defaults, DEFAULTS_EXPECTED);
  for (const s of SETTINGS) {
    if (s.default === null) assert.ok(s.none, `${s.name}: says what no value means`);
    else assert.deepEqual(read_json(s.type, s.default), s.default, `${s.name}: its default passes its own check`);
  }
  assert.deepEqual(SHARE_GROUP_SETTINGS_DEFAULT, {
    session_timeout_ms: 45_000,
    heartbeat_interval_ms: 5_000,
    auto_offset_reset: 'earliest',
    tick_ms: 100,
    partition: {
      record_lock_duration_ms: 30_000,
      delivery_count_limit: 5,
      records_in_flight_max: 5_000,
      retry_backoff_ms: [1_000, 5_000, 30_000, 120_000],
    },
  });
  assert.equal(DELAYED_SETTINGS_DEFAULT.delay_max_ms, default_number('delayed.delay_max_ms'));
  assert.deepEqual(CLUSTER_DEFAULTS, {
    prefix: '/sluice/default/',
    lease_ttl_ms: 3_000,
    replication_factor_default: 3,
    leader_rebalance_interval_ms: 60_000,
  });
  assert.equal(REPLICA_SETTINGS_DEFAULT.replica_lag_time_max_ms, 10_000);
});

test('values as text: flags, environment variables, Kafka group configs', () => {
  const type = (name: string) => setting(name).type;
  assert.equal(read_text(type('share_groups.record_lock_duration_ms'), '1500'), 1500);
  assert.equal(read_text(type('share_groups.record_lock_duration_ms'), ' 1500 '), 1500);
  for (const bad of ['99', '3600001', '-5', '1.5', 'lots', '', '1e3']) {
    assert.equal(read_text(type('share_groups.record_lock_duration_ms'), bad), undefined, bad);
  }
  assert.deepEqual(read_text(type('share_groups.retry_backoff_ms'), '1000, 5000'), [1000, 5000]);
  assert.deepEqual(read_text(type('share_groups.retry_backoff_ms'), ''), [], 'empty: no backoff');
  assert.equal(read_text(type('share_groups.retry_backoff_ms'), '1,x'), undefined);
  assert.equal(read_text(type('share_groups.auto_offset_reset'), 'latest'), 'latest');
  assert.equal(read_text(type('share_groups.auto_offset_reset'), 'middle'), undefined);
  assert.equal(read_text(type('auto_create'), 'false'), false);
  assert.equal(read_text(type('auto_create'), '0'), true, 'only "false" turns it off, as SLUICE_AUTO_CREATE read');
  assert.equal(read_text(type('durability'), 'interval:50'), 'interval:50');
  assert.equal(read_text(type('durability'), 'sometimes'), undefined);
  assert.equal(read_text(type('http'), 'OFF'), 'OFF');
  assert.equal(read_text(type('kafka'), 'nonsense'), undefined);
  assert.equal(read_text(type('etcd'), 'http://a:2379, https://b:2379'), 'http://a:2379, https://b:2379');
  assert.equal(read_text(type('etcd'), 'a:2379'), undefined);
  assert.equal(read_text(type('share_groups.dead_letter_topic'), ''), '', 'empty: <topic>.<group>.dlq');
  assert.equal(read_text(type('share_groups.dead_letter_topic'), 'no spaces'), undefined);
  assert.equal(read_text(type('cluster.inter_broker_user'), ''), undefined);
  assert.deepEqual(host_port_of('[::1]:0'), { host: '::1', port: 0 });
  assert.equal(host_port_of(':9092'), null);
});

test('values from the JSON config file: their JSON type, or the text form as a string', () => {
  const type = (name: string) => setting(name).type;
  assert.equal(read_json(type('partitions'), 3), 3);
  assert.equal(read_json(type('partitions'), '3'), 3);
  assert.equal(read_json(type('partitions'), 0), undefined);
  assert.equal(read_json(type('partitions'), 2.5), undefined);
  assert.equal(read_json(type('delayed.delay_max_ms'), Number.MAX_SAFE_INTEGER + 1), undefined);
  assert.deepEqual(read_json(type('share_groups.retry_backoff_ms'), [10, 20]), [10, 20]);
  assert.equal(read_json(type('share_groups.retry_backoff_ms'), [-1]), undefined);
  assert.equal(read_json(type('share_groups.retry_backoff_ms'), 10), undefined);
  assert.equal(read_json(type('auto_create'), false), false);
  assert.equal(read_json(type('auto_create'), 'false'), false);
  assert.equal(read_json(type('auto_create'), 'no'), undefined);
  assert.equal(read_json(type('data'), 5), undefined, 'a text setting takes a string');
});

test('refusals name the setting where it was given and say what it takes', () => {
  const type = (name: string) => setting(name).type;
  assert.equal(refusal('--kafka', type('kafka'), 'nonsense', 'text'), '--kafka: expected HOST:PORT, got "nonsense"');
  const lock = type('share_groups.record_lock_duration_ms');
  assert.equal(
    refusal('config shareGroups.recordLockDurationMs', lock, 5, 'json'),
    'config shareGroups.recordLockDurationMs: an integer from 100 to 3600000, got 5',
  );
  assert.equal(
    refusal('config delayed.delayMaxMs', type('delayed.delay_max_ms'), -1, 'json'),
    'config delayed.delayMaxMs: a whole number of milliseconds >= 0, got -1',
  );
  assert.equal(
    refusal('config cluster.interBrokerUser', type('cluster.inter_broker_user'), '', 'json'),
    'config cluster.interBrokerUser: a user name, got ""',
  );
  assert.equal(expectation(type('share_groups.auto_offset_reset'), 'json'), '"earliest" or "latest"');
  const backoff = expectation(type('share_groups.retry_backoff_ms'), 'json');
  assert.equal(backoff, 'a list of non-negative integers (milliseconds)');
  // The Kafka group configs' messages are the ones they always were.
  const kafka = (name: string, value: string) => kafka_refusal(name, setting_of_group_config(name)!.type, value);
  assert.equal(
    kafka('share.record.lock.duration.ms', '5'),
    'share.record.lock.duration.ms=5: must be an integer from 100 to 3600000',
  );
  assert.equal(kafka('share.auto.offset.reset', 'x'), 'share.auto.offset.reset=x: must be earliest or latest');
  assert.equal(kafka('sluice.share.ordering', 'x'), 'sluice.share.ordering=x: must be none or key');
  assert.equal(
    kafka('sluice.share.retry.backoff.ms', 'x'),
    'sluice.share.retry.backoff.ms=x: must be a comma-separated list of milliseconds, e.g. 1000,5000,30000',
  );
  assert.equal(
    kafka('sluice.share.dlq.topic', 'a b'),
    'sluice.share.dlq.topic=a b: must be a topic name (1-249 of a-z A-Z 0-9 . _ -), or empty for <topic>.<group>.dlq',
  );
});

test('a group of the config file: unknown keys refused with the known ones listed, aliases accepted', () => {
  assert.equal(read_config_group('delayed', undefined), undefined);
  assert.throws(() => read_config_group('cluster', [1]), /^Error: config cluster: expected an object$/);
  assert.throws(
    () => read_config_group('delayed', { max: 1 }),
    /^Error: config delayed.max: unknown setting \(known: delayMaxMs\)$/,
  );
  const warnings: string[] = [];
  const values = read_config_group('delayed', { maxDelayMs: 60_000 }, (w) => warnings.push(w))!;
  assert.equal(values.get('delay_max_ms'), 60_000);
  assert.deepEqual(warnings, ['config delayed.maxDelayMs is deprecated: use delayed.delayMaxMs']);
  assert.equal(read_config_group('delayed', { delayMaxMs: 1 })!.get('delay_max_ms'), 1);
  assert.throws(
    () => read_config_group('delayed', { delayMaxMs: 1, maxDelayMs: 2 }),
    /the same setting as config delayed.delayMaxMs/,
  );
  assert.throws(
    () => read_config_group('cluster', { leaseTtlMs: 999 }),
    /config cluster.leaseTtlMs: a whole number of milliseconds >= 1000/,
  );
  const known = [...config_file_keys('share_groups').keys()];
  assert.deepEqual(
    known,
    [
      'recordLockDurationMs',
      'deliveryCountLimit',
      'recordsInFlightMax',
      'autoOffsetReset',
      'retryBackoffMs',
      'sessionTimeoutMs',
      'heartbeatIntervalMs',
    ],
    'per-group-only settings are not in the file',
  );
});

test('types and values as the docs and --help write them', () => {
  assert.equal(type_text(setting('share_groups.record_lock_duration_ms').type), 'integer 100–3600000 (ms)');
  assert.equal(type_text(setting('cluster.replication_factor').type), 'integer ≥ 1');
  assert.equal(type_text(setting('share_groups.ordering').type), 'none | key');
  assert.equal(type_text(setting('kafka').type), 'HOST:PORT');
  assert.equal(text_of([1, 2]), '1,2');
  assert.equal(text_of(true), 'true');
});
