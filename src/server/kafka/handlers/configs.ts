// What DescribeConfigs, AlterConfigs and IncrementalAlterConfigs (and CreateTopics' answer) share:
// resource types and config sources as Kafka numbers them, and the altering of one resource.
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { error_fields } from '../error_map.ts';
import { allowed, audit, refusal } from '../authorize.ts';
import type { RequestContext } from '../handler.ts';
import { CLUSTER_RESOURCE, type ConfigSourceName } from '../../../core/index.ts';

export const RESOURCE_TOPIC = 2;
export const RESOURCE_BROKER = 4;
export const RESOURCE_BROKER_LOGGER = 8;
export const RESOURCE_GROUP = 32;
export const CONFIG_SOURCE_TOPIC = 1;
export const CONFIG_SOURCE_DYNAMIC_BROKER = 2;
export const CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER = 3;
export const CONFIG_SOURCE_STATIC_BROKER = 4;
export const CONFIG_SOURCE_DEFAULT = 5;
/** Kafka's config source for a group config. */
export const CONFIG_SOURCE_GROUP = 8;

/** Kafka's number for where a value comes from; `resource`: the topic's, group's or broker's own. */
export function source_number(source: ConfigSourceName, resource_type: number): number {
  switch (source) {
    case 'resource':
      return resource_type === RESOURCE_BROKER
        ? CONFIG_SOURCE_DYNAMIC_BROKER
        : resource_type === RESOURCE_GROUP
          ? CONFIG_SOURCE_GROUP
          : CONFIG_SOURCE_TOPIC;
    case 'cluster_default':
      return CONFIG_SOURCE_DYNAMIC_DEFAULT_BROKER;
    case 'static':
      return CONFIG_SOURCE_STATIC_BROKER;
    case 'default':
      return CONFIG_SOURCE_DEFAULT;
  }
}

/** The kind of resource a config request names, for its ACL check; null for one not served. */
export function resource_kind(resource_type: number): 'topic' | 'group' | 'cluster' | null {
  if (resource_type === RESOURCE_TOPIC) return 'topic';
  if (resource_type === RESOURCE_GROUP) return 'group';
  return resource_type === RESOURCE_BROKER ? 'cluster' : null;
}

/** The answer to a resource type Sluice does not serve: non-retriable, naming what is missing. */
export function unserved_resource(resource_type: number): { error_code: number; error_message: string } {
  return {
    error_code: ErrorCode.INVALID_REQUEST,
    error_message:
      resource_type === RESOURCE_BROKER_LOGGER
        ? 'BROKER_LOGGER resources are not served: the log level is the broker config sluice.log_level'
        : `resource type ${resource_type} is not served: only topics, groups and brokers have configs`,
  };
}

/** The configs of a request as a name -> value map (a null value is left out). */
export function configs_of(list: ReadonlyArray<{ name: string; value: string | null }>): Record<string, string> {
  const configs: Record<string, string> = {};
  for (const entry of list) if (entry.value !== null) configs[entry.name] = entry.value;
  return configs;
}

interface Resource {
  resource_type: number;
  resource_name: string;
}

interface AlterAnswer extends Resource {
  error_code: number;
  error_message: string | null;
}

/** Alters one topic, group or broker resource with `work`; the answer row for it. */
export async function alter_resource(
  ctx: RequestContext,
  validate_only: boolean,
  resource: Resource,
  work: (name: string, kind: 'topic' | 'group' | 'cluster') => Promise<void>,
): Promise<AlterAnswer> {
  const base = { resource_type: resource.resource_type, resource_name: resource.resource_name };
  const kind = resource_kind(resource.resource_type);
  if (kind === null) return { ...base, ...unserved_resource(resource.resource_type) };
  const acl_name = kind === 'cluster' ? CLUSTER_RESOURCE : resource.resource_name;
  if (!allowed(ctx, 'alter_configs', kind, acl_name))
    return { ...base, ...refusal(ctx, 'alter_configs', kind, acl_name) };
  try {
    await work(resource.resource_name, kind);
    const what = kind === 'cluster' ? 'broker' : kind;
    if (!validate_only) audit(ctx, `alter ${what} configs`, { [what]: resource.resource_name });
  } catch (error) {
    return { ...base, ...error_fields(error) };
  }
  return { ...base, error_code: 0, error_message: null };
}
