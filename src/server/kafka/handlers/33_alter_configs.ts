// AlterConfigs 0-2: replaces all configs of a topic or a share group, or the dynamic configs of a
// broker or of the cluster-wide broker defaults (those not given go back to their defaults).
import { ALTER_CONFIGS } from '../../../protocol/kafka/messages/33_alter_configs.ts';
import { kafka_handler } from '../handler.ts';
import { alter_resource, configs_of } from './configs.ts';

export const alter_configs_handler = kafka_handler(
  ALTER_CONFIGS,
  {
    min: 0,
    max: 2,
    notes: "replaces all configs of a topic or a share group, or a broker's dynamic configs (read-only ones refused)",
  },
  async (request, ctx) => {
    const validate_only = request.validate_only;
    const responses = [];
    for (const resource of request.resources) {
      const configs = configs_of(resource.configs);
      responses.push(
        await alter_resource(ctx, validate_only, resource, (name, kind) =>
          kind === 'group'
            ? ctx.core.shares.set_configs(name, configs, { replace: true, validate_only })
            : kind === 'cluster'
              ? ctx.core.configs.set(name, configs, { replace: true, validate_only })
              : ctx.core.topics.set_configs(name, configs, { validate_only }),
        ),
      );
    }
    return { throttle_time_ms: 0, responses };
  },
);
