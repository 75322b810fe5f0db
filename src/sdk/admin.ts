// The SDK's admin client: topics, partitions, records, configs, consumer groups and their committed
// offsets, and the cluster's brokers. The API follows kafkajs's admin client (method names, option
// and result shapes, offsets as strings) wherever kafkajs has the feature.
//
// Routing: topic administration goes to the controller, offsets lookups and record deletion to each
// partition's leader, group requests to the group's coordinator (FindCoordinator, cached per group),
// broker configs to that broker. Every request is retried with the cluster's backoff while its
// errors are retriable; a request about several resources (topics, partitions, groups) resends only
// the ones that failed, and the failures left are reported together in one AdminError.
//
// This file is the public Admin; each method is carried out by the file of its area:
//   admin_topics.ts      topics: create, delete, list, metadata
//   admin_partitions.ts  partition counts and reassignments
//   admin_offsets.ts     topic offsets, record deletion, a group's committed offsets
//   admin_configs.ts     topic and broker configs
//   admin_acls.ts        ACLs
//   admin_users.ts       SCRAM users
//   admin_quotas.ts      client quotas
//   admin_groups.ts      consumer groups: list, describe, delete
//   admin_cluster.ts     brokers, controller and cluster id
//   admin_log_dirs.ts    each broker's log directories and partitions (compaction progress)
//   dead_letters.ts      dead-letter topics of share groups, redrive, reading a whole topic
//   admin_requests.ts    the request plumbing they share (routing, retries, failures)
//   admin_types.ts       the public types and AdminError, re-exported here
import type { Cluster } from './cluster.ts';
import type {
  AlterConfigsResponse,
  BrokerLogDirs,
  ClusterDescription,
  ConsumerGroupDescription,
  DeleteGroupsResult,
  DescribeConfigResponse,
  FetchOffsetsPartition,
  GroupDescription,
  GroupOverview,
  IncrementalResourceConfig,
  PartitionReassignments,
  ResourceConfig,
  ResourceConfigQuery,
  SeekEntry,
  SeekInput,
  TopicConfig,
  TopicMetadata,
  TopicOffsets,
  TopicPartitionConfig,
} from './admin_types.ts';
import { AdminRequests } from './admin_requests.ts';
import { create_topics, delete_topics, fetch_topic_metadata, list_topics } from './admin_topics.ts';
import { alter_partition_reassignments, create_partitions, list_partition_reassignments } from './admin_partitions.ts';
import {
  delete_topic_records,
  fetch_offsets,
  fetch_topic_offsets,
  fetch_topic_offsets_by_timestamp,
  reset_offsets,
  set_offsets,
} from './admin_offsets.ts';
import { alter_configs, describe_configs, incremental_alter_configs } from './admin_configs.ts';
import {
  delete_user,
  describe_users,
  upsert_user,
  type ScramMechanismName,
  type UserScramCredentials,
} from './admin_users.ts';
import {
  create_acls,
  delete_acls,
  describe_acls,
  type AclEntry,
  type AclFilter,
  type DeleteAclResponse,
  type DescribeAclResponse,
} from './admin_acls.ts';
import {
  alter_client_quotas,
  describe_client_quotas,
  type ClientQuotaAlteration,
  type ClientQuotaEntry,
  type ClientQuotaFilterComponent,
} from './admin_quotas.ts';
import { delete_groups, describe_consumer_groups, describe_groups, list_groups } from './admin_groups.ts';
import { describe_cluster } from './admin_cluster.ts';
import { describe_log_dirs } from './admin_log_dirs.ts';
import {
  dead_letter_of,
  list_dead_letter_topics,
  read_topic,
  redrive_dead_letters,
  type DeadLetter,
  type DeadLetterTopic,
  type ReadMessage,
  type RedriveOptions,
  type RedriveResult,
} from './dead_letters.ts';

