// guest/guest without a users file: from loopback by default, from anywhere or nowhere when set.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { check_login } from './authenticate.ts';

const guest = { username: 'guest', password: 'guest' };

test('guest logs in from loopback only, unless amqp_guest says anywhere or off', async () => {
  assert.equal(await check_login(guest, null, '127.0.0.1'), null);
  assert.match((await check_login(guest, null, '10.0.0.7')) ?? '', /only connect via localhost/);
  assert.equal(await check_login(guest, null, '10.0.0.7', 'anywhere'), null);
  assert.match((await check_login(guest, null, '127.0.0.1', 'off')) ?? '', /guest is off/);
  assert.match(
    (await check_login({ username: 'guest', password: 'x' }, null, '10.0.0.7', 'anywhere')) ?? '',
    /refused/,
  );
});
