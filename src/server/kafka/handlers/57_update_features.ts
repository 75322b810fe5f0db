// UpdateFeatures 0-2: refused. Sluice's one finalized feature, transaction.version, is fixed when
// the brokers start (--transaction-version); the answer says so, not retriable.
import { UPDATE_FEATURES } from '../../../protocol/kafka/messages/57_update_features.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { kafka_handler } from '../handler.ts';
import { allowed_on_cluster, refusal } from '../authorize.ts';

const REFUSED =
  'finalized features cannot be changed while the brokers run: transaction.version is set at start ' +
  '(--transaction-version, the same on every broker)';

export const update_features_handler = kafka_handler(
  UPDATE_FEATURES,
  { min: 0, max: 2, notes: 'refused (INVALID_REQUEST): transaction.version is set when the brokers start' },
  (request, ctx) => {
    if (!allowed_on_cluster(ctx, 'alter'))
      return { throttle_time_ms: 0, ...refusal(ctx, 'alter', 'cluster', ''), results: [] };
    const results = request.feature_updates.map((update) => ({
      feature: update.feature,
      error_code: ErrorCode.INVALID_REQUEST,
      error_message: REFUSED,
    }));
    return { throttle_time_ms: 0, error_code: ErrorCode.INVALID_REQUEST, error_message: REFUSED, results };
  },
);
