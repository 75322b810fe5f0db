// AMQP transactions (tx.select / tx.commit / tx.rollback) against broker processes: a rollback
// leaves no trace of its publishes and hands its acknowledgements back; a commit shows them all at
// once; a broker killed before the commit shows none of the transaction after its restart.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { RawAmqp } from '../support/amqp_raw.ts';
import { method_frame, content_frames } from '../../src/protocol/amqp/frame_writer.ts';

const brokers: BrokerProcess[] = [];

after(async () => {
  for (const b of brokers) await b.stop();
});

function publish(raw: RawAmqp, queue: string, body: string): void {
  raw.write(
    Buffer.concat([
      method_frame(1, 'basic.publish', { exchange: '', routing_key: queue }),
      ...content_frames(1, 60, Buffer.from(body), { delivery_mode: 2 }, 131_072),
    ]),
  );
}

async function count(raw: RawAmqp, queue: string): Promise<number> {
  raw.send(1, 'queue.declare', { queue, passive: true });
  return (await raw.expect('queue.declare-ok')).args.message_count;
}

test('tx.rollback leaves no trace; tx.commit makes every publish and ack visible at once', async () => {
  const broker = await start_broker_process();
  brokers.push(broker);
  const raw = await RawAmqp.open(broker.amqp!);
  raw.send(1, 'queue.declare', { queue: 'tx', durable: true });
  await raw.expect('queue.declare-ok');
  publish(raw, 'tx', 'before');
  raw.send(1, 'tx.select', {});
  await raw.expect('tx.select-ok');
  publish(raw, 'tx', 'rolled back');
  raw.send(1, 'tx.rollback', {});
  await raw.expect('tx.rollback-ok');
  assert.equal(await count(raw, 'tx'), 1, 'the rolled-back publish is not there');

  raw.send(1, 'basic.get', { queue: 'tx', no_ack: false });
  const got = await raw.expect('basic.get-ok');
  raw.send(1, 'basic.ack', { delivery_tag: got.args.delivery_tag });
  raw.send(1, 'tx.rollback', {});
  await raw.expect('tx.rollback-ok');
  raw.send(1, 'basic.ack', { delivery_tag: got.args.delivery_tag }); // still unacknowledged after the rollback
  for (const body of ['a', 'b', 'c']) publish(raw, 'tx', body);
  assert.equal(await count(raw, 'tx'), 0, 'nothing of the open transaction is visible');
  raw.send(1, 'tx.commit', {});
  await raw.expect('tx.commit-ok');
  assert.equal(await count(raw, 'tx'), 3, 'the ack and the three publishes took effect together');
  raw.close();
});

test('a broker killed before tx.commit shows none of the transaction after the restart', async () => {
  const data_dir = new_data_dir('amqp-tx');
  const first = await start_broker_process({ data_dir });
  brokers.push(first);
  const raw = await RawAmqp.open(first.amqp!);
  raw.send(1, 'queue.declare', { queue: 'tx-crash', durable: true });
  await raw.expect('queue.declare-ok');
  raw.send(1, 'tx.select', {});
  await raw.expect('tx.select-ok');
  for (let i = 0; i < 100; i++) publish(raw, 'tx-crash', `m${i}`);
  raw.send(1, 'queue.declare', { queue: 'tx-crash', passive: true });
  await raw.expect('queue.declare-ok');
  await first.kill();
  const second = await start_broker_process({ data_dir });
  brokers.push(second);
  const again = await RawAmqp.open(second.amqp!);
  assert.equal(await count(again, 'tx-crash'), 0);
  again.send(1, 'tx.select', {});
  await again.expect('tx.select-ok');
  for (let i = 0; i < 100; i++) publish(again, 'tx-crash', `m${i}`);
  again.send(1, 'tx.commit', {});
  await again.expect('tx.commit-ok');
  assert.equal(await count(again, 'tx-crash'), 100, 'a committed transaction is all there');
  again.close();
});
