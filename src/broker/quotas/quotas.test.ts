import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { MetadataStore } from '../../core/metadata_store.ts';
import { quota_entity_key, type ClientQuota, type QuotaEntity, type QuotaValues } from '../../core/quotas.ts';
import { BrokerError } from '../../core/errors.ts';
import { Quotas } from './quotas.ts';
import { QUOTA_THROTTLE_MS_MAX } from './rate_buckets.ts';

/** Just the quota part of a metadata store. */
function quota_store(): MetadataStore {
  let quotas: ClientQuota[] = [];
  const store: Pick<MetadataStore, 'client_quotas' | 'set_client_quota'> = {
    client_quotas: () => quotas,
    set_client_quota(entity: QuotaEntity, values: QuotaValues | null) {
      const others = quotas.filter((quota) => quota_entity_key(quota.entity) !== quota_entity_key(entity));
      quotas = values ? [...others, { entity, values }] : others;
      return Promise.resolve();
    },
  };
  return store as MetadataStore;
}

function quotas_at(now: { ms: number }, exempt: string[] = []): Quotas {
  return new Quotas(quota_store(), exempt, () => now.ms);
}

const alice = { user: 'alice', client_id: 'app' };

test('the most specific quota applies, key by key, in Kafka order', async () => {
  const quotas = quotas_at({ ms: 0 });
  await quotas.alter({ 'client-id': null }, { producer_byte_rate: 1000 }, [], false);
  assert.equal(quotas.record(alice, 'producer_byte_rate', 2000), 1000, 'default client id: 1 s over the burst');
  await quotas.alter({ user: 'alice' }, { producer_byte_rate: 4000 }, [], false);
  await quotas.alter({ user: 'alice', 'client-id': 'app' }, { consumer_byte_rate: 10 }, [], false);
  // The user's quota outranks the default client id's; the user-and-client entity sets another key only.
  assert.equal(quotas.record(alice, 'producer_byte_rate', 4000), 0);
  assert.equal(quotas.record(alice, 'producer_byte_rate', 2000), 500);
  assert.equal(quotas.record({ user: 'bob', client_id: 'other' }, 'producer_byte_rate', 1000), 0);
  // bob's client id "app" shares the default client id's measure with alice's first request.
  assert.equal(quotas.record({ user: 'bob', client_id: 'app' }, 'producer_byte_rate', 1000), 2000);
  assert.equal(quotas.record(alice, 'request_percentage', 1e6), 0, 'no quota on request time');
});

test('a default applies to each client on its own; a named entity to all its clients together', async () => {
  const now = { ms: 0 };
  const quotas = quotas_at(now);
  await quotas.alter({ user: null }, { producer_byte_rate: 100 }, [], false);
  assert.equal(quotas.record({ user: 'a', client_id: 'x' }, 'producer_byte_rate', 200), 1000);
  assert.equal(
    quotas.record({ user: 'b', client_id: 'x' }, 'producer_byte_rate', 100),
    0,
    'b is measured apart from a',
  );
  // A default user's quota outranks a client id's: the client-id quota is for clients without a user quota.
  await quotas.alter({ 'client-id': 'shared' }, { consumer_byte_rate: 100 }, [], false);
  assert.equal(quotas.record({ user: 'a', client_id: 'shared' }, 'producer_byte_rate', 0), 1000);
  assert.equal(quotas.record({ user: 'c', client_id: 'shared' }, 'consumer_byte_rate', 100), 0);
  assert.equal(quotas.record({ user: 'd', client_id: 'shared' }, 'consumer_byte_rate', 100), 1000, 'c and d together');
});

test('a client throttled for its debt is back within its quota once the throttle has passed', async () => {
  const now = { ms: 0 };
  const quotas = quotas_at(now);
  await quotas.alter({ user: 'alice' }, { producer_byte_rate: 1000 }, [], false);
  let sent = 0;
  // A client that waits out every throttle sends at the quota's rate, plus one window's burst.
  while (now.ms < 60_000) {
    sent += 300;
    now.ms += Math.max(1, quotas.record(alice, 'producer_byte_rate', 300));
  }
  const rate = sent / (now.ms / 1000);
  assert.ok(rate >= 1000 && rate <= 1000 * 1.02, `rate ${rate} B/s`);
  assert.equal(quotas.record(alice, 'producer_byte_rate', 1e9), QUOTA_THROTTLE_MS_MAX, 'one throttle is bounded');
});

test('request_percentage is milliseconds of request time per 10 ms', async () => {
  const quotas = quotas_at({ ms: 0 });
  await quotas.alter({ user: 'alice' }, { request_percentage: 10 }, [], false);
  assert.equal(quotas.record(alice, 'request_percentage', 100), 0, 'one window holds 100 ms');
  assert.equal(quotas.record(alice, 'request_percentage', 100), 1000);
});

test('exempt users (the brokers) are never throttled', async () => {
  const quotas = quotas_at({ ms: 0 }, ['broker']);
  await quotas.alter({ user: null }, { producer_byte_rate: 1 }, [], false);
  assert.equal(quotas.record({ user: 'broker', client_id: '' }, 'producer_byte_rate', 1e6), 0);
});

test('bad quotas are refused with the reason', async () => {
  const quotas = quotas_at({ ms: 0 });
  const refused = (entity: QuotaEntity, values: QuotaValues, reason: RegExp) =>
    assert.rejects(quotas.alter(entity, values, [], false), (error: unknown) => {
      assert.ok(error instanceof BrokerError && error.kind === 'invalid_request');
      assert.match(error.message, reason);
      return true;
    });
  await refused({ user: 'a' }, { producer_byte_rate: -5 }, /positive/);
  await refused({ user: 'a' }, { producer_byte_rate: 0 }, /positive/);
  await refused({ user: 'a' }, { consumer_byte_rate: 1.5 }, /whole number/);
  await refused({ user: 'a' }, { request_percentage: Number.NaN }, /positive/);
  await refused({}, { producer_byte_rate: 5 }, /no type/);
  await refused({ user: '' }, { producer_byte_rate: 5 }, /empty/);
  assert.equal(quotas.list({ components: [], strict: false }).length, 0);
});

test('altering merges, removing the last key removes the entity; filters match as Kafka describes', async () => {
  const quotas = quotas_at({ ms: 0 });
  await quotas.alter({ user: 'a' }, { producer_byte_rate: 5 }, [], false);
  await quotas.alter({ user: 'a' }, { consumer_byte_rate: 6 }, [], false);
  await quotas.alter({ user: 'a', 'client-id': null }, { consumer_byte_rate: 7 }, [], false);
  await quotas.alter({ 'client-id': 'x' }, { consumer_byte_rate: 8 }, [], true);
  const all = quotas.list({ components: [], strict: false });
  assert.deepEqual(all[0], { entity: { user: 'a' }, values: { producer_byte_rate: 5, consumer_byte_rate: 6 } });
  assert.equal(all.length, 2, 'validate_only stores nothing');
  const user_a = { entity_type: 'user' as const, match: { name: 'a' } };
  assert.equal(quotas.list({ components: [user_a], strict: true }).length, 1);
  assert.equal(quotas.list({ components: [user_a], strict: false }).length, 2);
  const default_client = { entity_type: 'client-id' as const, match: 'default' as const };
  assert.equal(quotas.list({ components: [default_client], strict: false }).length, 1);
  await quotas.alter({ user: 'a' }, {}, ['producer_byte_rate', 'consumer_byte_rate'], false);
  assert.equal(quotas.list({ components: [], strict: false }).length, 1);
});
