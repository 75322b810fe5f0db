// AMQP under --authorization (a broker process, amqplib unchanged): RabbitMQ's configure, write and
// read permissions come from the Kafka ACLs on a queue's topic and share group (and ALTER on the
// cluster for exchanges). A user without them gets ACCESS_REFUSED on that channel only; granted,
// the same user declares nothing, publishes and reads what the ACLs allow.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import amqp from 'amqplib';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  ResourcePatternTypes,
  Sluice,
} from '../../src/sdk/index.ts';

const USERS = { admin: 'admin-secret', alice: 'alice-secret' };
let broker: BrokerProcess;
const connections: amqp.ChannelModel[] = [];

before(async () => {
  const data_dir = new_data_dir('amqp-acls');
  const users_file = path.join(data_dir, 'users.json');
  fs.writeFileSync(users_file, JSON.stringify({ users: USERS }), { mode: 0o600 });
  const args = ['--sasl-users', users_file, '--authorization', '--super-users', 'User:admin'];
  broker = await start_broker_process({ data_dir, args });
});

after(async () => {
  for (const connection of connections) await connection.close().catch(() => undefined);
  await broker?.stop();
  if (broker) fs.rmSync(broker.data_dir, { recursive: true, force: true });
});

async function channel(user: keyof typeof USERS): Promise<amqp.ConfirmChannel> {
  const connection = await amqp.connect(`amqp://${user}:${USERS[user]}@${broker.amqp!}`);
  connection.on('error', () => undefined);
  connections.push(connection);
  const opened = await connection.createConfirmChannel();
  opened.on('error', () => undefined);
  return opened;
}

async function grant(operation: number, type: number, name: string): Promise<void> {
  const admin = new Sluice({
    brokers: [broker.bootstrap],
    sasl: { mechanism: 'scram-sha-256', username: 'admin', password: USERS.admin },
  }).admin();
  await admin.connect();
  await admin.createAcls({
    acl: [
      {
        resourceType: type,
        resourceName: name,
        resourcePatternType: ResourcePatternTypes.LITERAL,
        principal: 'User:alice',
        host: '*',
        operation,
        permissionType: AclPermissionTypes.ALLOW,
      },
    ],
  });
  await admin.disconnect();
}

const refused = /ACCESS.REFUSED/;

test('without ACLs: declaring, publishing and reading are refused with ACCESS_REFUSED; others unaffected', async () => {
  const admin = await channel('admin');
  await admin.assertQueue('jobs', { durable: true });
  await assert.rejects((await channel('alice')).assertQueue('mine', { durable: true }), refused);
  await assert.rejects((await channel('alice')).assertExchange('events', 'fanout'), refused);
  await assert.rejects((await channel('alice')).get('jobs'), refused);
  const publishing = await channel('alice');
  publishing.sendToQueue('jobs', Buffer.from('sneaky'));
  await assert.rejects(publishing.waitForConfirms(), /closed|ACCESS.REFUSED/);
  admin.sendToQueue('jobs', Buffer.from('from admin'));
  await admin.waitForConfirms();
});

test('granted READ on the queue topic and group, then WRITE, the user reads and publishes', async () => {
  await grant(AclOperationTypes.READ, AclResourceTypes.TOPIC, 'jobs');
  await grant(AclOperationTypes.READ, AclResourceTypes.GROUP, '*');
  const alice = await channel('alice');
  const got = await alice.get('jobs', { noAck: true });
  assert.equal(got && got.content.toString(), 'from admin');
  await grant(AclOperationTypes.WRITE, AclResourceTypes.TOPIC, 'jobs');
  const writer = await channel('alice');
  writer.sendToQueue('jobs', Buffer.from('from alice'));
  await writer.waitForConfirms();
  const again = await writer.get('jobs', { noAck: true });
  assert.equal(again && again.content.toString(), 'from alice');
  await assert.rejects((await channel('alice')).deleteQueue('jobs'), refused, 'no DELETE on the topic');
});
