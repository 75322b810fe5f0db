// x-max-priority against a broker process: a backlog published in mixed priorities is consumed
// highest first (FIFO within a priority), priorities above the maximum count as the maximum, and
// the queue's topic has one partition per level, which the declare-ok message count sums.
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

test('x-max-priority: the highest priority first, FIFO within one, above the maximum as the maximum', async () => {
  const connection = await amqp.connect(`amqp://guest:guest@${broker.amqp!}`);
  const channel = await connection.createConfirmChannel();
  await channel.assertQueue('prio', { durable: true, arguments: { 'x-max-priority': 5 } });
  const sent: Array<[name: string, priority: number | undefined]> = [];
  for (let i = 0; i < 4; i++) for (const p of [0, 3, undefined, 5, 1, 9]) sent.push([`p${p ?? '-'}-${i}`, p]);
  for (const [name, priority] of sent) channel.sendToQueue('prio', Buffer.from(name), { persistent: true, priority });
  await channel.waitForConfirms();
  assert.equal((await channel.checkQueue('prio')).messageCount, sent.length);

  const level = (p: number | undefined) => Math.min(p ?? 0, 5);
  const expected = [...sent]
    .map(([name, p], order) => ({ name, level: level(p), order }))
    .sort((a, b) => b.level - a.level || a.order - b.order)
    .map((m) => m.name);
  const reader = await connection.createChannel();
  await reader.prefetch(1);
  const got: string[] = [];
  await reader.consume('prio', (m) => {
    got.push(m!.content.toString());
    reader.ack(m!);
  });
  await until(() => got.length === sent.length, 'every message consumed');
  assert.deepEqual(got, expected);
  await connection.close();
});

test('x-max-priority above 255 is refused with PRECONDITION_FAILED', async () => {
  const connection = await amqp.connect(`amqp://guest:guest@${broker.amqp!}`);
  const channel = await connection.createChannel();
  const closed = new Promise<Error>((resolve) => channel.once('error', resolve));
  await assert.rejects(channel.assertQueue('prio-bad', { arguments: { 'x-max-priority': 256 } }));
  assert.match(String(await closed), /PRECONDITION_FAILED.*x-max-priority/);
  await connection.close();
});
