// A share-group member's wait for records on a broker that has just stopped coordinating share
// groups: the subscription fails, and the member wakes its consumer instead of throwing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ShareMember } from './share_member.ts';
import { BrokerError, type Core, type QueueRecord } from '../../core/index.ts';

test('amqp_consumer_waiting_when_its_coordinator_moved: the wait wakes instead of throwing', async () => {
  const core = {
    shares: {
      on_available: () => {
        throw new BrokerError('not_coordinator', 'broker 1 is not the share-group coordinator');
      },
    },
  } as unknown as Core;
  const queue = { name: 'q', topic: 'q', group_id: 'amqp.q' } as QueueRecord;
  const member = new ShareMember(core, queue, '127.0.0.1', () => undefined);
  const woken = new Promise<void>((resolve) => {
    const unsubscribe = member.on_records(resolve);
    assert.equal(typeof unsubscribe, 'function');
  });
  await woken; // the consumer's next fetch then finds the coordinator gone and cancels it
});
