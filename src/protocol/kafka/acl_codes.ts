// The numbers Kafka's ACL APIs (DescribeAcls, CreateAcls, DeleteAcls) give resource types, pattern
// types, operations and permissions, by name. ANY matches every value in a filter; MATCH (pattern
// types only) matches the patterns that apply to a name; UNKNOWN is never valid.
export const ACL_RESOURCE_TYPE_CODES = {
  unknown: 0,
  any: 1,
  topic: 2,
  group: 3,
  cluster: 4,
  transactional_id: 5,
  delegation_token: 6,
  user: 7,
} as const;

export const ACL_PATTERN_TYPE_CODES = { unknown: 0, any: 1, match: 2, literal: 3, prefixed: 4 } as const;

export const ACL_OPERATION_CODES = {
  unknown: 0,
  any: 1,
  all: 2,
  read: 3,
  write: 4,
  create: 5,
  delete: 6,
  alter: 7,
  describe: 8,
  cluster_action: 9,
  describe_configs: 10,
  alter_configs: 11,
  idempotent_write: 12,
  create_tokens: 13,
  describe_tokens: 14,
} as const;

export const ACL_PERMISSION_CODES = { unknown: 0, any: 1, deny: 2, allow: 3 } as const;

/** The name of `code` in `codes`, or undefined for a number it does not have. */
export function acl_name_of<T extends Record<string, number>>(codes: T, code: number): keyof T | undefined {
  for (const [name, value] of Object.entries(codes)) if (value === code) return name as keyof T;
  return undefined;
}
