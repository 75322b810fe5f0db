// IncrementalAlterConfigs 0-1: sets (SET) and removes (DELETE) single configs of a topic or a
// share group, leaving the others. APPEND and SUBTRACT apply to list configs, of which there are
// none yet: refused with INVALID_CONFIG.
import { INCREMENTAL_ALTER_CONFIGS } from '../../../protocol/kafka/messages/44_incremental_alter_configs.ts';
import type { RequestOf, Row } from '../../../protocol/kafka/schema.ts';
import { BrokerError } from '../../../core/index.ts';
import { kafka_handler } from '../handler.ts';
import { alter_resource } from './configs.ts';

const OPERATION_SET = 0;
const OPERATION_DELETE = 1;

type ConfigChange = Row<Row<RequestOf<typeof INCREMENTAL_ALTER_CONFIGS>['resources']>['configs']>;

/** The configs to set and the names to remove. */
function changes_of(configs: readonly ConfigChange[]): { set: Record<string, string>; remove: string[] } {
  const set: Record<string, string> = {};
  const remove: string[] = [];
  for (const config of configs) {
    const operation = config.config_operation;
    if (operation === OPERATION_SET) {
      if (config.value === null) throw new BrokerError('invalid_config', `${config.name}: SET needs a value`);
      set[config.name] = config.value;
    } else if (operation === OPERATION_DELETE) remove.push(config.name);
    else
      throw new BrokerError(
        'invalid_config',
        `config operation ${operation} (APPEND/SUBTRACT) applies to list configs only; none are supported`,
      );
  }
  return { set, remove };
}

export const incremental_alter_configs_handler = kafka_handler(
  INCREMENTAL_ALTER_CONFIGS,
  { min: 0, max: 1, notes: 'SET and DELETE' },
  async (request, ctx) => {
    const validate_only = request.validate_only;
    const responses = [];
    for (const resource of request.resources) {
      responses.push(
        await alter_resource(ctx, validate_only, resource, async (name, kind) => {
          const { set, remove } = changes_of(resource.configs);
          if (kind === 'group') await ctx.core.shares.set_configs(name, set, { remove, validate_only });
          else await ctx.core.topics.set_configs(name, set, { merge: true, remove, validate_only });
        }),
      );
    }
    return { throttle_time_ms: 0, responses };
  },
);
