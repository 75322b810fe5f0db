// Admin: ACLs, in kafkajs's shape. CreateAcls, DescribeAcls and DeleteAcls go to any broker (each
// keeps the cluster's bindings); a refused creation or filter throws with its code and message.
import {
  ACL_OPERATION_CODES,
  ACL_PATTERN_TYPE_CODES,
  ACL_PERMISSION_CODES,
  ACL_RESOURCE_TYPE_CODES,
} from '../protocol/kafka/acl_codes.ts';
import { CREATE_ACLS } from '../protocol/kafka/messages/30_create_acls.ts';
import { DESCRIBE_ACLS } from '../protocol/kafka/messages/29_describe_acls.ts';
import { DELETE_ACLS } from '../protocol/kafka/messages/31_delete_acls.ts';
import { check_code } from './errors.ts';
import { invalid, type AdminRequests } from './admin_requests.ts';

/** Kafka's numbers, under kafkajs's names. */
export const AclResourceTypes = {
  UNKNOWN: ACL_RESOURCE_TYPE_CODES.unknown,
  ANY: ACL_RESOURCE_TYPE_CODES.any,
  TOPIC: ACL_RESOURCE_TYPE_CODES.topic,
  GROUP: ACL_RESOURCE_TYPE_CODES.group,
  CLUSTER: ACL_RESOURCE_TYPE_CODES.cluster,
  TRANSACTIONAL_ID: ACL_RESOURCE_TYPE_CODES.transactional_id,
} as const;
export const ResourcePatternTypes = {
  ANY: ACL_PATTERN_TYPE_CODES.any,
  MATCH: ACL_PATTERN_TYPE_CODES.match,
  LITERAL: ACL_PATTERN_TYPE_CODES.literal,
  PREFIXED: ACL_PATTERN_TYPE_CODES.prefixed,
} as const;
export const AclOperationTypes = Object.fromEntries(
  Object.entries(ACL_OPERATION_CODES).map(([name, code]) => [name.toUpperCase(), code]),
) as { readonly [K in keyof typeof ACL_OPERATION_CODES as Uppercase<K>]: (typeof ACL_OPERATION_CODES)[K] };
export const AclPermissionTypes = {
  ANY: ACL_PERMISSION_CODES.any,
  DENY: ACL_PERMISSION_CODES.deny,
  ALLOW: ACL_PERMISSION_CODES.allow,
} as const;

export interface AclEntry {
  resourceType: number;
  resourceName: string;
  resourcePatternType: number;
  /** `User:alice` */
  principal: string;
  /** An IP address, or `*`. */
  host: string;
  operation: number;
  permissionType: number;
}

/** What describeAcls and deleteAcls match: absent strings match any; the numbers may be ANY. */
export interface AclFilter {
  resourceType: number;
  resourceName?: string | null;
  resourcePatternType: number;
  principal?: string | null;
  host?: string | null;
  operation: number;
  permissionType: number;
}

export interface DescribeAclResponse {
  throttleTime: number;
  resources: Array<{
    resourceType: number;
    resourceName: string;
    resourcePatternType: number;
    acls: Array<{ principal: string; host: string; operation: number; permissionType: number }>;
  }>;
}

export interface DeleteAclResponse {
  throttleTime: number;
  filterResponses: Array<{ matchingAcls: AclEntry[] }>;
}

const ACL_VERSIONS = { min: 0, max: 3 } as const;

const wire_filter = (filter: AclFilter) => ({
  resource_type_filter: filter.resourceType,
  resource_name_filter: filter.resourceName ?? null,
  pattern_type_filter: filter.resourcePatternType,
  principal_filter: filter.principal ?? null,
  host_filter: filter.host ?? null,
  operation: filter.operation,
  permission_type: filter.permissionType,
});

/** Adds ACL bindings; throws the first refusal (the others may have been added). */
export async function create_acls(admin: AdminRequests, options: { acl: AclEntry[] }): Promise<boolean> {
  if (!Array.isArray(options?.acl) || options.acl.length === 0)
    throw invalid('createAcls: acl must be a non-empty array');
  const { response } = await admin.cluster.with_retry('CreateAcls', async () =>
    (await admin.cluster.any()).send(CREATE_ACLS, ACL_VERSIONS.min, ACL_VERSIONS.max, {
      creations: options.acl.map((entry) => ({
        resource_type: entry.resourceType,
        resource_name: entry.resourceName,
        resource_pattern_type: entry.resourcePatternType,
        principal: entry.principal,
        host: entry.host,
        operation: entry.operation,
        permission_type: entry.permissionType,
      })),
    }),
  );
  response.results.forEach((result, i) => check_code(result.error_code, `createAcls ${i}`, result.error_message));
  return true;
}

/** The bindings `filter` matches, grouped by resource pattern. */
export async function describe_acls(admin: AdminRequests, filter: AclFilter): Promise<DescribeAclResponse> {
  const { response } = await admin.cluster.with_retry('DescribeAcls', async () =>
    (await admin.cluster.any()).send(DESCRIBE_ACLS, ACL_VERSIONS.min, ACL_VERSIONS.max, wire_filter(filter)),
  );
  check_code(response.error_code, 'describeAcls', response.error_message);
  return {
    throttleTime: response.throttle_time_ms,
    resources: response.resources.map((r) => ({
      resourceType: r.resource_type,
      resourceName: r.resource_name,
      resourcePatternType: r.pattern_type,
      acls: r.acls.map((a) => ({
        principal: a.principal,
        host: a.host,
        operation: a.operation,
        permissionType: a.permission_type,
      })),
    })),
  };
}

/** Removes what each filter matches; answers the bindings each removed. */
export async function delete_acls(admin: AdminRequests, options: { filters: AclFilter[] }): Promise<DeleteAclResponse> {
  if (!Array.isArray(options?.filters) || options.filters.length === 0)
    throw invalid('deleteAcls: filters must be a non-empty array');
  const { response } = await admin.cluster.with_retry('DeleteAcls', async () =>
    (await admin.cluster.any()).send(DELETE_ACLS, ACL_VERSIONS.min, ACL_VERSIONS.max, {
      filters: options.filters.map(wire_filter),
    }),
  );
  return {
    throttleTime: response.throttle_time_ms,
    filterResponses: response.filter_results.map((result, i) => {
      check_code(result.error_code, `deleteAcls ${i}`, result.error_message);
      return {
        matchingAcls: result.matching_acls.map((a) => ({
          resourceType: a.resource_type,
          resourceName: a.resource_name,
          resourcePatternType: a.pattern_type,
          principal: a.principal,
          host: a.host,
          operation: a.operation,
          permissionType: a.permission_type,
        })),
      };
    }),
  };
}
