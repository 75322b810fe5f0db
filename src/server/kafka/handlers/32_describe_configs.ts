// DescribeConfigs 0-4: topic configs and share-group configs with the value in force and whether
// it was set (source TOPIC / GROUP) or is the default; a BROKER resource is answered with no
// configs. No synonyms or documentation.
import { DESCRIBE_CONFIGS } from '../../../protocol/kafka/messages/32_describe_configs.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { RequestOf, ResponseIn, Row } from '../../../protocol/kafka/schema.ts';
import { CLUSTER_RESOURCE, type ConfigEntry } from '../../../core/index.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { allowed, refusal } from '../authorize.ts';
import {
  CONFIG_SOURCE_DEFAULT,
  CONFIG_SOURCE_GROUP,
  CONFIG_SOURCE_TOPIC,
  RESOURCE_BROKER,
  RESOURCE_GROUP,
  RESOURCE_TOPIC,
} from './configs.ts';

type ResourceRequest = Row<RequestOf<typeof DESCRIBE_CONFIGS>['resources']>;
type ResourceResult = Row<ResponseIn<typeof DESCRIBE_CONFIGS>['results']>;
type ConfigRow = Row<ResourceResult['configs']>;

function config_rows(entries: readonly ConfigEntry[], keys: string[] | null, source_when_set: number): ConfigRow[] {
  return entries
    .filter((entry) => keys === null || keys.length === 0 || keys.includes(entry.name))
    .map((entry) => ({
      name: entry.name,
      value: entry.value,
      read_only: false,
      is_default: !entry.is_set,
      config_source: entry.is_set ? source_when_set : CONFIG_SOURCE_DEFAULT,
      is_sensitive: false,
      synonyms: [],
      config_type: 0,
      documentation: null,
    }));
}

function describe(ctx: RequestContext, resource: ResourceRequest): ResourceResult {
  const base = {
    resource_type: resource.resource_type,
    resource_name: resource.resource_name,
    error_code: 0,
    error_message: null,
    configs: [],
  };
  const keys = resource.configuration_keys;
  const refused = describe_refusal(ctx, resource);
  if (refused) return { ...base, ...refused };
  if (resource.resource_type === RESOURCE_BROKER) return base;
  if (resource.resource_type === RESOURCE_GROUP)
    return {
      ...base,
      configs: config_rows(ctx.core.shares.config_entries(resource.resource_name), keys, CONFIG_SOURCE_GROUP),
    };
  if (resource.resource_type !== RESOURCE_TOPIC)
    return {
      ...base,
      error_code: ErrorCode.INVALID_REQUEST,
      error_message: 'only topic, group and broker resources are supported',
    };
  const topic = ctx.core.topics.get(resource.resource_name);
  if (!topic)
    return {
      ...base,
      error_code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
      error_message: `unknown topic ${resource.resource_name}`,
    };
  return { ...base, configs: config_rows(ctx.core.topics.config_entries(topic), keys, CONFIG_SOURCE_TOPIC) };
}

export const describe_configs_handler = kafka_handler(
  DESCRIBE_CONFIGS,
  {
    min: 0,
    max: 4,
    notes: 'topic and share-group configs with their sources; a BROKER resource is answered with none',
  },
  (request, ctx) => ({
    throttle_time_ms: 0,
    results: request.resources.map((resource) => describe(ctx, resource)),
  }),
);

/** DESCRIBE_CONFIGS on the topic, group or (a broker's) the cluster, refused; null when allowed. */
function describe_refusal(ctx: RequestContext, resource: ResourceRequest) {
  const kind =
    resource.resource_type === RESOURCE_BROKER
      ? 'cluster'
      : resource.resource_type === RESOURCE_GROUP
        ? 'group'
        : resource.resource_type === RESOURCE_TOPIC
          ? 'topic'
          : null;
  const name = kind === 'cluster' ? CLUSTER_RESOURCE : resource.resource_name;
  if (kind === null || allowed(ctx, 'describe_configs', kind, name)) return null;
  return refusal(ctx, 'describe_configs', kind, name);
}
