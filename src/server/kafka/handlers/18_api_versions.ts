// ApiVersions 0-3: the table of handlers is the source of the ranges advertised (exceptions
// below); from v3 the features: transaction.version, finalized at the broker's setting.
import { API_VERSIONS } from '../../../protocol/kafka/messages/18_api_versions.ts';
import { PRODUCE } from '../../../protocol/kafka/messages/00_produce.ts';
import { END_TXN } from '../../../protocol/kafka/messages/26_end_txn.ts';
import { TXN_OFFSET_COMMIT } from '../../../protocol/kafka/messages/28_txn_offset_commit.ts';
import { kafka_handler, type KafkaHandler } from '../handler.ts';

/**
 * Produce is advertised from version 0 although only 3+ is served (older versions still close the
 * connection), as Kafka 4 does (KAFKA-18659): librdkafka before 2.11.1 checks gzip, snappy and lz4
 * support against Produce v0 and otherwise sends those batches uncompressed.
 */
export const ADVERTISED_MIN_VERSION: ReadonlyMap<number, number> = new Map([[PRODUCE.api_key, 0]]);

/**
 * KIP-890's feature: at level 2 clients may end each transaction under a new epoch (EndTxn v5) and
 * let partitions and offsets join a transaction with their Produce (v12) and TxnOffsetCommit (v5).
 * At level 1 those versions are not advertised, as Kafka does, so clients keep to the earlier ones.
 */
export const TRANSACTION_VERSION = 'transaction.version';
const TRANSACTION_VERSION_MAX = 2;
const VERSION_1_MAX: ReadonlyMap<number, number> = new Map([
  [PRODUCE.api_key, 11],
  [END_TXN.api_key, 4],
  [TXN_OFFSET_COMMIT.api_key, 4],
]);

export function api_versions_handler(table: () => ReadonlyMap<number, KafkaHandler>): KafkaHandler {
  return kafka_handler(
    API_VERSIONS,
    { min: 0, max: 3, notes: 'an unknown version is answered in the v0 layout with error 35' },
    (_request, ctx) => {
      const level = ctx.core.transactions.version;
      return {
        error_code: 0,
        api_keys: [...table().values()]
          .sort((a, b) => a.api.api_key - b.api.api_key)
          .map((h) => ({
            api_key: h.api.api_key,
            min_version: ADVERTISED_MIN_VERSION.get(h.api.api_key) ?? h.min_version,
            max_version:
              level < 2 ? Math.min(h.max_version, VERSION_1_MAX.get(h.api.api_key) ?? h.max_version) : h.max_version,
          })),
        throttle_time_ms: 0,
        supported_features: [{ name: TRANSACTION_VERSION, min_version: 0, max_version: TRANSACTION_VERSION_MAX }],
        finalized_features_epoch: 0,
        finalized_features: [{ name: TRANSACTION_VERSION, max_version_level: level, min_version_level: level }],
      };
    },
  );
}