export {
  AdminError,
  AlterConfigOperation,
  ConfigResourceTypes,
  ConfigSource,
  type AdminFailure,
  type AlterConfigOperationName,
  type AlterConfigsResponse,
  type BrokerLogDirs,
  type ClusterDescription,
  type ConfigDescription,
  type ConfigEntry,
  type ConfigResourceType,
  type ConfigSynonym,
  type ConsumerGroupDescription,
  type DeleteGroupsResult,
  type DescribeConfigResponse,
  type FetchOffsetsPartition,
  type GroupDescription,
  type GroupOverview,
  type GroupState,
  type IncrementalConfigEntry,
  type IncrementalResourceConfig,
  type LogCleanerProgress,
  type MemberDescription,
  type PartitionMetadata,
  type PartitionReassignments,
  type ResourceConfig,
  type ResourceConfigQuery,
  type SeekEntry,
  type SeekInput,
  type TopicConfig,
  type TopicMetadata,
  type TopicOffsets,
  type TopicPartitionConfig,
} from './admin_types.ts';

export class Admin {
  private readonly requests: AdminRequests;

  /** The admin owns `cluster`: disconnect() closes it. */
  constructor(cluster: Cluster) {
    this.requests = new AdminRequests(cluster);
  }

  private get cluster(): Cluster {
    return this.requests.cluster;
  }

  /** Connects to a bootstrap broker and reads the cluster's brokers and controller. */
  async connect(): Promise<void> {
    await this.cluster.with_retry('connect', () => this.cluster.refresh_metadata([]));
  }

  /** Closes every connection; the admin (and its cluster) cannot be used afterwards. */
  async disconnect(): Promise<void> {
    this.requests.forget_coordinators();
    await this.cluster.close();
  }

  // -------------------------------------------------------------------------------------------
  // Topics

  /**
   * Creates topics. Resolves true when every topic was created, false when some already existed
   * (the others are created); other failures throw an AdminError naming each topic. With
   * `waitForLeaders` (the default) it waits, at most `timeout` ms, until metadata shows a leader for
   * every partition.
   */
  async createTopics(options: {
    topics: TopicConfig[];
    validateOnly?: boolean;
    waitForLeaders?: boolean;
    timeout?: number;
  }): Promise<boolean> {
    return create_topics(this.requests, options);
  }

  /** Names of every topic in the cluster (internal ones included, as kafkajs lists them). */
  async listTopics(): Promise<string[]> {
    return list_topics(this.requests);
  }

  /** Partitions, leaders and replicas of `topics` (of every topic when absent or empty). */
  async fetchTopicMetadata(options: { topics?: string[] } = {}): Promise<{ topics: TopicMetadata[] }> {
    return fetch_topic_metadata(this.requests, options);
  }

  /** Deletes topics; a topic that does not exist fails with UNKNOWN_TOPIC_OR_PARTITION. */
  async deleteTopics(options: { topics: string[]; timeout?: number }): Promise<void> {
    return delete_topics(this.requests, options);
  }

  /** Raises the partition count of topics to `count`. */
  async createPartitions(options: {
    topicPartitions: TopicPartitionConfig[];
    validateOnly?: boolean;
    timeout?: number;
  }): Promise<void> {
    return create_partitions(this.requests, options);
  }

  /** Each partition's high watermark (`offset` and `high`) and log start offset (`low`). */
  async fetchTopicOffsets(topic: string): Promise<TopicOffsets[]> {
    return fetch_topic_offsets(this.requests, topic);
  }

  /**
   * Each partition's first offset whose timestamp is at or after `timestamp` (ms), or its high
   * watermark when there is none; without a timestamp, the high watermark.
   */
  async fetchTopicOffsetsByTimestamp(topic: string, timestamp?: number): Promise<SeekEntry[]> {
    return fetch_topic_offsets_by_timestamp(this.requests, topic, timestamp);
  }

  /**
   * Deletes the records before `offset` in each partition (moves its log start offset); offset -1
   * means the high watermark (everything written so far).
   */
  async deleteTopicRecords(options: { topic: string; partitions: SeekInput[]; timeout?: number }): Promise<void> {
    return delete_topic_records(this.requests, options);
  }

  // -------------------------------------------------------------------------------------------
  // ACLs (brokers started with --authorization)

  /** Adds ACL bindings (CreateAcls); needs ALTER on the cluster. */
  async createAcls(options: { acl: AclEntry[] }): Promise<boolean> {
    return create_acls(this.requests, options);
  }

