// Deciding a request against the ACL bindings, as Kafka's standard authorizer does: super users may
// do anything; otherwise a matching deny wins over any allow, and with no matching allow the answer
// is no. `all` matches every operation; read, write, delete and alter imply describe, and
// alter_configs implies describe_configs. Answers are remembered until the bindings change, so a
// produce pays for a Map lookup, not a scan of every binding.
import {
  ANY_RESOURCE,
  WILDCARD,
  type AclBinding,
  type AclFilter,
  type AclOperation,
  type AclResourceType,
  type Requester,
} from '../../core/acls.ts';

/** Remembered answers; past this many the memory starts again (a bound, not an expected size). */
export const DECISIONS_CACHED_MAX = 100_000;

const IMPLIES_DESCRIBE: ReadonlySet<AclOperation> = new Set(['read', 'write', 'delete', 'alter', 'describe']);
const IMPLIES_DESCRIBE_CONFIGS: ReadonlySet<AclOperation> = new Set(['alter_configs', 'describe_configs']);

/** Whether a binding for `granted` covers a request for `wanted`. */
function covers(granted: AclOperation, wanted: AclOperation): boolean {
  if (granted === 'all' || granted === wanted) return true;
  if (wanted === 'describe') return IMPLIES_DESCRIBE.has(granted);
  if (wanted === 'describe_configs') return IMPLIES_DESCRIBE_CONFIGS.has(granted);
  return false;
}

/** Whether a binding's pattern names the resource `name`. */
export function pattern_names(binding: Pick<AclBinding, 'pattern_type' | 'resource_name'>, name: string): boolean {
  if (binding.pattern_type === 'prefixed') return name.startsWith(binding.resource_name);
  return binding.resource_name === name || binding.resource_name === ANY_RESOURCE;
}

export class Authorizer {
  private by_type = new Map<AclResourceType, AclBinding[]>();
  private readonly decisions = new Map<string, boolean>();

  constructor(private readonly super_users: ReadonlySet<string>) {}

  /** The bindings to decide by from now on. */
  load(bindings: readonly AclBinding[]): void {
    const by_type = new Map<AclResourceType, AclBinding[]>();
    for (const binding of bindings) {
      const list = by_type.get(binding.resource_type);
      if (list) list.push(binding);
      else by_type.set(binding.resource_type, [binding]);
    }
    this.by_type = by_type;
    this.decisions.clear();
  }

  authorize(who: Requester, operation: AclOperation, resource_type: AclResourceType, name: string): boolean {
    if (this.super_users.has(who.principal)) return true;
    const key = `${who.principal}\u0000${who.host}\u0000${operation}\u0000${resource_type}\u0000${name}`;
    const known = this.decisions.get(key);
    if (known !== undefined) return known;
    const decision = this.decide(who, operation, resource_type, name);
    if (this.decisions.size >= DECISIONS_CACHED_MAX) this.decisions.clear();
    this.decisions.set(key, decision);
    return decision;
  }

  private decide(who: Requester, operation: AclOperation, resource_type: AclResourceType, name: string): boolean {
    let allowed = false;
    for (const binding of this.by_type.get(resource_type) ?? []) {
      if (!pattern_names(binding, name) || !covers(binding.operation, operation)) continue;
      if (binding.principal !== who.principal && binding.principal !== `User:${WILDCARD}`) continue;
      if (binding.host !== who.host && binding.host !== WILDCARD) continue;
      if (binding.permission === 'deny') return false;
      allowed = true;
    }
    return allowed;
  }
}

/** Whether `filter` (DescribeAcls, DeleteAcls) matches `binding`. */
export function filter_matches(filter: AclFilter, binding: AclBinding): boolean {
  if (filter.resource_type !== 'any' && filter.resource_type !== binding.resource_type) return false;
  if (filter.operation !== 'any' && filter.operation !== binding.operation) return false;
  if (filter.permission !== 'any' && filter.permission !== binding.permission) return false;
  if (filter.principal !== null && filter.principal !== binding.principal) return false;
  if (filter.host !== null && filter.host !== binding.host) return false;
  if (filter.pattern_type === 'match')
    return filter.resource_name === null || pattern_names(binding, filter.resource_name);
  if (filter.pattern_type !== 'any' && filter.pattern_type !== binding.pattern_type) return false;
  return filter.resource_name === null || filter.resource_name === binding.resource_name;
}
