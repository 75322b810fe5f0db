// ApiVersions 0-3: the table of handlers is the source of the ranges advertised (one exception below).
import { API_VERSIONS } from '../../../protocol/kafka/messages/18_api_versions.ts';
import { PRODUCE } from '../../../protocol/kafka/messages/00_produce.ts';
import { kafka_handler, type KafkaHandler } from '../handler.ts';

/**
 * Produce is advertised from version 0 although only 3+ is served (older versions still close the
 * connection), as Kafka 4 does (KAFKA-18659): librdkafka before 2.11.1 checks gzip, snappy and lz4
 * support against Produce v0 and otherwise sends those batches uncompressed.
 */
export const ADVERTISED_MIN_VERSION: ReadonlyMap<number, number> = new Map([[PRODUCE.api_key, 0]]);

export function api_versions_handler(table: () => ReadonlyMap<number, KafkaHandler>): KafkaHandler {
  return kafka_handler(
    API_VERSIONS,
    { min: 0, max: 3, notes: 'an unknown version is answered in the v0 layout with error 35' },
    () => ({
      error_code: 0,
      api_keys: [...table().values()]
        .sort((a, b) => a.api.api_key - b.api.api_key)
        .map((h) => ({
          api_key: h.api.api_key,
          min_version: ADVERTISED_MIN_VERSION.get(h.api.api_key) ?? h.min_version,
          max_version: h.max_version,
        })),
      throttle_time_ms: 0,
    }),
  );
}
