// Exchanges and queue lifetimes through amqplib against a broker process: exchange-to-exchange
// bindings, alternate exchanges, headers matching, internal and passive exchanges, mandatory
// publishes returned, auto-delete exchanges and queues, and durable against transient
// declarations across a restart.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import amqp, { type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { until } from '../support/until.ts';

let broker: BrokerProcess;

before(async () => {
  broker = await start_broker_process();
});

after(async () => {
  await broker?.stop();
});

const connect = () => amqp.connect(`amqp://guest:guest@${broker.amqp!}`);

/** The next message of `queue`, waiting for it to arrive. */
async function next(channel: Channel, queue: string): Promise<string> {
  const message = await until(async () => await channel.get(queue, { noAck: true }), queue);
  return message.content.toString();
}

/** The reply code of the channel exception `action` raises; undefined when it raises none. */
async function channel_error(connection: ChannelModel, action: (channel: Channel) => Promise<unknown>) {
  const channel = await connection.createChannel();
  channel.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => channel.once('close', () => resolve()));
  const error = (await action(channel).then(
    () => null,
    (e: unknown) => e,
  )) as { code?: number } | null;
  if (error === null) {
    await channel.close();
    return undefined;
  }
  await closed;
  return error.code;
}

test('exchange-to-exchange bindings, an alternate exchange and headers matching route as RabbitMQ does', async () => {
  const connection = await connect();
  const channel = await connection.createConfirmChannel();
  await channel.assertExchange('e2e.front', 'fanout', { alternateExchange: 'e2e.unrouted' });
  await channel.assertExchange('e2e.topics', 'topic');
  await channel.assertExchange('e2e.unrouted', 'fanout');
  await channel.assertExchange('e2e.headers', 'headers');
  for (const q of ['e2e.orders', 'e2e.lost', 'e2e.all', 'e2e.any']) await channel.assertQueue(q);
  await channel.bindExchange('e2e.topics', 'e2e.front', '');
  await channel.bindQueue('e2e.orders', 'e2e.topics', 'order.#');
  await channel.bindQueue('e2e.lost', 'e2e.unrouted', '');
  await channel.bindQueue('e2e.all', 'e2e.headers', '', { 'x-match': 'all', kind: 'a', size: 'l' });
  await channel.bindQueue('e2e.any', 'e2e.headers', '', { 'x-match': 'any', kind: 'a', size: 'l' });

  channel.publish('e2e.front', 'order.created', Buffer.from('through two exchanges'));
  channel.publish('e2e.topics', 'invoice.sent', Buffer.from('routed nowhere: topics has no alternate'));
  await channel.unbindExchange('e2e.topics', 'e2e.front', '');
  channel.publish('e2e.front', 'order.created', Buffer.from('unroutable, to the alternate'));
  channel.publish('e2e.headers', '', Buffer.from('both'), { headers: { kind: 'a', size: 'l' } });
  channel.publish('e2e.headers', '', Buffer.from('one'), { headers: { kind: 'a', size: 's' } });
  await channel.waitForConfirms();

  assert.equal(await next(channel, 'e2e.orders'), 'through two exchanges');
  assert.equal(await next(channel, 'e2e.lost'), 'unroutable, to the alternate');
  assert.equal(await next(channel, 'e2e.all'), 'both');
  assert.deepEqual([await next(channel, 'e2e.any'), await next(channel, 'e2e.any')], ['both', 'one']);
  for (const q of ['e2e.orders', 'e2e.lost', 'e2e.all', 'e2e.any'])
    assert.equal(await channel.get(q, { noAck: true }), false, `${q}: nothing more`);
  await connection.close();
});

