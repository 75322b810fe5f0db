// ApiVersions 0-3: the table of handlers is the only source of the ranges advertised.
import { API_VERSIONS } from '../../../protocol/kafka/messages/18_api_versions.ts';
import type { KafkaHandler } from '../handler.ts';
import { versions } from './util.ts';

export function api_versions_handler(table: () => ReadonlyMap<number, KafkaHandler>): KafkaHandler {
  return {
    api: API_VERSIONS,
    ...versions(API_VERSIONS, 0, 3),
    handle: () => ({
      error_code: 0,
      api_keys: [...table().values()]
        .sort((a, b) => a.api.api_key - b.api.api_key)
        .map((h) => ({ api_key: h.api.api_key, min_version: h.min_version, max_version: h.max_version })),
      throttle_time_ms: 0,
    }),
  };
}
