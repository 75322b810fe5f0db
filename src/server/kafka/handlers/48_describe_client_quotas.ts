// DescribeClientQuotas 0–1: the quotas of the entities a filter matches; needs DESCRIBE_CONFIGS on
// the cluster. A filter naming an entity type or match type Sluice does not know is INVALID_REQUEST.
import { DESCRIBE_CLIENT_QUOTAS } from '../../../protocol/kafka/messages/48_describe_client_quotas.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { is_quota_entity_type, type QuotaFilterComponent } from '../../../core/index.ts';
import { kafka_handler } from '../handler.ts';
import { allowed_on_cluster, refusal } from '../authorize.ts';
import { entity_to_wire } from '../quota_wire.ts';

const MATCHES: Record<number, (name: string | null) => QuotaFilterComponent['match'] | null> = {
  0: (name) => (name === null ? null : { name }),
  1: () => 'default',
  2: () => 'any',
};

export const describe_client_quotas_handler = kafka_handler(
  DESCRIBE_CLIENT_QUOTAS,
  { min: 0, max: 1, notes: 'user and client-id entities; quotas kept in the cluster metadata' },
  (request, ctx) => {
    const failed = (error_code: number, error_message: string) => ({
      throttle_time_ms: 0,
      error_code,
      error_message,
      entries: null,
    });
    if (!allowed_on_cluster(ctx, 'describe_configs')) {
      const { error_code, error_message } = refusal(ctx, 'describe_configs', 'cluster', '');
      return failed(error_code, error_message);
    }
    const components: QuotaFilterComponent[] = [];
    for (const component of request.components) {
      const match = MATCHES[component.match_type]?.(component.match) ?? null;
      if (!is_quota_entity_type(component.entity_type))
        return failed(ErrorCode.INVALID_REQUEST, `unknown entity type ${JSON.stringify(component.entity_type)}`);
      if (match === null) return failed(ErrorCode.INVALID_REQUEST, `invalid match type ${component.match_type}`);
      components.push({ entity_type: component.entity_type, match });
    }
    const entries = ctx.core.quotas.list({ components, strict: request.strict }).map((quota) => ({
      entity: entity_to_wire(quota.entity),
      values: Object.entries(quota.values).map(([key, value]) => ({ key, value })),
    }));
    return { throttle_time_ms: 0, error_code: ErrorCode.NONE, error_message: null, entries };
  },
);
