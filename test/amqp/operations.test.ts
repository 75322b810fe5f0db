// The AMQP side in operations, against a broker process: the admin API lists exchanges, queues
// (depth, unacknowledged, consumers), bindings and connections; /metrics counts AMQP connections,
// channels and consumers; `sluice amqp …` prints them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { SLUICE_CLI } from '../support/cli.ts';
import { until } from '../support/until.ts';

let broker: BrokerProcess;
let connection: amqp.ChannelModel;

before(async () => {
  broker = await start_broker_process();
  connection = await amqp.connect(`amqp://guest:guest@${broker.amqp!}`);
  const channel = await connection.createConfirmChannel();
  await channel.assertExchange('orders.x', 'topic');
  await channel.assertQueue('orders.eu');
  await channel.bindQueue('orders.eu', 'orders.x', 'eu.#');
  for (let i = 0; i < 5; i++) channel.publish('orders.x', 'eu.fr', Buffer.from(`o${i}`));
  await channel.waitForConfirms();
  const consumer = await connection.createChannel();
  await consumer.prefetch(2);
  await consumer.consume('orders.eu', () => undefined); // holds two, acknowledges none
});

after(async () => {
  await connection?.close();
  await broker?.stop();
});

async function api<T>(path: string): Promise<T> {
  const response = await fetch(`http://${broker.http!}${path}`);
  assert.equal(response.status, 200, path);
  return (await response.json()) as T;
}

test('the admin API shows queues with depth and consumers, exchanges, bindings and connections', async () => {
  type Queue = { name: string; ready: number; unacked: number; consumers: number; topic: string };
  const queue = await until(async () => {
    const { queues } = await api<{ queues: Queue[] }>('/api/v1/amqp/queues');
    const q = queues.find((x) => x.name === 'orders.eu');
    return q && q.unacked === 2 ? q : null;
  }, 'two held by the consumer');
  assert.equal(queue.ready, 3);
  assert.equal(queue.consumers, 1);
  assert.equal(queue.topic, 'orders.eu');
  const { exchanges } = await api<{ exchanges: Array<{ name: string; type: string }> }>('/api/v1/amqp/exchanges');
  assert.ok(exchanges.some((e) => e.name === 'orders.x' && e.type === 'topic'));
  assert.ok(
    exchanges.some((e) => e.name === 'amq.fanout'),
    'the standard exchanges are listed',
  );
  const { bindings } = await api<{ bindings: Array<{ source: string; routing_key: string }> }>('/api/v1/amqp/bindings');
  assert.deepEqual(
    bindings.filter((b) => b.source === 'orders.x').map((b) => b.routing_key),
    ['eu.#'],
  );
  const { connections } = await api<{ connections: Array<{ user: string; channels: number; consumers: number }> }>(
    '/api/v1/amqp/connections',
  );
  assert.deepEqual(
    connections.map((c) => [c.user, c.channels, c.consumers]),
    [['guest', 2, 1]],
  );
  const missing = await fetch(`http://${broker.http!}/api/v1/amqp/queues/nope`);
  assert.equal(missing.status, 404);
});

test('/metrics counts AMQP connections, channels and consumers', async () => {
  const text = await (await fetch(`http://${broker.http!}/metrics`)).text();
  assert.match(text, /^sluice_amqp_connections 1$/m);
  assert.match(text, /^sluice_amqp_channels 2$/m);
  assert.match(text, /^sluice_amqp_consumers 1$/m);
});

test('sluice amqp queues and bindings print what the broker has', async () => {
  const run = (args: string[]) =>
    promisify(execFile)(process.execPath, [...SLUICE_CLI, 'amqp', ...args, '--http', broker.http!]);
  const { stdout } = await run(['queues']);
  assert.match(stdout, /^\/\s+orders\.eu\s+3\s+2\s+1\s+true\s+orders\.eu$/m);
  const json = JSON.parse((await run(['bindings', '--json'])).stdout) as Array<{ source: string }>;
  assert.ok(json.some((b) => b.source === 'orders.x'));
  await assert.rejects(run(['queues', '--vhost', 'other']), /no vhost 'other'/);
});
