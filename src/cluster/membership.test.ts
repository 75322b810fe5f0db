import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Membership } from './membership.ts';
import type { EtcdStore } from './etcd_store.ts';
import type { BrokerRegistration } from './model.ts';
import { SILENT_LOGGER, SYSTEM_CLOCK } from '../core/clock.ts';

const ME: BrokerRegistration = { node_id: 2, host: '10.0.0.2', port: 9092, started_ms: 0, dir_id: 'dir-a' };

/** A store whose key for node 2 is taken `taken` more times, its holder gone before it is looked at. */
function fake_store(taken: number) {
  let refusals = taken;
  const store = {
    ns: { lease: () => ({ grant: async () => 'lease-1', revoke: async () => undefined }) },
    register_broker: async () => refusals-- <= 0,
    registered_broker: async () => null, // expired meanwhile
    client: { leaseClient: { leaseRevoke: async () => undefined } },
  };
  return store as unknown as EtcdStore;
}

const EXPIRED = 'a restart whose previous registration expires while it is refused joins';

test(`${EXPIRED} (registration_expired_between_refusal_and_look)`, async () => {
  const membership = new Membership(fake_store(2), ME, 2000, SILENT_LOGGER, SYSTEM_CLOCK);
  await membership.join();
  assert.equal(membership.lease_id, 'lease-1');
  await membership.close();
});
