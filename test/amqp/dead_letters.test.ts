// Queue arguments against a broker process with amqplib: expired (queue TTL and per-message
// expiration), rejected and over-delivered messages reach the dead-letter exchange's queue with
// x-death; x-max-length with reject-publish and drop-head, and with a dead-letter exchange
// drop-head and reject-publish-dlx dead-lettering (maxlen); an x-delayed-message exchange holds a
// message for its x-delay.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import amqp from 'amqplib';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { until } from '../support/until.ts';

let broker: BrokerProcess;
let connection: amqp.ChannelModel;
let channel: amqp.ConfirmChannel;

before(async () => {
  broker = await start_broker_process();
  connection = await amqp.connect(`amqp://guest:guest@${broker.amqp!}`);
  channel = await connection.createConfirmChannel();
});

after(async () => {
  await connection?.close();
  await broker?.stop();
});

/** A queue whose dead letters go through fanout exchange `<name>.dlx` to queue `<name>.dead`. */
async function with_dead_letters(name: string, args: Record<string, unknown>): Promise<string> {
  await channel.assertExchange(`${name}.dlx`, 'fanout', { durable: true });
  await channel.assertQueue(`${name}.dead`, { durable: true });
  await channel.bindQueue(`${name}.dead`, `${name}.dlx`, '');
  await channel.assertQueue(name, { durable: true, arguments: { 'x-dead-letter-exchange': `${name}.dlx`, ...args } });
  return `${name}.dead`;
}

async function next_from(queue: string): Promise<amqp.GetMessage> {
  return until(async () => await channel.get(queue, { noAck: true }), `a message in ${queue}`, 20_000);
}

type Death = { reason: string; queue: string; count: number };
const deaths_of = (m: amqp.GetMessage) => m.properties.headers?.['x-death'] as Death[] | undefined;

test('a queue TTL expires a message to the dead-letter exchange, with x-death', async () => {
  const dead = await with_dead_letters('short-lived', { 'x-message-ttl': 200 });
  channel.sendToQueue('short-lived', Buffer.from('too late'), { headers: { keep: 'me' } });
  await channel.waitForConfirms();
  const m = await next_from(dead);
  assert.equal(m.content.toString(), 'too late');
  assert.equal(deaths_of(m)?.[0]?.reason, 'expired');
  assert.equal(deaths_of(m)?.[0]?.queue, 'short-lived');
  assert.equal(deaths_of(m)?.[0]?.count, 1);
  assert.equal(String(m.properties.headers?.['x-first-death-reason']), 'expired');
  assert.equal(String(m.properties.headers?.['keep']), 'me', 'its own headers kept');
});

test('a per-message expiration does the same', async () => {
  const dead = await with_dead_letters('per-message', {});
  channel.sendToQueue('per-message', Buffer.from('expires'), { expiration: '150' });
  channel.sendToQueue('per-message', Buffer.from('stays'));
  await channel.waitForConfirms();
  const m = await next_from(dead);
  assert.equal(m.content.toString(), 'expires');
  assert.equal(deaths_of(m)?.[0]?.reason, 'expired');
  assert.equal(m.properties.expiration, undefined, 'the expiration is removed');
  const kept = await next_from('per-message');
  assert.equal(kept.content.toString(), 'stays');
});

test('a rejected message (requeue false) is dead-lettered as rejected', async () => {
  const dead = await with_dead_letters('picky', {});
  channel.sendToQueue('picky', Buffer.from('no thanks'));
  await channel.waitForConfirms();
  const m = await until(async () => await channel.get('picky'), 'the message');
  channel.reject(m, false);
  const letter = await next_from(dead);
  assert.equal(deaths_of(letter)?.[0]?.reason, 'rejected');
});

