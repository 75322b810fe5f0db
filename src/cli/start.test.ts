import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  inter_broker_login,
  parse_cluster,
  parse_delayed,
  parse_http,
  parse_share_groups,
  resolve_settings,
  tls_files,
} from './start.ts';

test('settings: flags over environment over the --config file over defaults', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-settings-'));
  try {
    const file = path.join(dir, 'sluice.json');
    fs.writeFileSync(
      file,
      JSON.stringify({
        data: 'from-file',
        durability: 'none',
        partitions: '3',
        autoCreate: false,
        shareGroups: { recordLockDurationMs: 1500 },
      }),
    );
    const settings = resolve_settings({ config: file, partitions: '5' }, { SLUICE_DURABILITY: 'interval:50' });
    assert.equal(settings.data, 'from-file');
    assert.equal(settings.durability, 'interval:50');
    assert.equal(settings.partitions, '5');
    assert.equal(settings.autoCreate, false);
    assert.equal(parse_share_groups(settings.shareGroups)!.partition!.record_lock_duration_ms, 1500);
    assert.equal(resolve_settings({}, { SLUICE_CONFIG: file }).data, 'from-file', 'SLUICE_CONFIG names the file too');
    assert.equal(resolve_settings({}, {}).data, './sluice-data');
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('share-group settings are checked', () => {
  assert.equal(parse_share_groups(undefined), undefined);
  const parsed = parse_share_groups({ deliveryCountLimit: 7, retryBackoffMs: [10, 20], autoOffsetReset: 'latest' })!;
  assert.equal(parsed.partition!.delivery_count_limit, 7);
  assert.deepEqual(parsed.partition!.retry_backoff_ms, [10, 20]);
  assert.equal(parsed.auto_offset_reset, 'latest');
  assert.throws(() => parse_share_groups({ lockMs: 5 }), /unknown setting/);
  assert.throws(() => parse_share_groups({ recordLockDurationMs: 5 }), /from 100 to/);
  assert.throws(() => parse_share_groups({ retryBackoffMs: [-1] }), /non-negative/);
  assert.throws(() => parse_share_groups({ autoOffsetReset: 'middle' }), /earliest/);
  assert.throws(() => parse_share_groups([]), /expected an object/);
});

test('delayed-delivery settings are checked', () => {
  assert.equal(parse_delayed(undefined), undefined);
  assert.deepEqual(parse_delayed({ maxDelayMs: 60_000 }), { delay_max_ms: 60_000 });
  assert.throws(() => parse_delayed({ maxDelayMs: -1 }), /whole number/);
  assert.throws(() => parse_delayed({ max: 1 }), /unknown setting/);
});

test('--http: HOST:PORT, or off', () => {
  assert.deepEqual(parse_http('127.0.0.1:8080'), { host: '127.0.0.1', port: 8080 });
  assert.deepEqual(parse_http('[::1]:0'), { host: '::1', port: 0 });
  assert.equal(parse_http('off'), null);
  assert.throws(() => parse_http('nonsense'), /--http: expected HOST:PORT/);
  assert.equal(resolve_settings({}, {}).http, '127.0.0.1:8080', 'on by default, on the loopback interface');
  assert.equal(resolve_settings({}, { SLUICE_HTTP: 'off' }).http, 'off');
});

test('cluster.interBrokerUser: required with --sasl-users in a cluster, and a user of that file', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-inter-broker-'));
  const users_file = path.join(dir, 'users.json');
  fs.writeFileSync(users_file, JSON.stringify({ users: { alice: 'a-secret', broker: 'b-secret' } }));
  try {
    const cluster = (extra: Record<string, unknown> = {}) => parse_cluster('http://127.0.0.1:2379', extra);
    assert.equal(inter_broker_login(cluster(), undefined), null, 'no SASL, no login');
    assert.deepEqual(inter_broker_login(cluster({ interBrokerUser: 'broker' }), users_file), {
      mechanism: 'scram-sha-512',
      username: 'broker',
      password: 'b-secret',
    });
    assert.throws(() => inter_broker_login(cluster(), users_file), /set config cluster.interBrokerUser/);
    assert.throws(
      () => inter_broker_login(cluster({ interBrokerUser: 'mallory' }), users_file),
      /"mallory" is not a user of/,
    );
    assert.throws(
      () => inter_broker_login(cluster({ interBrokerUser: 'broker' }), undefined),
      /only with --sasl-users/,
    );
    assert.throws(() => cluster({ interBrokerUser: '' }), /cluster.interBrokerUser: a user name/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('TLS flags: cert and key together, client certificates need a CA, --dev-tls makes its own', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-tls-flags-'));
  try {
    assert.equal(tls_files(resolve_settings({}, {})), null);
    assert.throws(() => tls_files(resolve_settings({ tlsCert: 'b.pem' }, {})), /go together/);
    const pair = { tlsCert: 'b.pem', tlsKey: 'b.key' };
    assert.throws(() => tls_files(resolve_settings({ ...pair, tlsClientAuth: 'required' }, {})), /needs --tls-ca/);
    assert.throws(() => tls_files(resolve_settings({ tlsCa: 'ca.pem' }, {})), /need --tls-cert/);
    const mutual = tls_files(resolve_settings({ ...pair, tlsCa: 'ca.pem', tlsClientAuth: 'requested' }, {}));
    assert.equal(mutual?.client_auth, 'requested');
    assert.equal(mutual?.ca_file, path.resolve('ca.pem'));
    assert.throws(() => tls_files(resolve_settings({ devTls: true, tlsCert: 'b.pem' }, {})), /makes its own/);
    const dev = tls_files(resolve_settings({ devTls: true, data: dir }, {}), ['0.0.0.0', 'broker.example']);
    assert.equal(dev?.ca_file, path.join(dir, 'dev-tls', 'ca.pem'));
    assert.ok(fs.existsSync(dev!.cert_file) && fs.existsSync(dev!.key_file));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
