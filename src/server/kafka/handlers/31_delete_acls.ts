// DeleteAcls 0–3: removes what each filter matches and answers the bindings each removed; needs
// ALTER on the cluster. A filter naming something unknown is refused alone with INVALID_REQUEST.
import { DELETE_ACLS } from '../../../protocol/kafka/messages/31_delete_acls.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { AclBinding, AclFilter } from '../../../core/index.ts';
import { kafka_handler } from '../handler.ts';
import { AclWireError, acls_off, filter_of, invalid, wire_of } from '../acl_wire.ts';
import { allowed_on_cluster, audit, refusal } from '../authorize.ts';
import { error_fields } from '../error_map.ts';

export const delete_acls_handler = kafka_handler(
  DELETE_ACLS,
  { min: 0, max: 3, notes: 'stored in the cluster metadata (a file on one node, etcd in a cluster)' },
  async (request, ctx) => {
    const all = (error_code: number, error_message: string) =>
      request.filters.map(() => ({ error_code, error_message, matching_acls: [] }));
    if (!ctx.core.acls.enabled)
      return { throttle_time_ms: 0, filter_results: all(ErrorCode.SECURITY_DISABLED, acls_off) };
    if (!allowed_on_cluster(ctx, 'alter')) {
      const { error_code, error_message } = refusal(ctx, 'alter', 'cluster', '');
      return { throttle_time_ms: 0, filter_results: all(error_code, error_message) };
    }
    const filters: Array<AclFilter | AclWireError> = request.filters.map((filter) => {
      try {
        return filter_of(filter);
      } catch (error) {
        if (error instanceof AclWireError) return error;
        throw error;
      }
    });
    const valid = filters.filter((filter): filter is AclFilter => !(filter instanceof AclWireError));
    let removed: AclBinding[][];
    try {
      removed = await ctx.core.acls.delete(valid);
    } catch (error) {
      return {
        throttle_time_ms: 0,
        filter_results: request.filters.map(() => ({ ...error_fields(error), matching_acls: [] })),
      };
    }
    if (valid.length > 0) audit(ctx, 'delete ACLs', { removed: removed.flat() });
    let next = 0;
    const filter_results = filters.map((filter) => {
      if (filter instanceof AclWireError) return { ...invalid(filter), matching_acls: [] };
      const matching_acls = removed[next++]!.map((binding) => ({
        error_code: 0,
        error_message: null,
        ...wire_of(binding),
      }));
      return { error_code: ErrorCode.NONE, error_message: null, matching_acls };
    });
    return { throttle_time_ms: 0, filter_results };
  },
);