  /** The bindings a filter matches (DescribeAcls); needs DESCRIBE on the cluster. */
  async describeAcls(filter: AclFilter): Promise<DescribeAclResponse> {
    return describe_acls(this.requests, filter);
  }

  /** Removes the bindings each filter matches, and answers them (DeleteAcls); needs ALTER on the cluster. */
  async deleteAcls(options: { filters: AclFilter[] }): Promise<DeleteAclResponse> {
    return delete_acls(this.requests, options);
  }

  // -------------------------------------------------------------------------------------------
  // SCRAM users managed while the broker runs

  /** Adds a user, or sets its password, for one mechanism (default scram-sha-256); salted here. */
  async upsertUserScramCredential(options: {
    user: string;
    password: string;
    mechanism?: ScramMechanismName;
    iterations?: number;
  }): Promise<void> {
    return upsert_user(this.requests, options);
  }

  /** Removes a user's credential for one mechanism (default scram-sha-256); with none left, the user is gone. */
  async deleteUserScramCredential(options: { user: string; mechanism?: ScramMechanismName }): Promise<void> {
    return delete_user(this.requests, options);
  }

  /** The users named (absent: every user), with their mechanisms and iteration counts. */
  async describeUserScramCredentials(users?: string[]): Promise<UserScramCredentials[]> {
    return describe_users(this.requests, users);
  }

  // -------------------------------------------------------------------------------------------
  // Client quotas

  /** Sets and removes byte-rate and request-time quotas (AlterClientQuotas); needs ALTER_CONFIGS on the cluster. */
  async alterClientQuotas(alterations: ClientQuotaAlteration[], options?: { validateOnly?: boolean }): Promise<void> {
    return alter_client_quotas(this.requests, alterations, options);
  }

  /** The quotas the filter matches (DescribeClientQuotas); needs DESCRIBE_CONFIGS on the cluster. */
  async describeClientQuotas(filter?: {
    components?: ClientQuotaFilterComponent[];
    strict?: boolean;
  }): Promise<ClientQuotaEntry[]> {
    return describe_client_quotas(this.requests, filter);
  }

  // -------------------------------------------------------------------------------------------
  // Configs

  /** Configs of topics (or brokers); `configNames` absent or empty means all of them. */
  async describeConfigs(options: {
    resources: ResourceConfigQuery[];
    includeSynonyms?: boolean;
  }): Promise<DescribeConfigResponse> {
    return describe_configs(this.requests, options);
  }

  /**
   * Replaces the whole set of dynamic configs of each resource (AlterConfigs): keys left out go back
   * to their defaults. To change single keys, use incrementalAlterConfigs.
   */
  async alterConfigs(options: { resources: ResourceConfig[]; validateOnly?: boolean }): Promise<AlterConfigsResponse> {
    return alter_configs(this.requests, options);
  }

  /** Sets or deletes single config keys (IncrementalAlterConfigs), leaving the others as they are. */
  async incrementalAlterConfigs(options: {
    resources: IncrementalResourceConfig[];
    validateOnly?: boolean;
  }): Promise<AlterConfigsResponse> {
    return incremental_alter_configs(this.requests, options);
  }

  // -------------------------------------------------------------------------------------------
  // Groups

  /** Every group of every broker. */
  async listGroups(): Promise<{ groups: GroupOverview[] }> {
    return list_groups(this.requests);
  }

  /**
   * State, protocol and members (with their metadata and assignment bytes) of each group; a group
   * that does not exist is described as state Dead without members.
   */
  async describeGroups(groupIds: string[]): Promise<{ groups: GroupDescription[] }> {
    return describe_groups(this.requests, groupIds);
  }

  /**
   * Consumer groups on the KIP-848 protocol: state, epochs, assignor, and each member's
   * subscription, assignment and target assignment; a group that does not exist is state Dead.
   */
  async describeConsumerGroups(groupIds: string[]): Promise<{ groups: ConsumerGroupDescription[] }> {
    return describe_consumer_groups(this.requests, groupIds);
  }

