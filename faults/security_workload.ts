// The security workload, on the lab's SASL_SSL listeners (TLS, SCRAM logins, ACLs checked) while
// faults happen: a reader granted one topic keeps looking at another it has no ACL for, through
// Metadata and Fetch on any broker; the admin adds and removes users and changes a cluster-wide
// broker config (broker_config_churn.ts); a producer over a byte-rate quota writes as fast as it is
// let. Recorded for the checker (security_properties.ts): what the reader saw, which users log in
// on which broker and what each describes of the config once the faults are healed, and the bytes
// the quota let through.
import { setTimeout as sleep } from 'node:timers/promises';
import { Connection } from '../src/protocol/kafka/client_connection.ts';
import { METADATA } from '../src/protocol/kafka/messages/03_metadata.ts';
import { FETCH } from '../src/protocol/kafka/messages/01_fetch.ts';
import { SASL_HANDSHAKE } from '../src/protocol/kafka/messages/17_sasl_handshake.ts';
import { SASL_AUTHENTICATE } from '../src/protocol/kafka/messages/36_sasl_authenticate.ts';
import { SaslLoginError, sasl_login, type SaslOptions } from '../src/protocol/sasl/client_login.ts';
import { ErrorCode } from '../src/protocol/kafka/error_codes.ts';
import { Sluice } from '../src/sdk/index.ts';
import type { Admin } from '../src/sdk/admin.ts';
import type { HistoryOp } from './checker/history.ts';
import { LAB_USERS } from './lab_security.ts';
import { TOPIC, lab_kafka } from './workload.ts';
import { config_churning, final_configs } from './broker_config_churn.ts';

export const SECRET_TOPIC = 'faults-secret';
export const QUOTA_TOPIC = 'faults-quota';
const QUOTA_CLIENT_ID = 'faults-quota';
const QUOTA_BYTES_PER_S = 32 * 1024;
const QUOTA_BATCH = Array.from({ length: 4 }, () => ({ value: Buffer.alloc(1024, 113) }));
const PROBE_INTERVAL_MS = 500;
const CHURN_INTERVAL_MS = 3000;
/** Users the admin makes at most in a run (a fresh name each time). */
const CHURN_USERS_MAX = 60;
/** How long after the faults every broker has to show each user's last change. */
const CONVERGE_WAIT_MS = 15_000;
/** A call under faults that has not answered in this long is given up (its outcome unknown). */
const CALL_TIMEOUT_MS = 10_000;
const SASL_VERSIONS = new Map([
  [SASL_HANDSHAKE.api_key, { min: 0, max: 1 }],
  [SASL_AUTHENTICATE.api_key, { min: 0, max: 2 }],
]);

interface Lab {
  plain: string[];
  secure: string[];
  ca: Buffer;
}

function bounded<T>(call: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS);
  });
  call.catch(() => undefined);
  return Promise.race([call, timeout]).finally(() => clearTimeout(timer));
}

/** A raw connection to `broker` (HOST:PORT of its SASL_SSL listener), logged in. */
async function login(lab: Lab, broker: string, sasl: SaslOptions): Promise<Connection> {
  const [host, port] = broker.split(':');
  const connection = await Connection.connect(host!, Number(port), { tls: { ca: lab.ca }, request_timeout_ms: 5000 });
  try {
    await bounded(sasl_login(connection, SASL_VERSIONS, sasl));
    return connection;
  } catch (error) {
    connection.close();
    throw error;
  }
}

function secure_admin(lab: Lab): Admin {
  const sasl = { mechanism: 'scram-sha-256' as const, username: 'admin', password: LAB_USERS.admin };
  return new Sluice({ brokers: lab.secure, clientId: 'faults-security', ssl: { ca: [lab.ca] }, sasl }).admin();
}

/** ACLs for the reader (the main topic and its group, nothing on the secret topic) and the quota. */
async function grant(admin: Admin): Promise<void> {
  const acl = (resourceType: number, resourceName: string, operation: number) => ({
    resourceType,
    resourceName,
    resourcePatternType: 3,
    principal: 'User:reader',
    host: '*',
    operation,
    permissionType: 3,
  });
  // Kafka's codes: topic 2, group 3; read 3, describe 8.
  await admin.createAcls({ acl: [acl(2, TOPIC, 3), acl(2, TOPIC, 8), acl(3, 'faults-reader', 3)] });
  await admin.alterClientQuotas([
    { entity: { clientId: QUOTA_CLIENT_ID }, set: { producer_byte_rate: QUOTA_BYTES_PER_S } },
  ]);
}

/** One look at the secret topic as the reader, on one broker. */
async function probe(lab: Lab, broker: string, at: () => number): Promise<HistoryOp | null> {
  let connection: Connection | null = null;
  try {
    connection = await login(lab, broker, {
      mechanism: 'scram-sha-512',
      username: 'reader',
      password: LAB_USERS.reader,
    });
    const metadata = await bounded(connection.call(METADATA, 9, { topics: null, allow_auto_topic_creation: false }));
    const listed = metadata.topics.some((topic) => topic.name === SECRET_TOPIC);
    const fetch = await bounded(connection.call(FETCH, 11, fetch_body(SECRET_TOPIC)));
    const partition = fetch.responses[0]?.partitions[0];
    const records = partition?.records ? partition.records.length : 0;
    return { kind: 'acl_probe', broker, listed, records, error_code: partition?.error_code ?? null, at_ms: at() };
  } catch {
    return null; // a broker down or cut off: nothing seen
  } finally {
    connection?.close();
  }
}

