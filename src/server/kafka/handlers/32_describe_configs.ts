// DescribeConfigs 0-4: topic configs and share-group configs with the value in force and whether
// it was set (source TOPIC / GROUP) or is the default; v1+ synonyms when asked (the value set, then
// the default), v3+ each config's type and, when asked, its documentation (which says when a
// standard Kafka config is accepted without effect). A BROKER resource is answered with no configs.
import { DESCRIBE_CONFIGS } from '../../../protocol/kafka/messages/32_describe_configs.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { RequestOf, ResponseIn, Row } from '../../../protocol/kafka/schema.ts';
import { CLUSTER_RESOURCE, type ConfigEntry, type ConfigValueType } from '../../../core/index.ts';
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

/** Kafka's numbers for config types (DescribeConfigs v3+). */
const CONFIG_TYPES: Readonly<Record<ConfigValueType, number>> = {
  boolean: 1,
  string: 2,
  int: 3,
  long: 5,
  double: 6,
  list: 7,
};

interface Asked {
  keys: string[] | null;
  synonyms: boolean;
  documentation: boolean;
}

function config_rows(entries: readonly ConfigEntry[], asked: Asked, source_when_set: number): ConfigRow[] {
  const { keys } = asked;
  return entries
    .filter((entry) => keys === null || keys.length === 0 || keys.includes(entry.name))
    .map((entry) => {
      const source = entry.is_set ? source_when_set : CONFIG_SOURCE_DEFAULT;
      const synonyms = [];
      if (asked.synonyms && entry.is_set) synonyms.push({ name: entry.name, value: entry.value, source });
      if (asked.synonyms && entry.default !== undefined)
        synonyms.push({ name: entry.name, value: entry.default, source: CONFIG_SOURCE_DEFAULT });
      return {
        name: entry.name,
        value: entry.value,
        read_only: false,
        is_default: !entry.is_set,
        config_source: source,
        is_sensitive: false,
        synonyms,
        config_type: entry.type ? CONFIG_TYPES[entry.type] : 0,
        documentation: asked.documentation ? (entry.documentation ?? null) : null,
      };
    });
}

function describe(
  ctx: RequestContext,
  resource: ResourceRequest,
  { include_synonyms, include_documentation }: { include_synonyms: boolean; include_documentation: boolean },
): ResourceResult {
  const base = {
    resource_type: resource.resource_type,
    resource_name: resource.resource_name,
    error_code: 0,
    error_message: null,
    configs: [],
  };
  const asked = { keys: resource.configuration_keys, synonyms: include_synonyms, documentation: include_documentation };
  const refused = describe_refusal(ctx, resource);
  if (refused) return { ...base, ...refused };
  if (resource.resource_type === RESOURCE_BROKER) return base;
  if (resource.resource_type === RESOURCE_GROUP)
    return {
      ...base,
      configs: config_rows(ctx.core.shares.config_entries(resource.resource_name), asked, CONFIG_SOURCE_GROUP),
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
  return { ...base, configs: config_rows(ctx.core.topics.config_entries(topic), asked, CONFIG_SOURCE_TOPIC) };
}

export const describe_configs_handler = kafka_handler(
  DESCRIBE_CONFIGS,
  {
    min: 0,
    max: 4,
    notes:
      'topic and share-group configs with their sources, synonyms, types and documentation (every standard ' +
      'topic config; those without effect say so); a BROKER resource is answered with none',
  },
  (request, ctx) => ({
    throttle_time_ms: 0,
    results: request.resources.map((resource) => describe(ctx, resource, request)),
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
