// What DescribeConfigs, AlterConfigs and IncrementalAlterConfigs (and CreateTopics' answer) share:
// resource types and config sources as Kafka numbers them, and the altering of one resource.
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { error_fields } from '../error_map.ts';
import { allowed, audit, refusal } from '../authorize.ts';
import type { RequestContext } from '../handler.ts';

export const RESOURCE_TOPIC = 2;
export const RESOURCE_BROKER = 4;
export const RESOURCE_GROUP = 32;
export const CONFIG_SOURCE_TOPIC = 1;
export const CONFIG_SOURCE_DEFAULT = 5;
/** Kafka's config source for a group config. */
export const CONFIG_SOURCE_GROUP = 8;

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

/** Alters one topic or group resource with `work`; the answer row for it. */
export async function alter_resource(
  ctx: RequestContext,
  validate_only: boolean,
  resource: Resource,
  work: (name: string, kind: 'topic' | 'group') => Promise<void>,
): Promise<AlterAnswer> {
  const base = { resource_type: resource.resource_type, resource_name: resource.resource_name };
  if (resource.resource_type !== RESOURCE_TOPIC && resource.resource_type !== RESOURCE_GROUP) {
    return {
      ...base,
      error_code: ErrorCode.INVALID_REQUEST,
      error_message: 'only topic and group configs can be altered',
    };
  }
  const kind = resource.resource_type === RESOURCE_GROUP ? 'group' : 'topic';
  if (!allowed(ctx, 'alter_configs', kind, resource.resource_name))
    return { ...base, ...refusal(ctx, 'alter_configs', kind, resource.resource_name) };
  try {
    await work(resource.resource_name, kind);
    if (!validate_only) audit(ctx, `alter ${kind} configs`, { [kind]: resource.resource_name });
  } catch (error) {
    return { ...base, ...error_fields(error) };
  }
  return { ...base, error_code: 0, error_message: null };
}
