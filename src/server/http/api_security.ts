// /api/v1/acls, /api/v1/users and /api/v1/quotas: the same ACLs, managed users and client quotas
// as the Kafka admin APIs, over HTTP. Names as the core has them (`topic`, `read`, `allow`); users
// are listed with their mechanisms, never a secret. Users are added with `sluice user` or the SDK,
// which salt the password on the client.
import {
  ACL_OPERATIONS,
  ACL_PATTERN_TYPES,
  ACL_PERMISSIONS,
  ACL_RESOURCE_TYPES,
  QUOTA_KEYS,
  is_quota_entity_type,
  type AclBinding,
  type AclFilter,
  type QuotaEntity,
  type QuotaKey,
  type QuotaValues,
} from '../../core/index.ts';
import { invalid_body, invalid_query } from './http_errors.ts';
import { body_object, type JsonObject } from './request_params.ts';
import type { Router } from './router.ts';

function one_of<T extends string>(text: string | null, allowed: readonly T[], field: string, fallback?: T): T {
  if ((text === null || text === '') && fallback !== undefined) return fallback;
  if (!allowed.includes(text as T)) throw invalid_query(field, `${field} must be one of ${allowed.join(', ')}`);
  return text as T;
}

/** A filter from the query: a parameter left out matches any. */
function acl_filter(query: URLSearchParams): AclFilter {
  return {
    resource_type: one_of(query.get('resource_type'), [...ACL_RESOURCE_TYPES, 'any'], 'resource_type', 'any'),
    resource_name: query.get('resource_name') || null,
    pattern_type: one_of(query.get('pattern_type'), [...ACL_PATTERN_TYPES, 'any', 'match'], 'pattern_type', 'any'),
    principal: query.get('principal') || null,
    host: query.get('host') || null,
    operation: one_of(query.get('operation'), [...ACL_OPERATIONS, 'any'], 'operation', 'any'),
    permission: one_of(query.get('permission'), [...ACL_PERMISSIONS, 'any'], 'permission', 'any'),
  };
}

function body_choice<T extends string>(body: JsonObject, field: string, allowed: readonly T[], fallback?: T): T {
  const value = body[field] ?? fallback;
  if (!allowed.includes(value as T)) throw invalid_body(field, `${field} must be one of ${allowed.join(', ')}`);
  return value as T;
}

function body_text(body: JsonObject, field: string, fallback?: string): string {
  const value = body[field] ?? fallback;
  if (typeof value !== 'string' || value === '') throw invalid_body(field, `${field} must be a non-empty string`);
  return value;
}

/** The bindings a body asks for: one per operation of `operations`. */
function acl_bindings(body: JsonObject): AclBinding[] {
  const operations = body.operations;
  if (!Array.isArray(operations) || operations.length === 0)
    throw invalid_body('operations', 'operations must be a non-empty array');
  const common = {
    resource_type: body_choice(body, 'resource_type', ACL_RESOURCE_TYPES),
    resource_name: body_text(body, 'resource_name', body.resource_type === 'cluster' ? 'kafka-cluster' : undefined),
    pattern_type: body_choice(body, 'pattern_type', ACL_PATTERN_TYPES, 'literal'),
    principal: body_text(body, 'principal'),
    host: body_text(body, 'host', '*'),
    permission: body_choice(body, 'permission', ACL_PERMISSIONS, 'allow'),
  };
  return operations.map((operation) => ({
    ...common,
    operation: body_choice({ operation } as JsonObject, 'operation', ACL_OPERATIONS),
  }));
}

function quota_entity(value: unknown): QuotaEntity {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid_body('entity', 'entity must be an object: {"user": name or null, "client-id": name or null}');
  const entity: QuotaEntity = {};
  for (const [type, name] of Object.entries(value as JsonObject)) {
    if (!is_quota_entity_type(type)) throw invalid_body('entity', `unknown entity type ${JSON.stringify(type)}`);
    if (name !== null && typeof name !== 'string') throw invalid_body('entity', `${type} must be a name or null`);
    entity[type] = name;
  }
  return entity;
}

function quota_changes(body: JsonObject): { set: QuotaValues; remove: QuotaKey[] } {
  const set: QuotaValues = {};
  const given = body.set ?? {};
  if (typeof given !== 'object' || given === null || Array.isArray(given))
    throw invalid_body('set', 'set must be an object of quota names to numbers');
  for (const [key, value] of Object.entries(given as JsonObject)) {
    const name = body_choice({ key } as JsonObject, 'key', QUOTA_KEYS);
    if (typeof value !== 'number') throw invalid_body('set', `${key} must be a number`);
    set[name] = value;
  }
  const remove = body.remove ?? [];
  if (!Array.isArray(remove)) throw invalid_body('remove', 'remove must be an array of quota names');
  return { set, remove: remove.map((key) => body_choice({ key } as JsonObject, 'key', QUOTA_KEYS)) };
}

export function add_security_routes(router: Router): void {
  router.add('GET', '/api/v1/acls', (request, { core }) => ({
    status: 200,
    body: { enabled: core.acls.enabled, acls: core.acls.list(acl_filter(request.query)) },
  }));

  router.add('POST', '/api/v1/acls', async (request, { core }) => {
    const bindings = acl_bindings(body_object(await request.body()));
    await core.acls.create(bindings);
    return { status: 201, body: { acls: bindings } };
  });

  router.add('DELETE', '/api/v1/acls', async (request, { core }) => {
    // An empty filter matches every binding: removing them all must be asked for by name.
    if ([...request.query.keys()].length === 0)
      throw invalid_query(
        'principal',
        'name what to remove (principal, resource_type, ...): nothing given matches every ACL',
      );
    const [removed] = await core.acls.delete([acl_filter(request.query)]);
    return { status: 200, body: { removed } };
  });

  router.add('GET', '/api/v1/users', (_request, { core }) => ({
    status: 200,
    body: { users: core.users.describe(null) },
  }));

  router.add('GET', '/api/v1/quotas', (_request, { core }) => ({
    status: 200,
    body: { quotas: core.quotas.list({ components: [], strict: false }) },
  }));

  router.add('PUT', '/api/v1/quotas', async (request, { core }) => {
    const body = body_object(await request.body());
    const entity = quota_entity(body.entity);
    const { set, remove } = quota_changes(body);
    await core.quotas.alter(entity, set, remove, false);
    return { status: 200, body: { entity, set, remove } };
  });
}
