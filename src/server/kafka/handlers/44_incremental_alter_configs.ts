// IncrementalAlterConfigs 0-1: sets (SET) and removes (DELETE) single configs of a topic, a share
// group or a broker (its dynamic ones, or the cluster-wide defaults), leaving the others; APPEND
// and SUBTRACT add items to and take them from list configs (cleanup.policy, the replication
// throttles). Any other use is INVALID_CONFIG.
import { INCREMENTAL_ALTER_CONFIGS } from '../../../protocol/kafka/messages/44_incremental_alter_configs.ts';
import type { RequestOf, Row } from '../../../protocol/kafka/schema.ts';
import { BrokerError, type ConfigEntry } from '../../../core/index.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { alter_resource } from './configs.ts';

const OPERATION_SET = 0;
const OPERATION_DELETE = 1;
const OPERATION_APPEND = 2;
const OPERATION_SUBTRACT = 3;

type ConfigChange = Row<Row<RequestOf<typeof INCREMENTAL_ALTER_CONFIGS>['resources']>['configs']>;

const items_of = (text: string) =>
  text
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');

/** A list config with `given` appended (the items it lacks) or subtracted. */
function list_changed(config: ConfigChange, current: ConfigEntry | undefined): string {
  if (current?.type !== 'list')
    throw new BrokerError('invalid_config', `${config.name}: APPEND and SUBTRACT apply to list configs only`);
  const items = items_of(current.value);
  const given = items_of(config.value ?? '');
  if (config.config_operation === OPERATION_APPEND)
    return [...items, ...given.filter((item) => !items.includes(item))].join(',');
  return items.filter((item) => !given.includes(item)).join(',');
}

/** The configs to set and the names to remove; `current`: the resource's configs now (lists change from them). */
function changes_of(
  configs: readonly ConfigChange[],
  current: (name: string) => ConfigEntry | undefined,
): { set: Record<string, string>; remove: string[] } {
  const set: Record<string, string> = {};
  const remove: string[] = [];
  for (const config of configs) {
    const operation = config.config_operation;
    if (operation === OPERATION_SET) {
      if (config.value === null) throw new BrokerError('invalid_config', `${config.name}: SET needs a value`);
      set[config.name] = config.value;
    } else if (operation === OPERATION_DELETE) remove.push(config.name);
    else if (operation === OPERATION_APPEND || operation === OPERATION_SUBTRACT)
      set[config.name] = list_changed(config, current(config.name));
    else throw new BrokerError('invalid_config', `${config.name}: unknown config operation ${operation}`);
  }
  return { set, remove };
}

function topic_entries(ctx: RequestContext, name: string): ConfigEntry[] {
  const topic = ctx.core.topics.get(name);
  if (!topic) throw new BrokerError('unknown_topic_or_partition', `unknown topic ${name}`);
  return ctx.core.topics.config_entries(topic);
}

export const incremental_alter_configs_handler = kafka_handler(
  INCREMENTAL_ALTER_CONFIGS,
  { min: 0, max: 1, notes: 'SET and DELETE on topics, groups and brokers; APPEND and SUBTRACT on list configs' },
  async (request, ctx) => {
    const validate_only = request.validate_only;
    const responses = [];
    for (const resource of request.resources) {
      responses.push(
        await alter_resource(ctx, validate_only, resource, async (name, kind) => {
          const entries = kind === 'topic' ? topic_entries(ctx, name) : [];
          // A broker's entries are read only for APPEND and SUBTRACT: another broker's cannot be here.
          const current = (config: string) =>
            (kind === 'cluster' ? ctx.core.configs.entries(name) : entries).find((e) => e.name === config);
          const { set, remove } = changes_of(resource.configs, current);
          if (kind === 'group') await ctx.core.shares.set_configs(name, set, { remove, validate_only });
          else if (kind === 'cluster') await ctx.core.configs.set(name, set, { remove, validate_only });
          else await ctx.core.topics.set_configs(name, set, { merge: true, remove, validate_only });
        }),
      );
    }
    return { throttle_time_ms: 0, responses };
  },
);
