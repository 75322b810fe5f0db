// The broker's users: a managed user set from a client-salted password logs in (SCRAM and PLAIN),
// is described without secrets, and is gone once its last credential is removed; the users file's
// users are read-only; bad credentials are refused with their reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { SimFileIO } from '../storage/sim_file_io.ts';
import { LocalMetadataStore } from '../single_node/local_metadata_store.ts';
import { salted_password } from '../protocol/sasl/scram.ts';
import { BrokerError } from '../core/errors.ts';
import { CredentialStore } from './credentials.ts';
import { Users } from './users.ts';

async function users(): Promise<Users> {
  const io = new SimFileIO();
  await io.mkdir('/data');
  const store = await LocalMetadataStore.open(io, '/data');
  return new Users(await CredentialStore.from_passwords({ admin: 'admin-pw' }), store);
}

async function add(target: Users, name: string, password: string, hash: 'sha256' | 'sha512', iterations = 4096) {
  const salt = crypto.randomBytes(32);
  await target.set_scram(name, hash, salt, iterations, await salted_password(password, salt, iterations, hash));
}

const kind = (expected: string) => (error: unknown) => error instanceof BrokerError && error.kind === expected;

test('a managed user logs in, is described without secrets, and is gone with its last credential', async () => {
  const all = await users();
  await add(all, 'carol', 'carol-pw', 'sha256');
  await add(all, 'carol', 'carol-pw', 'sha512');
  assert.ok(all.has('carol') && all.scram('carol', 'sha512'));
  assert.equal(await all.verify_password('carol', 'carol-pw'), true);
  assert.equal(await all.verify_password('carol', 'wrong'), false);
  assert.equal(all.admits('carol', '/'), true);
  assert.deepEqual(all.describe(null), [
    {
      name: 'admin',
      from_file: true,
      mechanisms: [
        { hash: 'sha256', iterations: 4096 },
        { hash: 'sha512', iterations: 4096 },
      ],
    },
    {
      name: 'carol',
      from_file: false,
      mechanisms: [
        { hash: 'sha256', iterations: 4096 },
        { hash: 'sha512', iterations: 4096 },
      ],
    },
  ]);
  assert.equal(all.size, 2);
  await all.remove_scram('carol', 'sha256');
  assert.ok(all.has('carol'), 'one credential left');
  await all.remove_scram('carol', 'sha512');
  assert.equal(all.has('carol'), false);
  assert.equal(all.describe(['carol'])[0]!.mechanisms, null);
  await assert.rejects(all.remove_scram('carol', 'sha512'), kind('resource_not_found'));
});

test('refused: a user of the file, iterations out of range, a salted password of the wrong length', async () => {
  const all = await users();
  await assert.rejects(add(all, 'admin', 'x', 'sha256'), kind('invalid_request'));
  await assert.rejects(add(all, 'dave', 'x', 'sha256', 100), kind('unacceptable_credential'));
  await assert.rejects(add(all, 'dave', 'x', 'sha256', 100_000), kind('unacceptable_credential'));
  await assert.rejects(
    all.set_scram('dave', 'sha512', crypto.randomBytes(32), 4096, crypto.randomBytes(32)),
    kind('unacceptable_credential'),
  );
  await assert.rejects(add(all, '', 'x', 'sha256'), kind('unacceptable_credential'));
  assert.equal(all.has('dave'), false);
});