function fetch_body(topic: string) {
  const partition = { partition: 0, current_leader_epoch: -1, fetch_offset: 0, log_start_offset: -1 };
  return {
    replica_id: -1,
    max_wait_ms: 0,
    min_bytes: 0,
    max_bytes: 1024 * 1024,
    isolation_level: 0,
    session_id: 0,
    session_epoch: -1,
    topics: [{ topic, partitions: [{ ...partition, partition_max_bytes: 1024 * 1024 }] }],
    forgotten_topics_data: [],
    rack_id: '',
  };
}

async function probing(lab: Lab, until: () => boolean, at: () => number, history: HistoryOp[]): Promise<void> {
  for (let turn = 0; until(); turn++) {
    const seen = await probe(lab, lab.secure[turn % lab.secure.length]!, at);
    if (seen) history.push(seen);
    await sleep(PROBE_INTERVAL_MS);
  }
}

/** Users made (and every other one removed again): each one's last acknowledged state. */
async function churning(admin: Admin, until: () => boolean): Promise<Map<string, 'present' | 'absent'>> {
  const known = new Map<string, 'present' | 'absent'>();
  for (let n = 0; until() && n < CHURN_USERS_MAX; n++) {
    const user = `temp-${n}`;
    try {
      await bounded(admin.upsertUserScramCredential({ user, password: `${user}-pw`, mechanism: 'scram-sha-256' }));
      known.set(user, 'present');
      if (n % 2 === 0) {
        known.delete(user); // unknown until the removal is acknowledged
        await bounded(admin.deleteUserScramCredential({ user, mechanism: 'scram-sha-256' }));
        known.set(user, 'absent');
      }
    } catch {
      known.delete(user); // a change not acknowledged: the user's state is not known
    }
    await sleep(CHURN_INTERVAL_MS);
  }
  return known;
}

/** Whether `user` logs in on `broker`; null when the broker could not be reached. */
async function logs_in(lab: Lab, broker: string, user: string): Promise<boolean | null> {
  try {
    (await login(lab, broker, { mechanism: 'scram-sha-256', username: user, password: `${user}-pw` })).close();
    return true;
  } catch (error) {
    return error instanceof SaslLoginError && error.code === ErrorCode.SASL_AUTHENTICATION_FAILED ? false : null;
  }
}

/** After the faults: each user's login on every broker, given time to show the last change. */
async function final_logins(lab: Lab, users: Map<string, 'present' | 'absent'>, at: () => number) {
  const ops: HistoryOp[] = [];
  const deadline = Date.now() + CONVERGE_WAIT_MS;
  for (const [user, expected] of users) {
    for (const broker of lab.secure) {
      let logged_in = await logs_in(lab, broker, user);
      while (logged_in !== (expected === 'present') && Date.now() < deadline) {
        await sleep(250);
        logged_in = await logs_in(lab, broker, user);
      }
      ops.push({ kind: 'user_login', user, expected, broker, logged_in: logged_in ?? false, at_ms: at() });
    }
  }
  return ops;
}

/** A producer over its quota, on the plaintext listeners: the bytes acknowledged, and over how long. */
async function over_quota(lab: Lab, until: () => boolean): Promise<HistoryOp> {
  const producer = lab_kafka(lab.plain, QUOTA_CLIENT_ID).producer();
  const started = Date.now();
  let bytes = 0;
  await producer.connect().catch(() => undefined);
  while (until()) {
    try {
      await bounded(producer.send({ topic: QUOTA_TOPIC, acks: -1, messages: QUOTA_BATCH }));
      bytes += QUOTA_BATCH.length * 1024;
    } catch {
      await sleep(100);
    }
  }
  await producer.disconnect().catch(() => undefined);
  const seconds = (Date.now() - started) / 1000;
  return { kind: 'quota_use', bytes, seconds, bytes_per_s: QUOTA_BYTES_PER_S, brokers: lab.plain.length };
}

export async function security_workload(lab: Lab, started_ms: number, until: () => boolean, history: HistoryOp[]) {
  const at = () => Date.now() - started_ms;
  const admin = secure_admin(lab);
  await admin.connect();
  await grant(admin);
  const probes = probing(lab, until, at, history);
  const users = churning(admin, until);
  const quota = over_quota(lab, until).then((op) => history.push(op));
  const configs = config_churning(admin, until, bounded, CHURN_INTERVAL_MS);
  return {
    running: Promise.all([probes, users, quota, configs]).then(() => undefined),
    /**
     * Checks every user's login and the churned broker config on every broker; returns how many
     * went against the last acknowledged change.
     */
    async drain(): Promise<number> {
      const logins = await final_logins(lab, await users, at);
      const described = await final_configs(admin, await configs, at, CONVERGE_WAIT_MS);
      await admin.disconnect().catch(() => undefined);
      history.push(...logins, ...described);
      const wrong_logins = logins.filter(
        (op) => op.kind === 'user_login' && op.logged_in !== (op.expected === 'present'),
      );
      const wrong_configs = described.filter(
        (op) => op.kind === 'broker_config' && !op.allowed.includes(op.value ?? ''),
      );
      return wrong_logins.length + wrong_configs.length;
    },
  };
}
