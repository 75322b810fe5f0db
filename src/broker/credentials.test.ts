import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CredentialStore, parse_users_file } from './credentials.ts';

test('without vhosts, the one vhost / admits every user', async () => {
  const store = await CredentialStore.from_passwords({ alice: 'a' });
  assert.deepEqual(store.vhosts, ['/']);
  assert.ok(store.admits('alice', '/'));
  assert.ok(!store.admits('alice', 'orders'), 'a vhost not served');
  assert.ok(!store.admits('mallory', '/'), 'a user not in the file');
});

test('named vhosts admit the users they list, or every user with *', async () => {
  const store = await CredentialStore.from_passwords({ alice: 'a', bob: 'b' }, { '/': ['*'], orders: ['alice'] });
  assert.deepEqual(store.vhosts, ['/', 'orders']);
  assert.ok(store.admits('bob', '/'));
  assert.ok(store.admits('alice', 'orders'));
  assert.ok(!store.admits('bob', 'orders'));
});

test('a users file naming an unknown user, no vhost or a bad list is refused with its path', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'users-'));
  const file = path.join(dir, 'users.json');
  const cases: Array<[unknown, RegExp]> = [
    [{ orders: ['carol'] }, /vhost 'orders' admits 'carol', who is not in "users"/],
    [{ orders: ['toString'] }, /admits 'toString'/],
    [{}, /names no vhost/],
    [{ orders: 'alice' }, /expected a list of user names/],
    [['/'], /expected \{"vhost"/],
    [{ '': ['alice'] }, /1 to 255 bytes/],
  ];
  for (const [vhosts, message] of cases) {
    fs.writeFileSync(file, JSON.stringify({ users: { alice: 'a' }, vhosts }));
    assert.throws(
      () => parse_users_file(file),
      (e: Error) => message.test(e.message) && e.message.includes(file),
    );
  }
  fs.rmSync(dir, { recursive: true });
});
