// ACL bindings and filters between the Kafka wire (numbered types, operations and permissions) and
// the core's named ones. A number Kafka has but Sluice does not serve (delegation tokens, users), or
// one Kafka does not have, is refused with a message naming it.
import { ErrorCode } from '../../protocol/kafka/error_codes.ts';
import {
  ACL_OPERATION_CODES,
  ACL_PATTERN_TYPE_CODES,
  ACL_PERMISSION_CODES,
  ACL_RESOURCE_TYPE_CODES,
  acl_name_of,
} from '../../protocol/kafka/acl_codes.ts';
import {
  ACL_OPERATIONS,
  ACL_PATTERN_TYPES,
  ACL_PERMISSIONS,
  ACL_RESOURCE_TYPES,
  type AclBinding,
  type AclFilter,
} from '../../core/index.ts';

export interface WireBinding {
  resource_type: number;
  resource_name: string;
  pattern_type: number;
  principal: string;
  host: string;
  operation: number;
  permission_type: number;
}

export interface WireFilter {
  resource_type_filter: number;
  resource_name_filter: string | null;
  pattern_type_filter: number;
  principal_filter: string | null;
  host_filter: string | null;
  operation: number;
  permission_type: number;
}

export class AclWireError extends Error {}

/** What the ACL APIs answer (SECURITY_DISABLED) on a broker without --authorization. */
export const acls_off = 'authorization is off: start the broker with --authorization to use ACLs';

/** The answer to a binding or filter that names something unknown. */
export function invalid(error: AclWireError): { error_code: number; error_message: string } {
  return { error_code: ErrorCode.INVALID_REQUEST, error_message: error.message };
}

/** The name of `code` among `allowed`, or an AclWireError saying what `what` cannot be. */
function named<const A extends readonly string[]>(
  codes: Record<string, number>,
  allowed: A,
  code: number,
  what: string,
): A[number] {
  const name = acl_name_of(codes, code);
  if (name === undefined || !allowed.includes(name)) {
    const known = name === undefined ? `unknown ${what} ${code}` : `${what} ${name} is not served`;
    throw new AclWireError(`${known} (one of: ${allowed.join(', ')})`);
  }
  return name as A[number];
}

export function binding_of(wire: WireBinding): AclBinding {
  return {
    resource_type: named(ACL_RESOURCE_TYPE_CODES, ACL_RESOURCE_TYPES, wire.resource_type, 'resource type'),
    resource_name: wire.resource_name,
    pattern_type: named(ACL_PATTERN_TYPE_CODES, ACL_PATTERN_TYPES, wire.pattern_type, 'pattern type'),
    principal: wire.principal,
    host: wire.host,
    operation: named(ACL_OPERATION_CODES, ACL_OPERATIONS, wire.operation, 'operation'),
    permission: named(ACL_PERMISSION_CODES, ACL_PERMISSIONS, wire.permission_type, 'permission'),
  };
}

export function filter_of(wire: WireFilter): AclFilter {
  const with_any = <const A extends readonly string[]>(list: A) => ['any', ...list] as const;
  return {
    resource_type: named(
      ACL_RESOURCE_TYPE_CODES,
      with_any(ACL_RESOURCE_TYPES),
      wire.resource_type_filter,
      'resource type',
    ),
    resource_name: wire.resource_name_filter,
    pattern_type: named(
      ACL_PATTERN_TYPE_CODES,
      ['any', 'match', ...ACL_PATTERN_TYPES] as const,
      wire.pattern_type_filter,
      'pattern type',
    ),
    principal: wire.principal_filter,
    host: wire.host_filter,
    operation: named(ACL_OPERATION_CODES, with_any(ACL_OPERATIONS), wire.operation, 'operation'),
    permission: named(ACL_PERMISSION_CODES, with_any(ACL_PERMISSIONS), wire.permission_type, 'permission'),
  };
}

export function wire_of(binding: AclBinding): WireBinding {
  return {
    resource_type: ACL_RESOURCE_TYPE_CODES[binding.resource_type],
    resource_name: binding.resource_name,
    pattern_type: ACL_PATTERN_TYPE_CODES[binding.pattern_type],
    principal: binding.principal,
    host: binding.host,
    operation: ACL_OPERATION_CODES[binding.operation],
    permission_type: ACL_PERMISSION_CODES[binding.permission],
  };
}
