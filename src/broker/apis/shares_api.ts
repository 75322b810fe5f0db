// The core API's share groups (SharesApi): the queue model over the share coordinator, which runs
// on one broker (the leader of __share_group_state-0); elsewhere these answer not_coordinator.
// Group configs are kept in the metadata store and apply at once where the coordinator runs.
import type { SharesApi } from '../../core/api.ts';
import { BrokerError } from '../../core/errors.ts';
import type { GroupConfigs } from '../../core/types.ts';
import type { CoreInternals } from './internals.ts';
import { group_config_default, group_config_names, validate_group_configs } from '../queues/group_config.ts';
import { consumer_group_config_default } from '../consumer_groups/group_configs.ts';

export function shares_api(broker: CoreInternals): SharesApi {
  const coordinators = broker.coordinators;
  // Sessions, locks and backoff are durations: a wall clock stepped back would stretch them.
  const now = () => broker.monotonic_clock.now_ms();
  return {
    get is_coordinator() {
      return coordinators.share_host !== null;
    },
    record_lock_duration_ms: broker.settings.share_groups.partition.record_lock_duration_ms,
    heartbeat: (request) => coordinators.shares.heartbeat(request, now()),
    describe: (group_id) => coordinators.shares.describe(group_id),
    check_member: (group_id, member_id) => coordinators.shares.check_member(group_id, member_id),
    acknowledge: (group_id, member_id, acks) => coordinators.shares.acknowledge(group_id, member_id, acks, now()),
    fetch: (group_id, member_id, partitions, records_max, bytes_max) =>
      coordinators.shares.fetch(group_id, member_id, partitions, records_max, bytes_max, now()),
    track: (group_id, topic) =>
      coordinators.shares.track(group_id, topic, broker.topic_index.get(topic)?.partitions ?? 0),
    on_available: (group_id, listener) => coordinators.shares.on_available(group_id, listener),
    group_ids: () => coordinators.shares.group_ids(),
    queue_stats: (group_id, options) => coordinators.shares.queue_stats(group_id, options),
    settings_of: (group_id) => coordinators.shares.settings_of(group_id),
    config_entries(group_id) {
      const set = broker.metadata.group_configs(group_id);
      return group_config_names().map((name) => ({
        name,
        value:
          set[name] ??
          group_config_default(name, broker.settings.share_groups) ??
          consumer_group_config_default(name, broker.settings.groups.consumer) ??
          '',
        is_set: set[name] !== undefined,
      }));
    },
    async set_configs(group_id, configs, options = {}) {
      if (group_id === '') throw new BrokerError('invalid_group_id', 'a group config needs a group id');
      const next: GroupConfigs = options.replace
        ? { ...configs }
        : { ...broker.metadata.group_configs(group_id), ...configs };
      for (const name of options.remove ?? []) delete next[name];
      validate_group_configs(next);
      if (options.validate_only) return;
      await broker.metadata.set_group_configs(group_id, next);
      coordinators.share_host?.apply_group_configs(group_id, next);
    },
  };
}
