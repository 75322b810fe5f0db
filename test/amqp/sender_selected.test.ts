// CC and BCC headers against a broker process (RabbitMQ's sender-selected distribution): a message
// also goes to the queues its CC and BCC routing keys reach, once each, and BCC is not delivered.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import amqp from 'amqplib';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { until } from '../support/until.ts';

let broker: BrokerProcess;

before(async () => {
  broker = await start_broker_process();
});

after(async () => {
  await broker?.stop();
});

test('CC and BCC route a message to more queues, each once, and BCC is stripped', async () => {
  const connection = await amqp.connect(`amqp://guest:guest@${broker.amqp!}`);
  const channel = await connection.createConfirmChannel();
  await channel.assertExchange('mail', 'direct');
  for (const name of ['to', 'cc', 'bcc']) {
    await channel.assertQueue(`mail.${name}`);
    await channel.bindQueue(`mail.${name}`, 'mail', name);
  }
  channel.publish('mail', 'to', Buffer.from('hello'), { headers: { CC: ['cc', 'to'], BCC: ['bcc'], keep: 'me' } });
  await channel.waitForConfirms();
  for (const name of ['to', 'cc', 'bcc']) {
    const m = await until(async () => await channel.get(`mail.${name}`, { noAck: true }), `mail.${name}`);
    assert.equal(m.content.toString(), 'hello');
    assert.equal(m.properties.headers?.['BCC'], undefined, 'BCC is not delivered');
    assert.equal(String(m.properties.headers?.['keep']), 'me');
    assert.ok(m.properties.headers?.['CC'], 'CC is delivered');
  }
  assert.equal(await channel.get('mail.to', { noAck: true }), false, 'once, though named twice');
  await connection.close();
});
