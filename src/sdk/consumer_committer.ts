// A group consumer's offsets at its group: OffsetFetch of the committed offsets partitions start
// from, OffsetCommit of the next offset to consume (explicit commits, auto commits by interval or
// threshold, commits in the background while ordered handlers run), one commit at a time. Which
// offsets are resolved is the runner's business (consumer_runner.ts); the requests go to the
// coordinator through consumer_group.ts.
import { KafkaProtocolError, SluiceError, check_code } from './errors.ts';
import {
  ConsumerEvents,
  type OffsetsByTopicPartition,
  type TopicPartitionOffsetAndMetadata,
} from './consumer_types.ts';
import {
  REJOIN_CODES,
  group_by,
  key_of,
  to_offset,
  type ConsumerContext,
  type PartitionState,
  type ResolvedRunConfig,
} from './consumer_state.ts';
import type { GroupMembership } from './consumer_group.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { OFFSET_COMMIT } from '../protocol/kafka/messages/08_offset_commit.ts';
import { OFFSET_FETCH } from '../protocol/kafka/messages/09_offset_fetch.ts';

interface CommitEntry {
  topic: string;
  partition: number;
  offset: number;
  metadata: string | null;
}

/** The error codes of a response's `topics[].partitions[]`, in order. */
function partition_codes(topics: ReadonlyArray<{ partitions: ReadonlyArray<{ error_code: number }> }>): number[] {
  const codes: number[] = [];
  for (const topic of topics) for (const partition of topic.partitions) codes.push(partition.error_code);
  return codes;
}

export class OffsetCommitter {
  /** When the last commit of resolved offsets started (the auto commit interval counts from it). */
  last_commit = 0;
  private commit_chain: Promise<void> = Promise.resolve();
  /** Ordered mode: an auto commit started while handlers run. */
  private background_commit: Promise<void> | null = null;

  constructor(
    private readonly ctx: ConsumerContext,
    private readonly group: GroupMembership,
  ) {}

  /** Commits the given offsets (each the next offset to consume, kafkajs's convention). Needs a groupId. */
  async commit_offsets(offsets: TopicPartitionOffsetAndMetadata[]): Promise<void> {
    if (!this.ctx.group_id) {
      throw new SluiceError(
        'commitOffsets needs a groupId: a consumer in broadcast mode has no group to commit to',
        false,
      );
    }
    const entries = offsets.map((o) => ({
      topic: o.topic,
      partition: o.partition,
      offset: to_offset(o.offset, `commit ${o.topic}/${o.partition}`),
      metadata: o.metadata ?? null,
    }));
    await this.serialized_commit(entries);
  }

  private serialized_commit(entries: CommitEntry[]): Promise<void> {
    const work = this.commit_chain.then(() => this.send_commit(entries));
    this.commit_chain = work.catch(() => {});
    return work;
  }

  /** Commits every resolved offset not committed yet. */
  async commit_resolved(): Promise<void> {
    if (!this.ctx.group_id) return;
    const states = [...this.ctx.assignment.values()].filter((s) => s.resolved !== null && s.resolved !== s.committed);
    this.last_commit = Date.now();
    if (states.length === 0) return;
    const entries = states.map((s) => ({
      topic: s.topic,
      partition: s.partition,
      offset: s.resolved!,
      metadata: null,
    }));
    await this.serialized_commit(entries);
  }