  /**
   * Deletes groups and their committed offsets. A group with members fails with NON_EMPTY_GROUP, an
   * unknown one with GROUP_ID_NOT_FOUND; the others are deleted and the error names each failure.
   */
  async deleteGroups(groupIds: string[]): Promise<DeleteGroupsResult[]> {
    return delete_groups(this.requests, groupIds);
  }

  /**
   * A group's committed offsets: for each topic in `topics`, every partition ('-1' where nothing is
   * committed); without `topics`, every partition the group has committed.
   */
  async fetchOffsets(options: {
    groupId: string;
    topics?: string[];
  }): Promise<Array<{ topic: string; partitions: FetchOffsetsPartition[] }>> {
    return fetch_offsets(this.requests, options);
  }

  /**
   * Commits each partition of `topic` for `groupId` at its log start offset (`earliest`) or high
   * watermark: concrete offsets, read with ListOffsets. Refused while the group has members.
   */
  async resetOffsets(options: { groupId: string; topic: string; earliest?: boolean }): Promise<void> {
    return reset_offsets(this.requests, options);
  }

  /**
   * Commits the given offsets for `groupId` (-1 and -2 are resolved to the high watermark and the
   * log start offset first, so the committed offsets are concrete). Refused while the group has
   * members.
   */
  async setOffsets(options: { groupId: string; topic: string; partitions: SeekInput[] }): Promise<void> {
    return set_offsets(this.requests, options);
  }

  // -------------------------------------------------------------------------------------------
  // Dead letters of share groups

  /** The dead-letter topics (`<topic>.<group>.dlq`) and how many messages each holds. */
  listDeadLetterTopics(): Promise<DeadLetterTopic[]> {
    return list_dead_letter_topics(this.requests);
  }

  /** Up to `max` dead letters of a dead-letter topic, oldest first, with where they came from and why. */
  async peekDeadLetters(topic: string, options: { max?: number } = {}): Promise<DeadLetter[]> {
    return (await read_topic(this.requests, topic, options.max ?? 100)).map(dead_letter_of);
  }

  /**
   * Sends dead letters back to their origin topic (or `to`); each is recorded in `sluice.dlq.audit`
   * and is never sent twice, however often this is called.
   */
  redriveDeadLetters(options: RedriveOptions): Promise<RedriveResult> {
    return redrive_dead_letters(this.requests, options);
  }

  /** Every message of a topic from its start to its end as of now (a broadcast read; exports). */
  readTopic(topic: string, options: { max?: number; onRead?: (count: number) => void } = {}): Promise<ReadMessage[]> {
    return read_topic(this.requests, topic, options.max ?? Infinity, options.onRead);
  }

  // -------------------------------------------------------------------------------------------
  // Partition reassignments and the cluster

  /**
   * Moves partitions to new replica sets, preferred leader first (AlterPartitionReassignments). The
   * new replicas copy the partition; it switches to them once all are in sync. `replicas: null`
   * cancels a move in progress. Any broker of a cluster takes the request.
   */
  async alterPartitionReassignments(options: {
    topics: Array<{ topic: string; partitions: Array<{ partition: number; replicas: number[] | null }> }>;
  }): Promise<void> {
    return alter_partition_reassignments(this.requests, options);
  }

  /**
   * The reassignments in progress (ListPartitionReassignments): for the partitions given, or for
   * all when `topics` is left out. Partitions not being moved are not listed.
   */
  async listPartitionReassignments(
    options: { topics?: Array<{ topic: string; partitions: number[] }> } = {},
  ): Promise<PartitionReassignments> {
    return list_partition_reassignments(this.requests, options);
  }

  /** The brokers, the controller and the cluster id (DescribeCluster, or Metadata on older brokers). */
  async describeCluster(): Promise<ClusterDescription> {
    return describe_cluster(this.requests);
  }

  /**
   * Each broker's log directories and the partitions it holds (all, or those of `topics`), with
   * a compacted partition's log cleaner progress.
   */
  async describeLogDirs(
    options: { topics?: Array<{ topic: string; partitions?: number[] }> } = {},
  ): Promise<BrokerLogDirs[]> {
    return describe_log_dirs(this.requests, options.topics ?? null);
  }
}
