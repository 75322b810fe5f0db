// The security workload's properties (faults/checker/security_properties.ts) on hand-made
// histories: a clean one passes, and each planted fault fails it with the property it breaks — a
// probe that saw the secret topic listed or its records, a removed user logging in or a present
// one refused, a broker describing a config other than its last change, a producer past its quota.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { check_history } from '../../faults/checker/check.ts';
import type { AclProbeOp, BrokerConfigOp, HistoryOp, QuotaUseOp, UserLoginOp } from '../../faults/checker/history.ts';

const probe = (listed = false, records = 0): AclProbeOp => ({
  kind: 'acl_probe',
  broker: 'b1',
  listed,
  records,
  error_code: 29,
  at_ms: 10,
});
const login = (expected: 'present' | 'absent', logged_in: boolean): UserLoginOp => ({
  kind: 'user_login',
  user: 'temp-1',
  expected,
  broker: 'b2',
  logged_in,
  at_ms: 20,
});
const config = (value: string | null): BrokerConfigOp => ({
  kind: 'broker_config',
  broker: 2,
  name: 'max.connections.per.ip',
  value,
  allowed: ['100007', '100008'],
  at_ms: 30,
});
const quota = (bytes: number): QuotaUseOp => ({
  kind: 'quota_use',
  bytes,
  seconds: 100,
  bytes_per_s: 1000,
  brokers: 3,
});

const broken = (ops: HistoryOp[]) => check_history(ops).failures.map((failure) => failure.property);

test('a clean security history passes', () => {
  const ops = [
    probe(),
    login('present', true),
    login('absent', false),
    config('100007'),
    config('100008'),
    quota(300_000),
  ];
  const result = check_history(ops);
  assert.equal(result.valid, true, JSON.stringify(result.failures));
});

test('each planted fault breaks its property', () => {
  assert.deepEqual(broken([probe(true)]), ['acl_held']);
  assert.deepEqual(broken([probe(false, 70)]), ['acl_held']);
  assert.deepEqual(broken([login('absent', true)]), ['users_converge']);
  assert.deepEqual(broken([login('present', false)]), ['users_converge']);
  assert.deepEqual(broken([quota(1000 * 3 * 111)]), ['quota_held']);
  assert.deepEqual(broken([config('100006')]), ['broker_configs_converge']);
  assert.deepEqual(broken([config(null)]), ['broker_configs_converge']);
});
