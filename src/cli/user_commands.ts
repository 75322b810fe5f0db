// `sluice user add|remove|list`: SCRAM users managed while the broker runs, through the SDK's admin
// (AlterUserScramCredentials, DescribeUserScramCredentials). A new user's password comes from
// SLUICE_USER_PASSWORD, never a flag (argv is visible to every user of the machine); it is salted
// here and never sent.
import type { ScramMechanismName } from '../sdk/index.ts';
import { print, with_admin, type ClientFlags } from './client_support.ts';

const BOTH: readonly ScramMechanismName[] = ['scram-sha-256', 'scram-sha-512'];

function mechanisms_of(flags: { mechanism?: string }): ScramMechanismName[] {
  if (!flags.mechanism) return [...BOTH];
  if (!BOTH.includes(flags.mechanism as ScramMechanismName))
    throw new Error(`--mechanism: scram-sha-256 or scram-sha-512, got ${JSON.stringify(flags.mechanism)}`);
  return [flags.mechanism as ScramMechanismName];
}

export async function user_add(name: string, flags: ClientFlags & { mechanism?: string }): Promise<void> {
  const password = process.env.SLUICE_USER_PASSWORD;
  if (!password) throw new Error('the new password goes in the SLUICE_USER_PASSWORD environment variable');
  const mechanisms = mechanisms_of(flags);
  await with_admin(flags, async (admin) => {
    for (const mechanism of mechanisms) await admin.upsertUserScramCredential({ user: name, password, mechanism });
  });
  print(flags, { user: name, mechanisms }, () => `user ${name} set (${mechanisms.join(', ')})`);
}

export async function user_remove(name: string, flags: ClientFlags & { mechanism?: string }): Promise<void> {
  const removed = await with_admin(flags, async (admin) => {
    const [described] = await admin.describeUserScramCredentials([name]);
    const held = new Set(described!.mechanisms.map((m) => m.mechanism));
    const mechanisms = mechanisms_of(flags).filter((mechanism) => held.has(mechanism));
    for (const mechanism of mechanisms) await admin.deleteUserScramCredential({ user: name, mechanism });
    return mechanisms;
  });
  print(flags, { user: name, removed }, () => `user ${name}: removed ${removed.join(', ') || 'nothing'}`);
}

export async function user_list(flags: ClientFlags): Promise<void> {
  const users = await with_admin(flags, (admin) => admin.describeUserScramCredentials());
  print(flags, users, () =>
    users.length === 0
      ? 'no users'
      : users
          .map((u) => `${u.user}\t${u.mechanisms.map((m) => `${m.mechanism}/${m.iterations}`).join(' ')}`)
          .join('\n'),
  );
}
