// DescribeConfigs 0-4: topic, share-group and broker configs with the value in force and where it
// comes from (the resource's own, the cluster-wide dynamic default, the broker's start settings or
// the built-in default); v1+ synonyms when asked (every value in precedence order), v3+ each
// config's type and, when asked, its documentation (which says when a standard Kafka config is
// accepted without effect, and when a broker config is read-only).
import { DESCRIBE_CONFIGS } from '../../../protocol/kafka/messages/32_describe_configs.ts';
import type { RequestOf, ResponseIn, Row } from '../../../protocol/kafka/schema.ts';
import { BrokerError, CLUSTER_RESOURCE, type ConfigEntry, type ConfigValueType } from '../../../core/index.ts';
import { error_fields } from '../error_map.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { allowed, refusal } from '../authorize.ts';
import { RESOURCE_BROKER, RESOURCE_GROUP, resource_kind, source_number, unserved_resource } from './configs.ts';

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

function config_rows(entries: readonly ConfigEntry[], asked: Asked, resource_type: number): ConfigRow[] {
  const { keys } = asked;
  return entries
    .filter((entry) => keys === null || keys.length === 0 || keys.includes(entry.name))
    .map((entry) => {
      const source = entry.source ?? (entry.is_set ? 'resource' : 'default');
      const synonyms = entry.synonyms ?? [
        ...(entry.is_set ? [{ name: entry.name, value: entry.value, source: 'resource' as const }] : []),
        ...(entry.default !== undefined
          ? [{ name: entry.name, value: entry.default, source: 'default' as const }]
          : []),
      ];
      return {
        name: entry.name,
        value: entry.value,
        read_only: entry.read_only ?? false,
        is_default: source === 'default',
        config_source: source_number(source, resource_type),
        is_sensitive: false,
        synonyms: asked.synonyms
          ? synonyms.map((s) => ({ name: s.name, value: s.value, source: source_number(s.source, resource_type) }))
          : [],
        config_type: entry.type ? CONFIG_TYPES[entry.type] : 0,
        documentation: asked.documentation ? (entry.documentation ?? null) : null,
      };
    });
}

/** The configs of a resource with their values in force; throws a BrokerError for one that cannot be described. */
function entries_of(ctx: RequestContext, resource: ResourceRequest): ConfigEntry[] {
  if (resource.resource_type === RESOURCE_BROKER) return ctx.core.configs.entries(resource.resource_name);
  if (resource.resource_type === RESOURCE_GROUP) return ctx.core.shares.config_entries(resource.resource_name);
  const topic = ctx.core.topics.get(resource.resource_name);
  if (!topic) throw new BrokerError('unknown_topic_or_partition', `unknown topic ${resource.resource_name}`);
  return ctx.core.topics.config_entries(topic);
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
  const kind = resource_kind(resource.resource_type);
  if (kind === null) return { ...base, ...unserved_resource(resource.resource_type) };
  const acl_name = kind === 'cluster' ? CLUSTER_RESOURCE : resource.resource_name;
  if (!allowed(ctx, 'describe_configs', kind, acl_name))
    return { ...base, ...refusal(ctx, 'describe_configs', kind, acl_name) };
  const asked = { keys: resource.configuration_keys, synonyms: include_synonyms, documentation: include_documentation };
  try {
    return { ...base, configs: config_rows(entries_of(ctx, resource), asked, resource.resource_type) };
  } catch (error) {
    return { ...base, ...error_fields(error) };
  }
}

export const describe_configs_handler = kafka_handler(
  DESCRIBE_CONFIGS,
  {
    min: 0,
    max: 4,
    notes:
      'topic, share-group and broker configs with their sources, synonyms, types and documentation (every ' +
      'standard topic config; those without effect say so; every broker setting, Kafka-named where Kafka has it)',
  },
  (request, ctx) => ({
    throttle_time_ms: 0,
    results: request.resources.map((resource) => describe(ctx, resource, request)),
  }),
);