test('x-delivery-limit sends a poison message to the dead-letter exchange', async () => {
  const dead = await with_dead_letters('poison', { 'x-delivery-limit': 2 });
  channel.sendToQueue('poison', Buffer.from('crashes every consumer'));
  await channel.waitForConfirms();
  for (let i = 0; i < 2; i++) {
    const m = await until(async () => await channel.get('poison'), `delivery ${i + 1}`);
    channel.nack(m, false, true);
  }
  const letter = await next_from(dead);
  assert.equal(letter.content.toString(), 'crashes every consumer');
  assert.equal(deaths_of(letter)?.[0]?.reason, 'delivery_limit');
});

test('x-max-length: reject-publish nacks what does not fit, drop-head drops the oldest', async () => {
  await channel.assertQueue('bounded', { arguments: { 'x-max-length': 3, 'x-overflow': 'reject-publish' } });
  const outcomes: Array<'ack' | 'nack'> = [];
  for (let i = 0; i < 4; i++) {
    await new Promise<void>((resolve) =>
      channel.sendToQueue('bounded', Buffer.from(`m${i}`), {}, (error) => {
        outcomes.push(error ? 'nack' : 'ack');
        resolve();
      }),
    );
  }
  assert.deepEqual(outcomes, ['ack', 'ack', 'ack', 'nack']);
  assert.equal((await channel.checkQueue('bounded')).messageCount, 3);

  await channel.assertQueue('rolling', { arguments: { 'x-max-length': 2, 'x-overflow': 'drop-head' } });
  for (let i = 0; i < 4; i++) channel.sendToQueue('rolling', Buffer.from(`r${i}`));
  await channel.waitForConfirms();
  const bodies: string[] = [];
  for (let m = await channel.get('rolling', { noAck: true }); m; m = await channel.get('rolling', { noAck: true }))
    bodies.push(m.content.toString());
  assert.deepEqual(bodies, ['r2', 'r3']);
});

test('with a dead-letter exchange, drop-head and reject-publish-dlx dead-letter what they push out', async () => {
  const dropped = await with_dead_letters('rolling-dlx', { 'x-max-length': 2, 'x-overflow': 'drop-head' });
  for (let i = 0; i < 3; i++) channel.sendToQueue('rolling-dlx', Buffer.from(`d${i}`));
  await channel.waitForConfirms();
  const oldest = await next_from(dropped);
  assert.equal(oldest.content.toString(), 'd0');
  assert.equal(deaths_of(oldest)?.[0]?.reason, 'maxlen');
  assert.equal(deaths_of(oldest)?.[0]?.queue, 'rolling-dlx');

  const refused = await with_dead_letters('bounded-dlx', { 'x-max-length': 1, 'x-overflow': 'reject-publish-dlx' });
  const outcomes: string[] = [];
  for (const body of ['kept', 'refused'])
    await new Promise<void>((resolve) =>
      channel.sendToQueue('bounded-dlx', Buffer.from(body), {}, (error) => {
        outcomes.push(error ? 'nack' : 'ack');
        resolve();
      }),
    );
  assert.deepEqual(outcomes, ['ack', 'nack']);
  const letter = await next_from(refused);
  assert.equal(letter.content.toString(), 'refused');
  assert.equal(deaths_of(letter)?.[0]?.reason, 'maxlen');
});

test('an x-delayed-message exchange holds a message for its x-delay', async () => {
  await channel.assertExchange('later', 'x-delayed-message', { arguments: { 'x-delayed-type': 'direct' } });
  await channel.assertQueue('later.q');
  await channel.bindQueue('later.q', 'later', 'k');
  const sent_ms = Date.now();
  channel.publish('later', 'k', Buffer.from('after a while'), { headers: { 'x-delay': 800 } });
  channel.publish('later', 'k', Buffer.from('at once'));
  await channel.waitForConfirms();
  const first = await next_from('later.q');
  assert.equal(first.content.toString(), 'at once');
  const second = await next_from('later.q');
  assert.equal(second.content.toString(), 'after a while');
  assert.ok(Date.now() - sent_ms >= 800, `delivered after ${Date.now() - sent_ms} ms`);
});
