// Authorization on the Kafka listener: who a request comes from (the SASL login, else the client
// certificate's subject, else ANONYMOUS; and the client's address), and whether the core's ACLs let
// it do an operation on a resource. With authorization off every check answers yes at once.
import {
  BrokerError,
  CLUSTER_RESOURCE,
  OPERATIONS_OF,
  type BrokerErrorKind,
  user_principal,
  type AclOperation,
  type AclResourceType,
  type Requester,
} from '../../core/index.ts';
import { ErrorCode } from '../../protocol/kafka/error_codes.ts';
import { ACL_OPERATION_CODES } from '../../protocol/kafka/acl_codes.ts';
import type { RequestContext } from './handler.ts';

export function requester(ctx: Pick<RequestContext, 'sasl' | 'client_host'>): Requester {
  return { principal: user_principal(ctx.sasl.principal), host: ctx.client_host };
}

export function allowed(ctx: RequestContext, operation: AclOperation, type: AclResourceType, name: string): boolean {
  return !ctx.core.acls.enabled || ctx.core.acls.authorize(requester(ctx), operation, type, name);
}

export function allowed_on_cluster(ctx: RequestContext, operation: AclOperation): boolean {
  return allowed(ctx, operation, 'cluster', CLUSTER_RESOURCE);
}

const REFUSAL_KINDS = {
  topic: 'topic_authorization_failed',
  group: 'group_authorization_failed',
  cluster: 'cluster_authorization_failed',
  transactional_id: 'transactional_id_authorization_failed',
} as const satisfies Record<AclResourceType, BrokerErrorKind>;

/** The Kafka error code of a refusal on each resource type. */
export const REFUSED: Readonly<Record<AclResourceType, number>> = {
  topic: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  group: ErrorCode.GROUP_AUTHORIZATION_FAILED,
  cluster: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
  transactional_id: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
};

/** The refusal of `operation` on the resource, as an error a handler answers with its code. */
export function refused(
  ctx: RequestContext,
  operation: AclOperation,
  type: AclResourceType,
  name: string,
): BrokerError {
  const what = type === 'cluster' ? 'the cluster' : `${type} ${name}`;
  return new BrokerError(REFUSAL_KINDS[type], `${requester(ctx).principal} may not ${operation} ${what}`);
}

/** Throws the refusal unless the ACLs allow `operation` on the resource. */
export function require_allowed(
  ctx: RequestContext,
  operation: AclOperation,
  type: AclResourceType,
  name: string,
): void {
  if (!allowed(ctx, operation, type, name)) throw refused(ctx, operation, type, name);
}

/** The code and message of a refusal, for a response row. */
export function refusal(
  ctx: RequestContext,
  operation: AclOperation,
  type: AclResourceType,
  name: string,
): { error_code: number; error_message: string } {
  return { error_code: REFUSED[type], error_message: refused(ctx, operation, type, name).message };
}

/** An audit line for a change a client made (who, what, from where; the log line carries when). */
export function audit(ctx: RequestContext, change: string, detail: Record<string, unknown>): void {
  const { principal, host } = requester(ctx);
  ctx.core.logger.info({ audit: true, principal, client: host, change, ...detail }, 'admin change');
}

/**
 * What Metadata, DescribeGroups and DescribeCluster answer when asked for authorized operations: a
 * bit (1 << Kafka's operation code) for each operation of the resource type the client may do.
 */
export function authorized_operations(ctx: RequestContext, type: AclResourceType, name: string): number {
  let bits = 0;
  for (const operation of OPERATIONS_OF[type])
    if (allowed(ctx, operation, type, type === 'cluster' ? CLUSTER_RESOURCE : name))
      bits |= 1 << ACL_OPERATION_CODES[operation];
  return bits;
}
