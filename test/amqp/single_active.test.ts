// x-single-active-consumer against a broker process: of two consumers only the first gets
// messages; when it cancels, the second takes over and gets the rest.
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

test('x-single-active-consumer: one consumer at a time, the next takes over when it goes', async () => {
  const connection = await amqp.connect(`amqp://guest:guest@${broker.amqp!}`);
  const channel = await connection.createConfirmChannel();
  await channel.assertQueue('single', { arguments: { 'x-single-active-consumer': true } });
  const got: Record<string, string[]> = { first: [], second: [] };
  const tags: Record<string, string> = {};
  for (const name of ['first', 'second']) {
    const { consumerTag } = await channel.consume('single', (m) => {
      got[name]!.push(m!.content.toString());
      channel.ack(m!);
    });
    tags[name] = consumerTag;
  }
  for (let i = 0; i < 5; i++) channel.sendToQueue('single', Buffer.from(`a${i}`));
  await channel.waitForConfirms();
  await until(() => got.first!.length === 5, 'the first consumer has all five');
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual(got.second, [], 'the second waits');
  await channel.cancel(tags.first!);
  for (let i = 0; i < 5; i++) channel.sendToQueue('single', Buffer.from(`b${i}`));
  await channel.waitForConfirms();
  await until(() => got.second!.length === 5, 'the second took over');
  assert.deepEqual(got.second, ['b0', 'b1', 'b2', 'b3', 'b4']);
  await connection.close();
});
