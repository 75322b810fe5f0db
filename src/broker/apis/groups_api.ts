// The core API's consumer groups (GroupsApi): membership by the group coordinator, committed
// offsets by the offset store, lag from both. Every call needs this broker to coordinate groups
// now, else it answers not_coordinator.
import type { GroupsApi } from '../../core/api.ts';
import type { CoreInternals } from './internals.ts';
import { committed_lag } from '../group_lag.ts';

export function groups_api(broker: CoreInternals): GroupsApi {
  const coordinators = broker.coordinators;
  const lag_now = (group_id: string) =>
    committed_lag(
      coordinators.offsets,
      broker.topic_index,
      (topic, partition) => broker.partition_reader_now(topic, partition).high_watermark,
      group_id,
    );
  return {
    get is_coordinator() {
      return coordinators.group_host !== null;
    },
    join: (request) => coordinators.groups.join(request),
    sync: (group_id, member_id, generation_id, instance_id, assignments) =>
      coordinators.groups.sync(group_id, member_id, generation_id, instance_id, assignments),
    heartbeat: (group_id, member_id, generation_id, instance_id) =>
      coordinators.groups.heartbeat(group_id, member_id, generation_id, instance_id),
    leave: (group_id, leavers) => coordinators.groups.leave(group_id, leavers),
    consumer_heartbeat: (request) => coordinators.groups.consumer.heartbeat(request),
    consumer_describe: (group_id) => coordinators.groups.consumer.describe(group_id),
    validate_offset_fetch: (group_id, member_id, member_epoch) =>
      coordinators.groups.consumer.validate_fetch(group_id, member_id, member_epoch),
    describe: (group_id) => coordinators.groups.describe(group_id),
    list: () => coordinators.groups.list(),
    delete: (group_id) => coordinators.groups.delete(group_id),
    delete_offsets: (group_id, partitions) => coordinators.groups.delete_offsets(group_id, partitions),
    validate_commit: (group_id, member_id, generation_id, instance_id) =>
      coordinators.groups.validate_commit(group_id, member_id, generation_id, instance_id),
    commit: (group_id, entries) => coordinators.offsets.commit(group_id, entries),
    committed: (group_id, topic, partition) => coordinators.offsets.get(group_id, topic, partition),
    commit_pending: (group_id, topic, partition) => coordinators.offsets.pending(group_id, topic, partition),
    committed_all: (group_id) => coordinators.offsets.all(group_id),
    ids_with_offsets: () => coordinators.offsets.group_ids(),
    async lag(group_id) {
      // High watermarks of partitions led elsewhere are heard from their leaders first (one whose
      // leader cannot be reached counts what is known of it).
      for (const entry of coordinators.offsets.all(group_id))
        await broker.partition_reader(entry.topic, entry.partition).catch(() => undefined);
      return lag_now(group_id);
    },
    lag_now,
  };
}
