import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Credentials } from '../../core/index.ts';
import { BasicLogins, LOGIN_FAILURE_WINDOW_MS, LOGIN_FAILURES_MAX, LOGIN_TRUSTED_MS } from './basic_logins.ts';

/** One user whose password checks are counted; `users` may lose it. */
function credentials(users: Set<string>, checks: { count: number }): Credentials {
  return {
    size: users.size,
    scram: () => null,
    verify_password: async (user, password) => {
      checks.count++;
      return users.has(user) && password === `${user}-pw`;
    },
    has: (user) => users.has(user),
    vhosts: ['/'],
    admits: () => true,
    admits_everyone: () => true,
  };
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

test('a checked login is trusted for a while, not past its user or its time', async () => {
  const users = new Set(['alice']);
  const checks = { count: 0 };
  const now = { ms: 0 };
  const logins = new BasicLogins(credentials(users, checks), () => now.ms);
  const header = basic('alice', 'alice-pw');
  assert.deepEqual(await logins.check(header, '10.0.0.1'), { user: 'alice' });
  assert.deepEqual(await logins.check(header, '10.0.0.1'), { user: 'alice' });
  assert.equal(checks.count, 1, 'the second request is not checked again');
  now.ms += LOGIN_TRUSTED_MS + 1;
  await logins.check(header, '10.0.0.1');
  assert.equal(checks.count, 2, 'checked again once the trust ran out');
  users.delete('alice');
  assert.deepEqual(await logins.check(header, '10.0.0.1'), { refused: 'invalid' }, 'a removed user at once');
});

test('an address failing too many logins waits; others and the challenge request do not', async () => {
  const now = { ms: 0 };
  const logins = new BasicLogins(credentials(new Set(['alice']), { count: 0 }), () => now.ms);
  for (let i = 0; i < LOGIN_FAILURES_MAX; i++)
    assert.deepEqual(await logins.check(basic('alice', 'guess'), '10.0.0.9'), { refused: 'invalid' });
  const waiting = await logins.check(basic('alice', 'alice-pw'), '10.0.0.9');
  assert.deepEqual(waiting, { refused: 'wait', retry_after_s: LOGIN_FAILURE_WINDOW_MS / 1000 });
  assert.deepEqual(await logins.check(basic('alice', 'alice-pw'), '10.0.0.8'), { user: 'alice' });
  for (let i = 0; i < 2 * LOGIN_FAILURES_MAX; i++) await logins.check('', '10.0.0.7');
  assert.deepEqual(await logins.check(basic('alice', 'alice-pw'), '10.0.0.7'), { user: 'alice' });
  now.ms += LOGIN_FAILURE_WINDOW_MS;
  assert.deepEqual(await logins.check(basic('alice', 'alice-pw'), '10.0.0.9'), { user: 'alice' }, 'after the window');
});
