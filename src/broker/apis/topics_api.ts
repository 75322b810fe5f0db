// The core API's topics (core/api.ts TopicsApi) over the broker's topic index.
import type { TopicsApi } from '../../core/api.ts';
import type { CoreInternals } from './internals.ts';
import { topic_config_entries } from '../topic_config.ts';

export function topics_api(broker: CoreInternals): TopicsApi {
  const index = broker.topic_index;
  return {
    get: (name) => index.get(name),
    get_by_id: (id) => index.get_by_id(id),
    list: () => index.list(),
    default_partitions: broker.settings.default_partitions,
    ensure: (name, allow_auto_create) => broker.ensure_topic(name, allow_auto_create),
    create: (name, partitions, configs = {}, options = {}) =>
      index.create(name, partitions === -1 ? broker.settings.default_partitions : partitions, configs, options),
    async delete(name) {
      await index.delete(name);
      // Offsets committed for the topic go with it where they are kept (the group coordinator).
      if (broker.coordinators.group_host) await broker.coordinators.offsets.delete_topic(name);
    },
    add_partitions: (name, total, options) => index.add_partitions(name, total, options),
    set_configs: (name, configs, options) => index.set_configs(name, configs, options),
    config_entries: (topic) => topic_config_entries(topic.configs, index.defaults()),
  };
}
