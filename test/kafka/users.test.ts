// Users managed while the broker runs, against a broker process with a users file holding only an
// admin: `sluice user add` makes a user who logs in at once (SCRAM-SHA-256 and -512, PLAIN, HTTP
// Basic), `sluice user list` shows it, it survives a restart, and `sluice user remove` ends its
// next login and closes its open connections within a bounded time. Refused: a user of the file,
// too few iterations, a user without ALTER on the cluster. No password in any log line.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel, type SASLOptions } from 'kafkajs';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { SLUICE_CLI } from '../support/cli.ts';
import { Sluice } from '../../src/sdk/index.ts';
import { until } from '../support/until.ts';
import { sasl_connection } from '../support/sasl_connection.ts';

const ADMIN = { admin: 'admin-secret' };
const PASSWORD = 'carol-secret-pw';
let data_dir: string;
let broker: BrokerProcess;
const args = (users_file: string) => ['--sasl-users', users_file, '--authorization', '--super-users', 'User:admin'];

before(async () => {
  data_dir = new_data_dir('users');
  const users_file = path.join(data_dir, 'users.json');
  fs.writeFileSync(users_file, JSON.stringify({ users: ADMIN }), { mode: 0o600 });
  broker = await start_broker_process({ data_dir, args: args(users_file) });
});

after(async () => {
  await broker?.stop();
  if (data_dir) fs.rmSync(data_dir, { recursive: true, force: true });
});

function sluice(command: string[], env: Record<string, string> = {}) {
  return promisify(execFile)(
    process.execPath,
    [...SLUICE_CLI, 'user', ...command, '--bootstrap', broker.bootstrap, '--sasl-username', 'admin'],
    { env: { ...process.env, SLUICE_SASL_PASSWORD: ADMIN.admin, ...env }, timeout: 30_000 },
  );
}

function kafkajs(sasl: SASLOptions) {
  return new Kafka({
    brokers: [broker.bootstrap],
    clientId: 'users-test',
    logLevel: logLevel.NOTHING,
    sasl,
    retry: { retries: 0 },
  });
}

const as_carol = (mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512', password = PASSWORD) =>
  kafkajs({ mechanism, username: 'carol', password } as SASLOptions);

function sdk_admin(user: string, password: string) {
  return new Sluice({
    brokers: [broker.bootstrap],
    sasl: { mechanism: 'scram-sha-256', username: user, password },
    retry: { retries: 0 },
  }).admin();
}

test('sluice user add: the user logs in at once with SCRAM, PLAIN and HTTP Basic, and is listed', async () => {
  const { stdout } = await sluice(['add', 'carol'], { SLUICE_USER_PASSWORD: PASSWORD });
  assert.match(stdout, /user carol set \(scram-sha-256, scram-sha-512\)/);
  for (const mechanism of ['scram-sha-256', 'scram-sha-512', 'plain'] as const) {
    const admin = as_carol(mechanism).admin();
    await admin.connect();
    await admin.disconnect();
  }
  await assert.rejects(as_carol('scram-sha-256', 'wrong').admin().connect(), /SASL|authentication/i);
  const basic = Buffer.from(`carol:${PASSWORD}`).toString('base64');
  const response = await fetch(`http://${broker.http!}/api/v1/cluster`, {
    headers: { authorization: `Basic ${basic}` },
  });
  assert.equal(response.status, 403, 'logged in (not 401), and refused by the ACLs');
  const listed = JSON.parse((await sluice(['list', '--json'])).stdout) as Array<{
    user: string;
    mechanisms: unknown[];
  }>;
  assert.deepEqual(
    listed.map((u) => [u.user, u.mechanisms.length]),
    [
      ['admin', 2],
      ['carol', 2],
    ],
  );
});

test('refused: a user of the file, too few iterations, a user without ALTER on the cluster', async () => {
  const admin = sdk_admin('admin', ADMIN.admin);
  await admin.connect();
  try {
    await assert.rejects(
      admin.upsertUserScramCredential({ user: 'admin', password: 'x' }),
      /INVALID_REQUEST.*users file/,
    );
    await assert.rejects(
      admin.upsertUserScramCredential({ user: 'dave', password: 'x', iterations: 100 }),
      /UNACCEPTABLE_CREDENTIAL.*iterations 100/,
    );
    await assert.rejects(admin.describeUserScramCredentials(['nobody']), /RESOURCE_NOT_FOUND/);
  } finally {
    await admin.disconnect();
  }
  const carol = sdk_admin('carol', PASSWORD);
  await carol.connect();
  try {
    await assert.rejects(
      carol.upsertUserScramCredential({ user: 'eve', password: 'x' }),
      /CLUSTER_AUTHORIZATION_FAILED/,
    );
  } finally {
    await carol.disconnect();
  }
});

test('a managed user survives a restart', async () => {
  const users_file = path.join(data_dir, 'users.json');
  await broker.stop();
  broker = await start_broker_process({ data_dir, port: broker.port, args: args(users_file) });
  const admin = as_carol('scram-sha-512').admin();
  await admin.connect();
  await admin.disconnect();
});

/** A connection logged in as carol with SCRAM, as any client's. */
const carol_connection = () =>
  sasl_connection(broker.bootstrap, { mechanism: 'scram-sha-256', username: 'carol', password: PASSWORD });

test('sluice user remove: the next login fails and open connections close within a bounded time', async () => {
  const open = await carol_connection();
  const removed_at = Date.now();
  const { stdout } = await sluice(['remove', 'carol']);
  assert.match(stdout, /removed scram-sha-256, scram-sha-512/);
  await assert.rejects(as_carol('scram-sha-256').admin().connect(), /SASL|authentication/i);
  await until(() => open.is_closed, "the removed user's connection closed", 10_000);
  assert.ok(Date.now() - removed_at < 5_000, `closed ${Date.now() - removed_at} ms after the removal`);
  assert.ok(!broker.output().includes(PASSWORD), 'the password is in no log line');
});
