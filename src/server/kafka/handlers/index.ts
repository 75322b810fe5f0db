// The table of Kafka handlers, keyed by API key: one file per API, numbered like the message
// declarations in protocol/kafka/messages/. ApiVersions advertises these ranges (with the one
// exception documented in 18_api_versions.ts) and docs/kafka-compatibility.md lists them (a test
// checks the two agree).
import type { KafkaHandler } from '../handler.ts';
import { produce_handler } from './00_produce.ts';
import { fetch_handler } from './01_fetch.ts';
import { list_offsets_handler } from './02_list_offsets.ts';
import { metadata_handler } from './03_metadata.ts';
import { offset_commit_handler } from './08_offset_commit.ts';
import { offset_fetch_handler } from './09_offset_fetch.ts';
import { find_coordinator_handler } from './10_find_coordinator.ts';
import { join_group_handler } from './11_join_group.ts';
import { heartbeat_handler } from './12_heartbeat.ts';
import { leave_group_handler } from './13_leave_group.ts';
import { sync_group_handler } from './14_sync_group.ts';
import { describe_groups_handler } from './15_describe_groups.ts';
import { list_groups_handler } from './16_list_groups.ts';
import { sasl_handshake_handler } from './17_sasl_handshake.ts';
import { api_versions_handler } from './18_api_versions.ts';
import { create_topics_handler } from './19_create_topics.ts';
import { delete_topics_handler } from './20_delete_topics.ts';
import { delete_records_handler } from './21_delete_records.ts';
import { init_producer_id_handler } from './22_init_producer_id.ts';
import { offset_for_leader_epoch_handler } from './23_offset_for_leader_epoch.ts';
import { add_partitions_to_txn_handler } from './24_add_partitions_to_txn.ts';
import { write_txn_markers_handler } from './27_write_txn_markers.ts';
import { add_offsets_to_txn_handler } from './25_add_offsets_to_txn.ts';
import { end_txn_handler } from './26_end_txn.ts';
import { txn_offset_commit_handler } from './28_txn_offset_commit.ts';
import { describe_acls_handler } from './29_describe_acls.ts';
import { create_acls_handler } from './30_create_acls.ts';
import { delete_acls_handler } from './31_delete_acls.ts';
import { describe_configs_handler } from './32_describe_configs.ts';
import { alter_configs_handler } from './33_alter_configs.ts';
import { sasl_authenticate_handler } from './36_sasl_authenticate.ts';
import { create_partitions_handler } from './37_create_partitions.ts';
import { delete_groups_handler } from './42_delete_groups.ts';
import { incremental_alter_configs_handler } from './44_incremental_alter_configs.ts';
import { alter_partition_reassignments_handler } from './45_alter_partition_reassignments.ts';
import { elect_leaders_handler } from './43_elect_leaders.ts';
import { update_features_handler } from './57_update_features.ts';
import { list_partition_reassignments_handler } from './46_list_partition_reassignments.ts';
import { alter_replica_log_dirs_handler } from './34_alter_replica_log_dirs.ts';
import { describe_log_dirs_handler } from './35_describe_log_dirs.ts';
import { offset_delete_handler } from './47_offset_delete.ts';
import { describe_client_quotas_handler } from './48_describe_client_quotas.ts';
import { describe_producers_handler } from './61_describe_producers.ts';
import { alter_client_quotas_handler } from './49_alter_client_quotas.ts';
import { describe_user_scram_credentials_handler } from './50_describe_user_scram_credentials.ts';
import { alter_user_scram_credentials_handler } from './51_alter_user_scram_credentials.ts';
import { describe_cluster_handler } from './60_describe_cluster.ts';
import { describe_transactions_handler } from './65_describe_transactions.ts';
import { list_transactions_handler } from './66_list_transactions.ts';
import { share_group_heartbeat_handler } from './76_share_group_heartbeat.ts';
import { share_group_describe_handler } from './77_share_group_describe.ts';
import { consumer_group_heartbeat_handler } from './68_consumer_group_heartbeat.ts';
import { consumer_group_describe_handler } from './69_consumer_group_describe.ts';
import { share_fetch_handler } from './78_share_fetch.ts';
import { share_acknowledge_handler } from './79_share_acknowledge.ts';

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
    sasl_handshake_handler,
    api_versions_handler(() => table),
    create_topics_handler,
    delete_topics_handler,
    delete_records_handler,
    init_producer_id_handler,
    offset_for_leader_epoch_handler,
    add_partitions_to_txn_handler,
    write_txn_markers_handler,
    add_offsets_to_txn_handler,
    end_txn_handler,
    txn_offset_commit_handler,
    describe_acls_handler,
    create_acls_handler,
    delete_acls_handler,
    describe_configs_handler,
    alter_configs_handler,
    sasl_authenticate_handler,
    create_partitions_handler,
    delete_groups_handler,
    elect_leaders_handler,
    incremental_alter_configs_handler,
    alter_partition_reassignments_handler,
    list_partition_reassignments_handler,
    alter_replica_log_dirs_handler,
    describe_log_dirs_handler,
    offset_delete_handler,
    describe_client_quotas_handler,
    describe_producers_handler,
    alter_client_quotas_handler,
    describe_user_scram_credentials_handler,
    alter_user_scram_credentials_handler,
    update_features_handler,
    describe_cluster_handler,
    describe_transactions_handler,
    list_transactions_handler,
    consumer_group_heartbeat_handler,
    consumer_group_describe_handler,
    share_group_heartbeat_handler,
    share_group_describe_handler,
    share_fetch_handler,
    share_acknowledge_handler,
  ];
  for (const handler of handlers) table.set(handler.api.api_key, handler);
  return table;
}
