// `sluice acl add|list|remove`: ACL bindings through the SDK's admin (CreateAcls, DescribeAcls,
// DeleteAcls), named as Kafka's kafka-acls.sh names them: a principal, a resource (--topic,
// --group, --transactional-id or --cluster), --prefixed for a prefix pattern, operations, --deny.
import {
  AclOperationTypes,
  AclPermissionTypes,
  AclResourceTypes,
  ResourcePatternTypes,
  type AclEntry,
  type AclFilter,
} from '../sdk/index.ts';
import { print, with_admin, type ClientFlags } from './client_support.ts';

export interface AclFlags extends ClientFlags {
  principal?: string;
  host?: string;
  topic?: string;
  group?: string;
  transactionalId?: string;
  cluster?: boolean;
  prefixed?: boolean;
  /** Comma-separated: read,write,describe,... */
  operation?: string;
  deny?: boolean;
}

const CLUSTER_NAME = 'kafka-cluster';

function resource_of(flags: AclFlags): { type: number; name: string } | null {
  const given = [
    flags.topic !== undefined && { type: AclResourceTypes.TOPIC, name: flags.topic },
    flags.group !== undefined && { type: AclResourceTypes.GROUP, name: flags.group },
    flags.transactionalId !== undefined && { type: AclResourceTypes.TRANSACTIONAL_ID, name: flags.transactionalId },
    flags.cluster === true && { type: AclResourceTypes.CLUSTER, name: CLUSTER_NAME },
  ].filter((r) => r !== false);
  if (given.length > 1) throw new Error('name one resource: --topic, --group, --transactional-id or --cluster');
  return given[0] ?? null;
}

function operations_of(flags: AclFlags): number[] {
  return (flags.operation ?? '')
    .split(',')
    .filter(Boolean)
    .map((name) => {
      const code = (AclOperationTypes as Record<string, number>)[name.trim().toUpperCase().replace(/-/g, '_')];
      if (code === undefined || code < AclOperationTypes.ALL)
        throw new Error(
          `unknown operation ${JSON.stringify(name)} (all, read, write, create, delete, alter, describe, ...)`,
        );
      return code;
    });
}

export async function acl_add(flags: AclFlags): Promise<void> {
  const resource = resource_of(flags);
  const operations = operations_of(flags);
  if (!resource || !flags.principal || operations.length === 0)
    throw new Error('acl add needs --principal, a resource (--topic, --group, ...) and --operation');
  const acl: AclEntry[] = operations.map((operation) => ({
    resourceType: resource.type,
    resourceName: resource.name,
    resourcePatternType: flags.prefixed ? ResourcePatternTypes.PREFIXED : ResourcePatternTypes.LITERAL,
    principal: flags.principal!,
    host: flags.host ?? '*',
    operation,
    permissionType: flags.deny ? AclPermissionTypes.DENY : AclPermissionTypes.ALLOW,
  }));
  await with_admin(flags, (admin) => admin.createAcls({ acl }));
  print(flags, { added: acl.map(named) }, () => acl.map((entry) => `added ${line(named(entry))}`).join('\n'));
}

/** The filter of the flags given: what is not given matches anything. */
function filters_of(flags: AclFlags): AclFilter[] {
  const resource = resource_of(flags);
  const base = {
    resourceType: resource?.type ?? AclResourceTypes.ANY,
    resourceName: resource?.name ?? null,
    resourcePatternType: flags.prefixed
      ? ResourcePatternTypes.PREFIXED
      : resource
        ? ResourcePatternTypes.LITERAL
        : ResourcePatternTypes.ANY,
    principal: flags.principal ?? null,
    host: flags.host ?? null,
    permissionType: flags.deny ? AclPermissionTypes.DENY : AclPermissionTypes.ANY,
  };
  const operations = operations_of(flags);
  return (operations.length > 0 ? operations : [AclOperationTypes.ANY]).map((operation) => ({ ...base, operation }));
}

export async function acl_list(flags: AclFlags): Promise<void> {
  const found = await with_admin(flags, async (admin) => {
    const all: ReturnType<typeof named>[] = [];
    for (const filter of filters_of(flags)) {
      const described = await admin.describeAcls(filter);
      for (const r of described.resources)
        for (const a of r.acls)
          all.push(
            named({
              ...a,
              resourceType: r.resourceType,
              resourceName: r.resourceName,
              resourcePatternType: r.resourcePatternType,
            }),
          );
    }
    return all;
  });
  print(flags, found, () => (found.length === 0 ? 'no ACLs' : found.map(line).join('\n')));
}

export async function acl_remove(flags: AclFlags): Promise<void> {
  if (!resource_of(flags) && !flags.principal)
    throw new Error('acl remove needs --principal or a resource, so it never removes every ACL by accident');
  const removed = await with_admin(flags, async (admin) => {
    const answer = await admin.deleteAcls({ filters: filters_of(flags) });
    return answer.filterResponses.flatMap((r) => r.matchingAcls.map(named));
  });
  print(flags, { removed }, () =>
    removed.length === 0 ? 'no ACLs matched' : removed.map((a) => `removed ${line(a)}`).join('\n'),
  );
}

const name_of = (codes: Record<string, number>, code: number) =>
  (Object.entries(codes).find(([, value]) => value === code)?.[0] ?? String(code)).toLowerCase();

function named(entry: AclEntry) {
  return {
    principal: entry.principal,
    host: entry.host,
    permission: name_of(AclPermissionTypes, entry.permissionType),
    operation: name_of(AclOperationTypes, entry.operation),
    resource_type: name_of(AclResourceTypes, entry.resourceType),
    resource_name: entry.resourceName,
    pattern_type: name_of(ResourcePatternTypes, entry.resourcePatternType),
  };
}

function line(acl: ReturnType<typeof named>): string {
  const pattern = acl.pattern_type === 'prefixed' ? ' (prefix)' : '';
  const resource = `${acl.resource_type} ${acl.resource_name}${pattern}`;
  return `${acl.principal} ${acl.permission} ${acl.operation} on ${resource} from ${acl.host}`;
}
