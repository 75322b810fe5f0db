// The core's AclsApi: bindings checked and kept in the metadata store (so every broker of a cluster
// decides by the same ones), and requests decided by an Authorizer loaded from what the store
// holds now.
import net from 'node:net';
import {
  CLUSTER_RESOURCE,
  OPERATIONS_OF,
  WILDCARD,
  binding_key,
  type AclBinding,
  type AclFilter,
  type AclOperation,
  type AclResourceType,
  type AclsApi,
  type Requester,
} from '../../core/acls.ts';
import { BrokerError } from '../../core/errors.ts';
import type { MetadataStore } from '../../core/metadata_store.ts';
import { Authorizer, filter_matches } from './authorizer.ts';

/** Bindings the broker keeps at most: each is checked on every request for its resource type. */
export const ACL_BINDINGS_MAX = 10_000;

export interface AclSettings {
  /** Check requests against the bindings; off, any authenticated client may do anything. */
  enabled: boolean;
  /** Principals allowed everything (`User:admin`). */
  super_users: readonly string[];
}

/** Why `binding` cannot be stored, or null. */
export function binding_problem(binding: AclBinding): string | null {
  if (!/^[A-Za-z]+:.+$/.test(binding.principal))
    return `principal ${JSON.stringify(binding.principal)} is not TYPE:NAME`;
  if (binding.host !== WILDCARD && net.isIP(binding.host) === 0)
    return `host ${JSON.stringify(binding.host)} is neither an IP address nor *`;
  if (binding.resource_name === '') return 'the resource name is empty';
  if (binding.resource_type === 'cluster' && binding.resource_name !== CLUSTER_RESOURCE)
    return `the cluster resource is named ${CLUSTER_RESOURCE}`;
  if (binding.operation !== 'all' && !OPERATIONS_OF[binding.resource_type].includes(binding.operation))
    return `operation ${binding.operation} does not apply to a ${binding.resource_type}`;
  return null;
}

export class Acls implements AclsApi {
  readonly enabled: boolean;
  private readonly authorizer: Authorizer;
  private loaded: readonly AclBinding[] | null = null;

  constructor(
    private readonly store: MetadataStore,
    settings: AclSettings,
  ) {
    this.enabled = settings.enabled;
    this.authorizer = new Authorizer(new Set(settings.super_users));
  }

  authorize(who: Requester, operation: AclOperation, resource_type: AclResourceType, name: string): boolean {
    if (!this.enabled) return true;
    const current = this.store.acls();
    if (current !== this.loaded) {
      this.authorizer.load(current);
      this.loaded = current;
    }
    return this.authorizer.authorize(who, operation, resource_type, name);
  }

  list(filter: AclFilter): AclBinding[] {
    return this.store.acls().filter((binding) => filter_matches(filter, binding));
  }

  async create(bindings: readonly AclBinding[]): Promise<void> {
    for (const binding of bindings) {
      const problem = binding_problem(binding);
      if (problem) throw new BrokerError('invalid_request', problem);
    }
    const known = new Set(this.store.acls().map(binding_key));
    const added = bindings.filter((binding) => !known.has(binding_key(binding)));
    if (known.size + added.length > ACL_BINDINGS_MAX)
      throw new BrokerError('policy_violation', `at most ${ACL_BINDINGS_MAX} ACL bindings are kept`);
    if (added.length > 0) await this.store.change_acls(added, []);
  }

  async delete(filters: readonly AclFilter[]): Promise<AclBinding[][]> {
    const all = this.store.acls();
    const matched = filters.map((filter) => all.filter((binding) => filter_matches(filter, binding)));
    const removed = matched.flat();
    if (removed.length > 0) await this.store.change_acls([], removed);
    return matched;
  }
}
