// DescribeAcls 0–3: the bindings one filter matches, grouped by resource pattern; needs DESCRIBE on
// the cluster. With authorization off, SECURITY_DISABLED (as Kafka without an authorizer).
import { DESCRIBE_ACLS } from '../../../protocol/kafka/messages/29_describe_acls.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { AclBinding } from '../../../core/index.ts';
import { kafka_handler } from '../handler.ts';
import { AclWireError, acls_off, filter_of, wire_of } from '../acl_wire.ts';
import { allowed_on_cluster, refusal } from '../authorize.ts';

export const describe_acls_handler = kafka_handler(
  DESCRIBE_ACLS,
  { min: 0, max: 3, notes: 'topic, group, cluster and transactional id resources; literal and prefixed patterns' },
  (request, ctx) => {
    const answer = (error_code: number, error_message: string | null, resources: ResourceAcls[] = []) => ({
      throttle_time_ms: 0,
      error_code,
      error_message,
      resources,
    });
    if (!ctx.core.acls.enabled) return answer(ErrorCode.SECURITY_DISABLED, acls_off);
    if (!allowed_on_cluster(ctx, 'describe')) {
      const { error_code, error_message } = refusal(ctx, 'describe', 'cluster', '');
      return answer(error_code, error_message);
    }
    try {
      return answer(ErrorCode.NONE, null, grouped(ctx.core.acls.list(filter_of(request))));
    } catch (error) {
      if (error instanceof AclWireError) return answer(ErrorCode.INVALID_REQUEST, error.message);
      throw error;
    }
  },
);

interface ResourceAcls {
  resource_type: number;
  resource_name: string;
  pattern_type: number;
  acls: Array<{ principal: string; host: string; operation: number; permission_type: number }>;
}

/** The bindings by resource pattern, in the order first seen. */
function grouped(bindings: AclBinding[]): ResourceAcls[] {
  const resources = new Map<string, ResourceAcls>();
  for (const binding of bindings) {
    const { resource_type, resource_name, pattern_type, principal, host, operation, permission_type } =
      wire_of(binding);
    const key = JSON.stringify([resource_type, resource_name, pattern_type]);
    let resource = resources.get(key);
    if (!resource) {
      resource = { resource_type, resource_name, pattern_type, acls: [] };
      resources.set(key, resource);
    }
    resource.acls.push({ principal, host, operation, permission_type });
  }
  return [...resources.values()];
}
