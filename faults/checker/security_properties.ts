// The security workload's properties: ACLs hold through faults (a user never sees a topic it may
// not), managed users converge (after the faults every broker logs in exactly the users whose last
// acknowledged change left them present), so do dynamic broker configs (every broker describes the
// last acknowledged value), and a quota holds through leader moves and restarts.
import type { AclProbeOp, BrokerConfigOp, Failure, QuotaUseOp, UserLoginOp } from './history.ts';

/**
 * Seconds of quota a producer may take beyond its time: each broker's first window (a full
 * bucket), and one more for each restart of a broker, which starts its buckets full again.
 */
export const QUOTA_SLACK_S = 10;

export function acl_leaks(probes: readonly AclProbeOp[]): Failure[] {
  const leaked = probes.filter((probe) => probe.listed || probe.records > 0);
  if (leaked.length === 0) return [];
  return [
    {
      property: 'acl_held',
      detail: `${leaked.length} probes saw a topic no ACL lets the user describe or read`,
      ops: leaked.slice(0, 10),
    },
  ];
}

export function users_diverge(logins: readonly UserLoginOp[]): Failure[] {
  const wrong = logins.filter((login) => login.logged_in !== (login.expected === 'present'));
  if (wrong.length === 0) return [];
  return [
    {
      property: 'users_converge',
      detail: `${wrong.length} logins went against the last acknowledged change of the user`,
      ops: wrong.slice(0, 10),
    },
  ];
}

export function broker_configs_diverge(configs: readonly BrokerConfigOp[]): Failure[] {
  const wrong = configs.filter((op) => op.value === null || !op.allowed.includes(op.value));
  if (wrong.length === 0) return [];
  return [
    {
      property: 'broker_configs_converge',
      detail: `${wrong.length} brokers describe a cluster-wide config other than its last acknowledged change`,
      ops: wrong,
    },
  ];
}

export function quota_exceeded(uses: readonly QuotaUseOp[]): Failure[] {
  return uses
    .filter((use) => use.bytes > use.bytes_per_s * use.brokers * (use.seconds + QUOTA_SLACK_S))
    .map((use) => ({
      property: 'quota_held',
      detail:
        `${use.bytes} bytes acknowledged in ${use.seconds} s over a quota of ${use.bytes_per_s} B/s ` +
        `on each of ${use.brokers} brokers`,
      ops: [use],
    }));
}
