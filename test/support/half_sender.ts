// A producer that writes half messages and dies before settling them, for the check-back tests
// (dead_half_producer.ts): its own process, killed with SIGKILL once every half message is
// acknowledged. Args: bootstrap, topic, transaction group, half timeout in ms, then the values.
import { Sluice } from '../../src/sdk/index.ts';

const [bootstrap, topic, group, timeout, ...values] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  ...string[],
];
const producer = new Sluice({ brokers: [bootstrap], clientId: 'half-sender' }).producer({
  transactionGroup: group,
  halfTimeout: Number(timeout),
});
for (const value of values) await producer.sendHalf({ topic, message: { value } });
process.stdout.write('sent\n');
process.kill(process.pid, 'SIGKILL');