test('mandatory publishes that route nowhere come back with basic.return (312 NO_ROUTE)', async () => {
  const connection = await connect();
  const channel = await connection.createConfirmChannel();
  await channel.assertExchange('e2e.mandatory', 'direct');
  await channel.assertQueue('e2e.mandatory.q');
  await channel.bindQueue('e2e.mandatory.q', 'e2e.mandatory', 'here');
  const returned: ConsumeMessage[] = [];
  channel.on('return', (message: ConsumeMessage) => returned.push(message));
  channel.publish('e2e.mandatory', 'nowhere', Buffer.from('back'), { mandatory: true });
  channel.publish('e2e.mandatory', 'nowhere', Buffer.from('dropped'), { mandatory: false });
  channel.publish('e2e.mandatory', 'here', Buffer.from('stored'), { mandatory: true });
  await channel.waitForConfirms();
  await until(async () => returned.length > 0 || null, 'basic.return');
  assert.equal(returned.length, 1);
  const fields = returned[0]!.fields as unknown as { replyCode: number; routingKey: string };
  assert.equal(fields.replyCode, 312);
  assert.equal(fields.routingKey, 'nowhere');
  assert.equal(returned[0]!.content.toString(), 'back');
  assert.equal(await next(channel, 'e2e.mandatory.q'), 'stored');
  await connection.close();
});

test('internal exchanges refuse publishes (403), passive declares of missing ones fail (404)', async () => {
  const connection = await connect();
  const channel = await connection.createChannel();
  await channel.assertExchange('e2e.inner', 'fanout', { internal: true });
  await channel.close();
  const publish_internal = (c: Channel) => {
    c.publish('e2e.inner', '', Buffer.from('x'));
    return c.checkQueue('amq.never-there.e2e'); // a round trip after the publish
  };
  assert.equal(await channel_error(connection, publish_internal), 403);
  assert.equal(await channel_error(connection, (c) => c.checkExchange('e2e.no-such-exchange')), 404);
  await connection.close();
});

test('auto-delete: an exchange goes with its last binding, a queue with its last consumer', async () => {
  const connection = await connect();
  const channel = await connection.createChannel();
  await channel.assertExchange('e2e.auto', 'direct', { autoDelete: true });
  await channel.assertQueue('e2e.auto.q1');
  await channel.assertQueue('e2e.auto.q2', { autoDelete: true });
  await channel.bindQueue('e2e.auto.q1', 'e2e.auto', 'a');
  await channel.bindQueue('e2e.auto.q2', 'e2e.auto', 'b');
  await channel.unbindQueue('e2e.auto.q1', 'e2e.auto', 'a');
  await channel.checkExchange('e2e.auto'); // one binding left
  const { consumerTag } = await channel.consume('e2e.auto.q2', () => undefined);
  await channel.cancel(consumerTag); // q2 goes with its last consumer, and its binding with it
  assert.equal(await channel_error(connection, (c) => c.checkQueue('e2e.auto.q2')), 404);
  assert.equal(await channel_error(connection, (c) => c.checkExchange('e2e.auto')), 404);
  await connection.close();
});

test('durable exchanges and queues outlive a restart; transient ones do not', async () => {
  const connection = await connect();
  const channel = await connection.createChannel();
  await channel.assertExchange('e2e.kept', 'fanout', { durable: true });
  await channel.assertExchange('e2e.gone', 'fanout', { durable: false });
  await channel.assertQueue('e2e.kept.q', { durable: true });
  await channel.assertQueue('e2e.gone.q', { durable: false });
  await channel.bindQueue('e2e.kept.q', 'e2e.kept', '');
  await connection.close();
  const data_dir = broker.data_dir;
  await broker.stop();
  broker = await start_broker_process({ data_dir });
  const again = await connect();
  const check = await again.createChannel();
  await check.checkExchange('e2e.kept');
  await check.checkQueue('e2e.kept.q');
  check.publish('e2e.kept', '', Buffer.from('still bound'));
  assert.equal(await next(check, 'e2e.kept.q'), 'still bound');
  assert.equal(await channel_error(again, (c) => c.checkExchange('e2e.gone')), 404);
  assert.equal(await channel_error(again, (c) => c.checkQueue('e2e.gone.q')), 404);
  await again.close();
});
