// SASL: a broker that makes every connection log in, and SDK clients that do (SCRAM-SHA-256 here;
// 'scram-sha-512' and 'plain' work the same way). A wrong password fails at once with
// AuthenticationError instead of being retried.
// Self-contained: it starts its own embedded broker on a free port and a temporary directory, as
// `sluice start --sasl-users users.json` would with {"users": {"billing": "correct horse"}}.
//   node --import tsx examples/sasl_login.ts
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CredentialStore, startBroker } from '../src/index.ts';
import { AuthenticationError, Sluice } from '../src/sdk/index.ts';

const data_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-example-sasl-'));
const broker = await startBroker({
  data_dir,
  kafka: { host: '127.0.0.1', port: 0 },
  credentials: await CredentialStore.from_passwords({ billing: 'correct horse' }),
});
const bootstrap = `${broker.kafka_address.host}:${broker.kafka_address.port}`;
try {
  const sluice = new Sluice({ brokers: [bootstrap], clientId: 'example-sasl', sasl: { mechanism: 'scram-sha-256', username: 'billing', password: 'correct horse' } });
  const producer = sluice.producer();
  await producer.connect();
  const [meta] = await producer.send({ topic: 'invoices', messages: [{ key: 'customer-7', value: 'invoice #1' }] });
  console.log(`logged in as billing and wrote invoices-${meta!.partition} at offset ${meta!.baseOffset}`);
  await producer.disconnect();

  const intruder = new Sluice({ brokers: [bootstrap], clientId: 'example-sasl', sasl: { mechanism: 'scram-sha-256', username: 'billing', password: 'guess' } }).admin();
  try {
    await intruder.connect();
    throw new Error('a wrong password was accepted');
  } catch (error) {
    if (!(error instanceof AuthenticationError)) throw error;
    console.log(`a wrong password is refused: ${error.message} (retriable: ${error.retriable})`);
  } finally {
    await intruder.disconnect();
  }
} finally {
  await broker.close();
  fs.rmSync(data_dir, { recursive: true, force: true });
}
