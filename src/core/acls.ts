// Access control lists, as Kafka defines them: a binding allows or denies one principal, from one
// host or any, one operation on the resources one pattern names (a literal name, `*` for all, or a
// prefix). The front ends ask the core's AclsApi whether a request may go on; the bindings are kept
// in the cluster's metadata (a file on a single node, etcd in a cluster).

export const ACL_RESOURCE_TYPES = ['topic', 'group', 'cluster', 'transactional_id'] as const;
export type AclResourceType = (typeof ACL_RESOURCE_TYPES)[number];

export const ACL_PATTERN_TYPES = ['literal', 'prefixed'] as const;
export type AclPatternType = (typeof ACL_PATTERN_TYPES)[number];

export const ACL_OPERATIONS = [
  'all',
  'read',
  'write',
  'create',
  'delete',
  'alter',
  'describe',
  'cluster_action',
  'describe_configs',
  'alter_configs',
  'idempotent_write',
] as const;
export type AclOperation = (typeof ACL_OPERATIONS)[number];

export const ACL_PERMISSIONS = ['allow', 'deny'] as const;
export type AclPermission = (typeof ACL_PERMISSIONS)[number];

/** The operations that mean something on each resource type (Kafka's own lists; `all` besides). */
export const OPERATIONS_OF: Readonly<Record<AclResourceType, readonly AclOperation[]>> = {
  topic: ['read', 'write', 'create', 'delete', 'alter', 'describe', 'describe_configs', 'alter_configs'],
  group: ['read', 'describe', 'delete'],
  cluster: ['create', 'cluster_action', 'describe_configs', 'alter_configs', 'idempotent_write', 'alter', 'describe'],
  transactional_id: ['describe', 'write'],
};

/** The one cluster resource's name, as Kafka names it. */
export const CLUSTER_RESOURCE = 'kafka-cluster';
/** A literal name that matches every resource of its type. */
export const ANY_RESOURCE = '*';
/** A principal or host that matches any. */
export const WILDCARD = '*';

export interface AclBinding {
  resource_type: AclResourceType;
  resource_name: string;
  pattern_type: AclPatternType;
  /** `User:alice`, `User:CN=alice,O=Acme` (a client certificate), or `User:*`. */
  principal: string;
  /** A client's IP address, or `*`. */
  host: string;
  operation: AclOperation;
  permission: AclPermission;
}

/** What DescribeAcls and DeleteAcls match: `any` (or null for a name) matches every value. */
export interface AclFilter {
  resource_type: AclResourceType | 'any';
  resource_name: string | null;
  /** `match`: the literal and prefixed patterns that would apply to resource_name. */
  pattern_type: AclPatternType | 'any' | 'match';
  principal: string | null;
  host: string | null;
  operation: AclOperation | 'any';
  permission: AclPermission | 'any';
}

/** Who asks: the connection's principal and the address it comes from. */
export interface Requester {
  principal: string;
  host: string;
}

/** The principal of a connection with no login and no client certificate. */
export const ANONYMOUS = 'User:ANONYMOUS';

/** The principal of a user name or certificate subject: `User:<name>`. */
export function user_principal(name: string | null): string {
  return name === null ? ANONYMOUS : `User:${name}`;
}

/** One identity per binding: two equal bindings are one. */
export function binding_key(binding: AclBinding): string {
  const { resource_type, resource_name, pattern_type, principal, host, operation, permission } = binding;
  return JSON.stringify([resource_type, resource_name, pattern_type, principal, host, operation, permission]);
}

export interface AclsApi {
  /** Whether requests are checked at all; off, every authenticated client may do anything. */
  readonly enabled: boolean;
  /** Whether `who` may do `operation` on the resource (always true when not enabled). */
  authorize(who: Requester, operation: AclOperation, resource_type: AclResourceType, name: string): boolean;
  /** The bindings `filter` matches. */
  list(filter: AclFilter): AclBinding[];
  /** Adds the bindings (one already there is kept once). */
  create(bindings: readonly AclBinding[]): Promise<void>;
  /** Removes what each filter matches; answers the bindings each removed. */
  delete(filters: readonly AclFilter[]): Promise<AclBinding[][]>;
}
