// Virtual hosts named in the users file, against a broker process: each vhost is a namespace of its
// own (the same queue and exchange names in two vhosts are two queues on two topics); a user the
// vhost does not admit and a vhost not served are refused with NOT_ALLOWED at connection.open,
// while an admitted connection keeps publishing with confirms; the admin API and `sluice amqp`
// list every vhost or one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { SLUICE_CLI } from '../support/cli.ts';
import { RawAmqp } from '../support/amqp_raw.ts';

let broker: BrokerProcess;
const connections: amqp.ChannelModel[] = [];

before(async () => {
  const data_dir = new_data_dir('vhosts');
  const users_file = path.join(data_dir, 'users.json');
  const file = { users: { alice: 'alice-pw', bob: 'bob-pw' }, vhosts: { '/': ['*'], orders: ['alice'] } };
  fs.writeFileSync(users_file, JSON.stringify(file), { mode: 0o600 });
  broker = await start_broker_process({ data_dir, args: ['--sasl-users', users_file] });
});

after(async () => {
  for (const c of connections) await c.close().catch(() => undefined);
  await broker?.stop();
});

async function open(user: string, vhost: string): Promise<amqp.ConfirmChannel> {
  const connection = await amqp.connect(`amqp://${user}:${user}-pw@${broker.amqp!}/${encodeURIComponent(vhost)}`);
  connections.push(connection);
  return connection.createConfirmChannel();
}

async function api<T>(query: string): Promise<{ status: number; body: T }> {
  const login = Buffer.from('alice:alice-pw').toString('base64');
  const response = await fetch(`http://${broker.http!}/api/v1/amqp/${query}`, {
    headers: { authorization: `Basic ${login}` },
  });
  return { status: response.status, body: (await response.json()) as T };
}

test('the same names in two vhosts are two queues on two topics', async () => {
  const orders = await open('alice', 'orders');
  const root = await open('bob', '/');
  await orders.assertExchange('events', 'fanout');
  await orders.assertQueue('jobs', { durable: true });
  await orders.bindQueue('jobs', 'events', '');
  await root.assertQueue('jobs', { durable: true });
  for (let i = 0; i < 3; i++) orders.publish('events', '', Buffer.from(`orders ${i}`), { persistent: true });
  root.sendToQueue('jobs', Buffer.from('root'), { persistent: true });
  await Promise.all([orders.waitForConfirms(), root.waitForConfirms()]);

  assert.equal((await orders.checkQueue('jobs')).messageCount, 3);
  assert.equal((await root.checkQueue('jobs')).messageCount, 1);
  const got = await root.get('jobs', { noAck: true });
  assert.equal(got && got.content.toString(), 'root');
  const look = await connections.at(-1)!.createChannel();
  look.on('error', () => undefined);
  await assert.rejects(look.checkExchange('events'), /404/, "orders' exchange is not in /");

  type Row = { vhost: string; name: string; topic: string };
  const { body } = await api<{ queues: Row[] }>('queues');
  const jobs = body.queues.filter((q) => q.name === 'jobs');
  assert.deepEqual(jobs.map((q) => q.vhost).sort(), ['/', 'orders']);
  assert.equal(jobs.find((q) => q.vhost === '/')!.topic, 'jobs');
  assert.match(jobs.find((q) => q.vhost === 'orders')!.topic, /^amqp\.orders\.jobs\.[0-9a-f]{8}$/);
  const one = await api<{ queues: Row[] }>('queues?vhost=orders');
  assert.deepEqual(
    one.body.queues.map((q) => q.vhost),
    ['orders'],
  );
  assert.deepEqual((await api<{ vhosts: string[] }>('vhosts')).body.vhosts, ['/', 'orders']);
  assert.equal((await api('queues?vhost=nope')).status, 404);

  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...SLUICE_CLI, 'amqp', 'bindings', '--vhost', 'orders', '--http', broker.http!, '--sasl-username', 'bob'],
    { env: { ...process.env, SLUICE_SASL_PASSWORD: 'bob-pw' } },
  );
  assert.match(stdout, /^orders\s+events\s+jobs\s+queue/m);
});

test('a user the vhost does not admit, and a vhost not served, are refused with NOT_ALLOWED', async () => {
  const alice = await open('alice', 'orders');
  await alice.assertQueue('audit', { durable: true });
  const refused = async (username: string, vhost: string) => {
    const raw = await RawAmqp.handshake(broker.amqp!, { username, password: `${username}-pw`, vhost });
    const close = await raw.expect('connection.close');
    await raw.until_closed();
    return [close.args.reply_code, close.args.reply_text];
  };
  assert.deepEqual(await refused('bob', 'orders'), [
    530,
    "NOT_ALLOWED - access to vhost 'orders' refused for user 'bob'",
  ]);
  assert.deepEqual(await refused('alice', 'nope'), [530, "NOT_ALLOWED - vhost 'nope' not found"]);
  await assert.rejects(open('bob', 'orders'), /ConnectionClose/, 'amqplib is refused too');
  for (let i = 0; i < 20; i++) alice.sendToQueue('audit', Buffer.from(`a${i}`), { persistent: true });
  await alice.waitForConfirms();
  assert.equal((await alice.checkQueue('audit')).messageCount, 20, 'the admitted connection is unaffected');
});
