// AlterClientQuotas 0–1: sets and removes quotas, one result per entity; needs ALTER_CONFIGS on the
// cluster. An unknown entity type or quota key, or a value that is not a positive number (a whole
// one for byte rates), is refused alone with INVALID_REQUEST and its reason.
import { ALTER_CLIENT_QUOTAS } from '../../../protocol/kafka/messages/49_alter_client_quotas.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { kafka_handler } from '../handler.ts';
import { allowed_on_cluster, audit, refusal } from '../authorize.ts';
import { error_fields } from '../error_map.ts';
import { QuotaWireError, changes_of, entity_of } from '../quota_wire.ts';

export const alter_client_quotas_handler = kafka_handler(
  ALTER_CLIENT_QUOTAS,
  { min: 0, max: 1, notes: 'producer_byte_rate, consumer_byte_rate and request_percentage per user and client id' },
  async (request, ctx) => {
    if (!allowed_on_cluster(ctx, 'alter_configs')) {
      const { error_code, error_message } = refusal(ctx, 'alter_configs', 'cluster', '');
      return {
        throttle_time_ms: 0,
        entries: request.entries.map(({ entity }) => ({ error_code, error_message, entity })),
      };
    }
    const entries = [];
    for (const { entity: wire, ops } of request.entries) {
      try {
        const entity = entity_of(wire);
        const { set, remove } = changes_of(ops);
        await ctx.core.quotas.alter(entity, set, remove, request.validate_only);
        if (!request.validate_only) audit(ctx, 'alter client quotas', { entity, set, remove });
        entries.push({ error_code: ErrorCode.NONE, error_message: null, entity: wire });
      } catch (error) {
        const fields =
          error instanceof QuotaWireError
            ? { error_code: ErrorCode.INVALID_REQUEST, error_message: error.message }
            : error_fields(error);
        entries.push({ ...fields, entity: wire });
      }
    }
    return { throttle_time_ms: 0, entries };
  },
);
