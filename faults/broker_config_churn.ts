// Part of the security workload: the admin keeps changing a cluster-wide dynamic broker config
// (max.connections.per.ip, high enough never to refuse the lab's clients) while faults happen;
// afterwards every broker must describe the last acknowledged value, or one of the changes tried
// after it whose outcome is unknown (broker_configs_converge, security_properties.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Admin } from '../src/sdk/admin.ts';
import type { HistoryOp } from './checker/history.ts';

const CONFIG = 'max.connections.per.ip';
const VALUE_BASE = 100_000;
const BROKER = 4;

/** What the churn left: the last acknowledged value, and those tried after it (unknown outcome). */
export interface ConfigChurn {
  acknowledged: string | null;
  tried_after: string[];
}

export async function config_churning(
  admin: Admin,
  until: () => boolean,
  bounded: <T>(call: Promise<T>) => Promise<T>,
  interval_ms: number,
): Promise<ConfigChurn> {
  const churn: ConfigChurn = { acknowledged: null, tried_after: [] };
  for (let n = 0; until(); n++) {
    const value = String(VALUE_BASE + n);
    churn.tried_after.push(value);
    try {
      const set = { name: CONFIG, value, operation: 'SET' as const };
      await bounded(admin.incrementalAlterConfigs({ resources: [{ type: BROKER, name: '', configEntries: [set] }] }));
      churn.acknowledged = value;
      churn.tried_after = [];
    } catch {
      // not acknowledged: it may or may not have been stored
    }
    await sleep(interval_ms);
  }
  return churn;
}

/** The value each broker describes once the faults are healed, given `wait_ms` to show the last change. */
export async function final_configs(
  admin: Admin,
  churn: ConfigChurn,
  at: () => number,
  wait_ms: number,
): Promise<HistoryOp[]> {
  if (churn.acknowledged === null) return [];
  const allowed = [churn.acknowledged, ...churn.tried_after];
  const deadline = Date.now() + wait_ms;
  const ids = (await admin.describeCluster()).brokers.map((b) => b.nodeId);
  const ops: HistoryOp[] = [];
  for (const id of ids) {
    let value = await described(admin, id);
    while ((value === null || !allowed.includes(value)) && Date.now() < deadline) {
      await sleep(250);
      value = await described(admin, id);
    }
    ops.push({ kind: 'broker_config', broker: id, name: CONFIG, value, allowed, at_ms: at() });
  }
  return ops;
}

async function described(admin: Admin, id: number): Promise<string | null> {
  try {
    const answer = await admin.describeConfigs({
      resources: [{ type: BROKER, name: String(id), configNames: [CONFIG] }],
      includeSynonyms: false,
    });
    return answer.resources[0]?.configEntries[0]?.configValue ?? null;
  } catch {
    return null;
  }
}
