// CreateAcls 0–3: adds bindings, one result each; needs ALTER on the cluster. A binding that names
// something Sluice does not serve, or that cannot apply (an operation a resource type does not
// have, a host that is not an address), is refused alone with INVALID_REQUEST and its reason.
import { CREATE_ACLS } from '../../../protocol/kafka/messages/30_create_acls.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { AclBinding } from '../../../core/index.ts';
import { kafka_handler } from '../handler.ts';
import { AclWireError, acls_off, binding_of, invalid } from '../acl_wire.ts';
import { allowed_on_cluster, audit, refusal } from '../authorize.ts';
import { error_fields } from '../error_map.ts';

export const create_acls_handler = kafka_handler(
  CREATE_ACLS,
  { min: 0, max: 3, notes: 'stored in the cluster metadata (a file on one node, etcd in a cluster)' },
  async (request, ctx) => {
    const all = (error_code: number, message: string) =>
      request.creations.map(() => ({ error_code, error_message: message }));
    if (!ctx.core.acls.enabled) return { throttle_time_ms: 0, results: all(ErrorCode.SECURITY_DISABLED, acls_off) };
    if (!allowed_on_cluster(ctx, 'alter')) {
      const { error_code, error_message } = refusal(ctx, 'alter', 'cluster', '');
      return { throttle_time_ms: 0, results: all(error_code, error_message) };
    }
    const results: Array<{ error_code: number; error_message: string | null }> = [];
    for (const creation of request.creations) {
      try {
        const binding: AclBinding = binding_of({ ...creation, pattern_type: creation.resource_pattern_type });
        await ctx.core.acls.create([binding]);
        audit(ctx, 'create ACL', { binding });
        results.push({ error_code: ErrorCode.NONE, error_message: null });
      } catch (error) {
        results.push(error instanceof AclWireError ? invalid(error) : error_fields(error));
      }
    }
    return { throttle_time_ms: 0, results };
  },
);