  private async send_commit(entries: CommitEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const group = this.group;
    const instance_id = this.ctx.config.groupInstanceId ?? null;
    const body = {
      group_id: this.ctx.group_id ?? '',
      generation_id_or_member_epoch: group.generation_id,
      member_id: group.member_id,
      group_instance_id: instance_id,
      retention_time_ms: -1,
      topics: [...group_by(entries, (e) => e.topic)].map(([name, list]) => ({
        name,
        partitions: list.map((e) => ({
          partition_index: e.partition,
          committed_offset: e.offset,
          committed_leader_epoch: -1,
          committed_metadata: e.metadata,
        })),
      })),
    };
    const response = await group.group_call(
      'OffsetCommit',
      OFFSET_COMMIT,
      instance_id ? 7 : 2,
      9,
      body,
      (r) => partition_codes(r.topics),
      () => {},
    );
    let failure: KafkaProtocolError | null = null;
    for (const topic of response.topics) {
      for (const partition of topic.partitions) {
        const code = partition.error_code;
        const key = key_of(topic.name, partition.partition_index);
        if (code === ErrorCode.NONE) {
          const state = this.ctx.assignment.get(key);
          const entry = entries.find((e) => key_of(e.topic, e.partition) === key);
          if (state && entry) {
            state.committed = entry.offset;
            state.uncommitted = 0;
          }
        } else failure ??= new KafkaProtocolError(code, `OffsetCommit ${topic.name}/${partition.partition_index}`);
      }
    }
    if (failure) {
      if (REJOIN_CODES.has(failure.code)) group.on_group_error(failure.code);
      throw failure;
    }
    this.ctx.emit(ConsumerEvents.COMMIT_OFFSETS, {
      groupId: this.ctx.group_id,
      memberId: group.member_id,
      groupGenerationId: group.generation_id,
      topics: body.topics,
    });
  }

  /** Whether the auto commit settings ask for a commit now. */
  commit_due(run: ResolvedRunConfig): boolean {
    const interval_due = run.autoCommitInterval !== null && Date.now() - this.last_commit >= run.autoCommitInterval;
    let resolved = 0;
    for (const state of this.ctx.assignment.values()) resolved += state.uncommitted;
    const threshold_due = run.autoCommitThreshold !== null && resolved >= run.autoCommitThreshold;
    const every_batch = run.autoCommitInterval === null && run.autoCommitThreshold === null;
    return interval_due || threshold_due || every_batch;
  }

  /** After a round: an auto commit when one is due. Never throws. */
  async maybe_auto_commit(): Promise<void> {
    const run = this.ctx.run_config;
    if (!this.ctx.group_id || !run?.autoCommit || this.group.generation_id < 0) return;
    if (!this.commit_due(run)) return;
    await this.commit_resolved().catch((error) => this.ctx.report(error));
  }

  /** Ordered mode: an auto commit while handlers still run, when one is due (one at a time). */
  commit_in_background(run: ResolvedRunConfig): void {
    if (this.background_commit || !this.ctx.group_id || !run.autoCommit || this.group.generation_id < 0) return;
    if (!this.commit_due(run)) return;
    this.background_commit = this.commit_resolved()
      .catch((error) => this.ctx.report(error))
      .finally(() => {
        this.background_commit = null;
      });
  }

  uncommitted_offsets(): OffsetsByTopicPartition {
    const states = [...this.ctx.assignment.values()].filter((s) => s.resolved !== null && s.resolved !== s.committed);
    return {
      topics: [...group_by(states, (s) => s.topic)].map(([topic, list]) => ({
        topic,
        partitions: list.map((s) => ({ partition: s.partition, offset: String(s.resolved) })),
      })),
    };
  }

  /** The committed offsets of `states` (-1 where nothing is committed), by partition key. */
  async fetch_committed(states: PartitionState[]): Promise<Map<string, number>> {
    const group_id = this.ctx.group_id ?? '';
    const response = await this.group.group_call(
      'OffsetFetch',
      OFFSET_FETCH,
      1,
      7,
      {
        group_id,
        topics: [...group_by(states, (s) => s.topic)].map(([name, list]) => ({
          name,
          partition_indexes: list.map((s) => s.partition),
        })),
        require_stable: true,
      },
      (r) => [r.error_code, ...partition_codes(r.topics)],
      (r, version) => {
        if (version >= 2) check_code(r.error_code, `OffsetFetch for group ${group_id}`);
      },
    );
    const out = new Map<string, number>();
    for (const topic of response.topics) {
      for (const partition of topic.partitions) {
        check_code(partition.error_code, `OffsetFetch ${topic.name}/${partition.partition_index}`);
        out.set(key_of(topic.name, partition.partition_index), partition.committed_offset);
      }
    }
    return out;
  }
}
