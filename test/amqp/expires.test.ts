// x-expires against a broker process: an unused queue is deleted after its time, one with a
// consumer is kept until the consumer goes and the time passes again; basic.get and a second
// declare count as a use, a passive declare does not.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import amqp from 'amqplib';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { until } from '../support/until.ts';

let broker: BrokerProcess;
let connection: amqp.ChannelModel;

before(async () => {
  broker = await start_broker_process();
  connection = await amqp.connect(`amqp://guest:guest@${broker.amqp!}`);
});

after(async () => {
  await connection?.close();
  await broker?.stop();
});

/** Whether the queue exists (a passive declare; a missing queue closes the channel with 404). */
async function exists(name: string): Promise<boolean> {
  const channel = await connection.createChannel();
  channel.on('error', () => undefined);
  try {
    await channel.checkQueue(name);
    await channel.close();
    return true;
  } catch (error) {
    assert.match(String(error), /NOT_FOUND/);
    return false;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('x-expires: an unused queue goes after its time; uses restart the clock; a consumer keeps it', async () => {
  const channel = await connection.createChannel();
  await channel.assertQueue('expiring', { arguments: { 'x-expires': 800 } });
  await channel.assertQueue('consumed', { arguments: { 'x-expires': 800 } });
  const { consumerTag } = await channel.consume('consumed', () => undefined);
  for (let i = 0; i < 3; i++) {
    await sleep(400);
    await (i === 1 ? channel.assertQueue('expiring', { arguments: { 'x-expires': 800 } }) : channel.get('expiring'));
  }
  assert.ok(await exists('expiring'), 'used every 400 ms, so kept');
  await until(async () => !(await exists('expiring')), 'the unused queue deleted', 5_000);
  assert.ok(await exists('consumed'), 'a queue with a consumer is kept');
  await channel.cancel(consumerTag);
  await until(async () => !(await exists('consumed')), 'deleted once its consumer went', 5_000);
});
