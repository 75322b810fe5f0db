// Every Kafka API checks the ACLs but those any connection may call: a new handler that forgets
// authorization fails here until it checks or is named below with its reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

/** Handlers with no ACL check, and why. */
const OPEN: Readonly<Record<string, string>> = {
  '17_sasl_handshake.ts': 'logging in comes before any principal',
  '18_api_versions.ts': 'every client asks it first, before logging in',
  '36_sasl_authenticate.ts': 'logging in comes before any principal',
  '60_describe_cluster.ts': 'the brokers, as Metadata gives them to anyone',
};

/** Handlers whose check is in a helper they share, by the helper. */
const CHECKED_IN = { 'configs.ts': ['33_alter_configs.ts', '44_incremental_alter_configs.ts'] };

test('every handler but the open ones checks the ACLs', () => {
  const dir = path.join(import.meta.dirname, 'handlers');
  const handlers = fs.readdirSync(dir).filter((file) => /^\d\d_.*\.ts$/.test(file) && !file.endsWith('.test.ts'));
  const helped = new Set(Object.values(CHECKED_IN).flat());
  for (const helper of Object.keys(CHECKED_IN))
    assert.ok(fs.readFileSync(path.join(dir, helper), 'utf8').includes("'../authorize.ts'"), helper);
  const unchecked = handlers.filter(
    (file) =>
      !helped.has(file) &&
      !(file in OPEN) &&
      !fs.readFileSync(path.join(dir, file), 'utf8').includes("'../authorize.ts'"),
  );
  assert.deepEqual(unchecked, []);
});
