// `sluice start` reads its settings through the settings table: refusals name the surface a value
// came from, old names keep working, and unknown top-level keys of the config file are only warned of.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse_cluster, parse_delayed, resolve_settings } from './start.ts';

function with_config<T>(config: unknown, body: (file: string) => T): T {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-start-settings-'));
  try {
    const file = path.join(dir, 'sluice.json');
    fs.writeFileSync(file, JSON.stringify(config));
    return body(file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

test('a refused value is named where it was given: flag, environment variable or config file', () => {
  assert.throws(
    () => resolve_settings({ partitions: '0' }, {}),
    /^Error: --partitions: an integer from 1 to 10000, got "0"$/,
  );
  assert.throws(() => resolve_settings({}, { SLUICE_NODE_ID: 'one' }), /^Error: SLUICE_NODE_ID: an integer from 0 to/);
  assert.throws(
    () => resolve_settings({}, { SLUICE_DURABILITY: 'sometimes' }),
    /^Error: SLUICE_DURABILITY: expected fsync, interval:MS or none, got "sometimes"$/,
  );
  with_config({ kafka: 9092, logLevel: 'loud' }, (file) => {
    assert.throws(() => resolve_settings({ config: file }, {}), /^Error: config kafka: expected HOST:PORT, got 9092$/);
    assert.throws(
      () => resolve_settings({ config: file, kafka: '127.0.0.1:0' }, {}),
      /^Error: config logLevel: "trace"/,
    );
  });
});

test('config file values may be JSON numbers or text; an empty text is "none" where there is no default', () => {
  with_config({ nodeId: 2, partitions: '4', advertise: '' }, (file) => {
    const settings = resolve_settings({ config: file }, { SLUICE_ETCD: '' });
    assert.equal(settings.nodeId, '2');
    assert.equal(settings.partitions, '4');
    assert.equal(settings.advertise, undefined);
    assert.equal(settings.etcd, undefined, 'an empty SLUICE_ETCD is a single node, as before');
  });
});

test('auto-create: --no-auto-create over SLUICE_AUTO_CREATE over the config file; only "false" turns it off', () => {
  assert.equal(resolve_settings({ autoCreate: true }, {}).autoCreate, true, "commander's default is not a given flag");
  assert.equal(resolve_settings({ autoCreate: false }, { SLUICE_AUTO_CREATE: 'true' }).autoCreate, false);
  assert.equal(resolve_settings({}, { SLUICE_AUTO_CREATE: 'false' }).autoCreate, false);
  assert.equal(resolve_settings({}, { SLUICE_AUTO_CREATE: '0' }).autoCreate, true);
  with_config({ autoCreate: false }, (file) => {
    assert.equal(resolve_settings({ config: file, autoCreate: true }, {}).autoCreate, false);
    assert.equal(resolve_settings({ config: file }, { SLUICE_AUTO_CREATE: 'yes' }).autoCreate, true);
  });
});

test('unknown top-level keys of the config file are ignored with a warning listing the known ones', () => {
  with_config({ data: 'd', kafkaBootstrap: 'x', delayed: { maxDelayMs: 1000 } }, (file) => {
    const settings = resolve_settings({ config: file }, {});
    assert.equal(settings.warnings.length, 1);
    assert.match(
      settings.warnings[0]!,
      /^config kafkaBootstrap: unknown setting, ignored \(known: data, kafka, .*shareGroups/,
    );
    const warnings: string[] = [];
    assert.deepEqual(
      parse_delayed(settings.delayed, (w) => warnings.push(w)),
      { delay_max_ms: 1000 },
    );
    assert.deepEqual(warnings, ['config delayed.maxDelayMs is deprecated: use delayed.delayMaxMs']);
  });
  assert.deepEqual(parse_delayed({ delayMaxMs: 5 }), { delay_max_ms: 5 });
});

test('the cluster object: table names to the cluster options, --etcd checked', () => {
  const cluster = parse_cluster('http://a:2379, http://b:2379', {
    prefix: '/x/',
    leaseTtlMs: 2000,
    replicationFactor: 2,
    replicaLagTimeMaxMs: 500,
    leaderRebalanceIntervalMs: 0,
  });
  assert.deepEqual(cluster, {
    etcd: ['http://a:2379', 'http://b:2379'],
    prefix: '/x/',
    lease_ttl_ms: 2000,
    replication_factor_default: 2,
    leader_rebalance_interval_ms: 0,
    replicas: { replica_lag_time_max_ms: 500 },
    inter_broker_user: undefined,
  });
  assert.throws(() => parse_cluster('a:2379', {}), /^Error: --etcd: expected http:\/\/HOST:PORT endpoints/);
  assert.throws(
    () => parse_cluster('http://a:2379', { replication: 3 }),
    /^Error: config cluster.replication: unknown setting \(known: prefix, leaseTtlMs, replicationFactor,/,
  );
});
