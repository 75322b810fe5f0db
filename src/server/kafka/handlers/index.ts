// The table of Kafka handlers, keyed by API key. ApiVersions advertises these ranges (with the one
// exception documented in 18_api_versions.ts).
import type { KafkaHandler } from '../handler.ts';
import { api_versions_handler } from './18_api_versions.ts';
import { metadata_handler } from './03_metadata.ts';
import { produce_handler } from './00_produce.ts';
import { fetch_handler } from './01_fetch.ts';
import { list_offsets_handler } from './02_list_offsets.ts';
import {
  delete_groups_handler,
  describe_groups_handler,
  find_coordinator_handler,
  heartbeat_handler,
  join_group_handler,
  leave_group_handler,
  list_groups_handler,
  sync_group_handler,
} from './groups.ts';
import { offset_commit_handler, offset_fetch_handler } from './offsets.ts';
import {
  alter_configs_handler,
  alter_partition_reassignments_handler,
  list_partition_reassignments_handler,
  create_partitions_handler,
  create_topics_handler,
  delete_records_handler,
  delete_topics_handler,
  describe_cluster_handler,
  describe_configs_handler,
  incremental_alter_configs_handler,
  init_producer_id_handler,
  offset_for_leader_epoch_handler,
} from './admin.ts';
import { sasl_authenticate_handler, sasl_handshake_handler } from './sasl.ts';
import { share_acknowledge_handler, share_fetch_handler, share_group_describe_handler, share_group_heartbeat_handler } from './shares.ts';

export function handler_table(): ReadonlyMap<number, KafkaHandler> {
  const table = new Map<number, KafkaHandler>();
  const handlers: KafkaHandler[] = [
    produce_handler,
    fetch_handler,
    list_offsets_handler,
    metadata_handler,
    offset_commit_handler,
    offset_fetch_handler,
    find_coordinator_handler,
    join_group_handler,
    heartbeat_handler,
    leave_group_handler,
    sync_group_handler,
    describe_groups_handler,
    list_groups_handler,
    api_versions_handler(() => table),
    create_topics_handler,
    delete_topics_handler,
    delete_records_handler,
    init_producer_id_handler,
    offset_for_leader_epoch_handler,
    describe_configs_handler,
    alter_configs_handler,
    create_partitions_handler,
    delete_groups_handler,
    alter_partition_reassignments_handler,
    list_partition_reassignments_handler,
    incremental_alter_configs_handler,
    describe_cluster_handler,
    sasl_handshake_handler,
    sasl_authenticate_handler,
    share_group_heartbeat_handler,
    share_group_describe_handler,
    share_fetch_handler,
    share_acknowledge_handler,
  ];
  for (const handler of handlers) table.set(handler.api.api_key, handler);
  return table;
}
