// A consumer's membership of a classic consumer group: finding the coordinator (its own connection,
// with a request timeout above the rebalance timeout, since JoinGroup can block for a whole
// rebalance), JoinGroup and SyncGroup (the leader computes the assignment with the chosen assignor),
// Heartbeat in the background and LeaveGroup on stop. Group requests of other parts (commits,
// committed offsets) go through group_send / group_call here. What to do around a rebalance
// (revoking, committing, the listeners) is consumer.ts's; the assignment's state is
// consumer_state.ts's.
import { Cluster, type BrokerConnection } from './cluster.ts';
import { ConnectionError, KafkaProtocolError, SluiceError, check_code } from './errors.ts';
import { AssignerProtocol, type Assigner } from './assignors.ts';
import { ConsumerEvents } from './consumer_types.ts';
import { COORDINATOR_CODES, REJOIN_CODES, Signal, type ConsumerContext } from './consumer_state.ts';
import type { ApiSpec, RequestIn, ResponseOf, Row } from '../protocol/kafka/schema.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { COORDINATOR_KEY_GROUP, find_coordinator } from './find_coordinator.ts';
import { JOIN_GROUP } from '../protocol/kafka/messages/11_join_group.ts';
import { HEARTBEAT } from '../protocol/kafka/messages/12_heartbeat.ts';
import { LEAVE_GROUP } from '../protocol/kafka/messages/13_leave_group.ts';
import { SYNC_GROUP } from '../protocol/kafka/messages/14_sync_group.ts';

const JOIN_ATTEMPTS_MAX = 50;

type JoinMember = Row<ResponseOf<typeof JOIN_GROUP>['members']>;

/** What one JoinGroup attempt leads to: an assignment, or another attempt. */
type JoinStep = { assignment: Record<string, number[]> } | null;

export class GroupMembership {
  member_id = '';
  generation_id = -1;
  leader_id = '';
  protocol_name: string | null = null;
  /** The partition counts the last assignment was computed from, 0 for a topic not seen (the leader watches them). */
  assigned_counts = new Map<string, number>();
  /** A JoinGroup or SyncGroup is in progress. */
  joining = false;
  private coordinator_cluster: Cluster | null = null;
  private coordinator_lookup: Promise<Cluster> | null = null;
  private heartbeat_wakeup = new Signal();
  private heartbeat_in_flight: Promise<void> | null = null;
  private last_heartbeat = 0;

  /**
   * `on_fenced` is called when a heartbeat shows this member is out of the group for good
   * (FENCED_INSTANCE_ID and the like): the consumer stops.
   */
  constructor(
    private readonly ctx: ConsumerContext,
    private readonly assigners: Assigner[],
    private readonly on_fenced: (error: KafkaProtocolError) => void,
  ) {}

  private get group_id(): string {
    return this.ctx.group_id ?? '';
  }

  // ---------------------------------------------------------------- the coordinator

  private async coordinator(): Promise<BrokerConnection> {
    if (!this.coordinator_cluster) {
      this.coordinator_lookup ??= this.find_coordinator().finally(() => {
        this.coordinator_lookup = null;
      });
      this.coordinator_cluster = await this.coordinator_lookup;
    }
    return this.coordinator_cluster.any();
  }

  private async find_coordinator(): Promise<Cluster> {
    const group_id = this.group_id;
    const cluster = this.ctx.cluster;
    const { host, port } = await cluster.with_retry('FindCoordinator', async () =>
      find_coordinator(await cluster.any(), group_id, COORDINATOR_KEY_GROUP),
    );
    const options = cluster.options;
    // JoinGroup may be held by the coordinator for up to the rebalance timeout.
    return new Cluster({
      ...options,
      brokers: [`${host}:${port}`],
      request_timeout_ms: Math.max(options.request_timeout_ms, this.ctx.config.rebalanceTimeout + 5_000),
    });
  }

  forget_coordinator(): void {
    const cluster = this.coordinator_cluster;
    this.coordinator_cluster = null;
    void cluster?.close();
  }

  async group_send<A extends ApiSpec>(
    api: A,
    min: number,
    max: number,
    body: RequestIn<A>,
  ): Promise<{ version: number; response: ResponseOf<A> }> {
    try {
      const connection = await this.coordinator();
      return await connection.send(api, min, max, body);
    } catch (error) {
      if (error instanceof ConnectionError) this.forget_coordinator();
      throw error;
    }
  }

  /**
   * A group request with retries for connection and coordinator errors: `codes` lists the
   * response's error codes (the top-level one first, then the partitions'); `check` reads the
   * response (and throws for errors of its own).
   */
  group_call<A extends ApiSpec>(
    what: string,
    api: A,
    min: number,
    max: number,
    body: RequestIn<A>,
    codes: (response: ResponseOf<A>) => number[],
    check: (response: ResponseOf<A>, version: number) => void,
  ): Promise<ResponseOf<A>> {
    return this.ctx.cluster.with_retry(what, async () => {
      const { version, response } = await this.group_send(api, min, max, body);
      const moved = codes(response).find((code) => COORDINATOR_CODES.has(code));
      if (moved !== undefined) {
        this.forget_coordinator();
        throw new KafkaProtocolError(moved, `${what} for group ${this.group_id}`);
      }
      check(response, version);
      return response;
    });
  }

  // ---------------------------------------------------------------- rejoining

  request_rejoin(): void {
    if (!this.ctx.needs_rejoin) {
      this.ctx.needs_rejoin = true;
      this.ctx.emit(ConsumerEvents.REBALANCING, { groupId: this.ctx.group_id, memberId: this.member_id });
    }
    this.ctx.wakeup.fire();
    this.heartbeat_wakeup.fire();
  }

  on_group_error(code: number): void {
    if (code === ErrorCode.UNKNOWN_MEMBER_ID) {
      this.member_id = '';
      this.generation_id = -1;
    }
    this.request_rejoin();
  }

  /** Ends the wait of the background heartbeats (they check whether they are still wanted). */
  wake_heartbeats(): void {
    this.heartbeat_wakeup.fire();
  }

  private protocols(): Array<{ name: string; metadata: Buffer }> {
    const topics = [...this.ctx.subscriptions.keys()].sort();
    const out: Array<{ name: string; metadata: Buffer }> = [];
    for (const assigner of this.assigners) {
      const { name, metadata } = assigner.protocol({ topics });
      for (const offered of [name, ...(assigner.aliases ?? [])]) {
        if (!out.some((p) => p.name === offered)) out.push({ name: offered, metadata });
      }
    }
    return out;
  }

  /** JoinGroup and SyncGroup until they settle; the partitions assigned to this member by topic. */
  async join_and_sync(): Promise<Record<string, number[]>> {
    const protocols = this.protocols();
    this.joining = true;
    try {
      for (let attempt = 0; attempt < JOIN_ATTEMPTS_MAX; attempt++) {
        if (!this.ctx.running) return {};
        const step = await this.join_once(protocols);
        if (step) return step.assignment;
      }
      throw new KafkaProtocolError(
        ErrorCode.REBALANCE_IN_PROGRESS,
        `joining group ${this.group_id} did not settle after ${JOIN_ATTEMPTS_MAX} attempts`,
      );
    } finally {
      this.joining = false;
    }
  }

  /** One JoinGroup (and SyncGroup once joined); null when the member must try again. */
  private async join_once(protocols: Array<{ name: string; metadata: Buffer }>): Promise<JoinStep> {
    const group_id = this.group_id;
    const config = this.ctx.config;
    const instance_id = config.groupInstanceId ?? null;
    const { response: join } = await this.group_send(JOIN_GROUP, instance_id ? 5 : 0, 7, {
      group_id,
      session_timeout_ms: config.sessionTimeout,
      rebalance_timeout_ms: config.rebalanceTimeout,
      member_id: this.member_id,
      group_instance_id: instance_id,
      protocol_type: 'consumer',
      protocols,
      reason: null,
    });
    const join_code = join.error_code;
    if (join_code === ErrorCode.MEMBER_ID_REQUIRED) {
      this.member_id = join.member_id;
      return null;
    }
    if (join_code === ErrorCode.UNKNOWN_MEMBER_ID) {
      this.member_id = '';
      return null;
    }
    if (join_code === ErrorCode.REBALANCE_IN_PROGRESS) return null;
    if (COORDINATOR_CODES.has(join_code)) {
      await this.coordinator_moved();
      return null;
    }
    check_code(join_code, `JoinGroup ${group_id}`);
    this.member_id = join.member_id;
    this.generation_id = join.generation_id;
    this.leader_id = join.leader;
    this.protocol_name = join.protocol_name;
    const assignments = this.leader_id === this.member_id ? await this.compute_assignment(join.members) : [];
    return this.sync(assignments);
  }

  private async sync(assignments: Array<{ member_id: string; assignment: Buffer }>): Promise<JoinStep> {
    const group_id = this.group_id;
    const instance_id = this.ctx.config.groupInstanceId ?? null;
    const { response: sync } = await this.group_send(SYNC_GROUP, instance_id ? 3 : 0, 5, {
      group_id,
      generation_id: this.generation_id,
      member_id: this.member_id,
      group_instance_id: instance_id,
      protocol_type: 'consumer',
      protocol_name: this.protocol_name,
      assignments,
    });
    const sync_code = sync.error_code;
    if (REJOIN_CODES.has(sync_code)) {
      if (sync_code === ErrorCode.UNKNOWN_MEMBER_ID) this.member_id = '';
      return null;
    }
    if (COORDINATOR_CODES.has(sync_code)) {
      await this.coordinator_moved();
      return null;
    }
    check_code(sync_code, `SyncGroup ${group_id}`);
    return { assignment: AssignerProtocol.MemberAssignment.decode(sync.assignment)?.assignment ?? {} };
  }

  /** The coordinator moved during a join: find it again after a short wait. */
  private async coordinator_moved(): Promise<void> {
    this.forget_coordinator();
    await this.ctx.wakeup.wait(this.ctx.cluster.options.retry.initial_retry_ms);
  }

  /** The leader's work: every member's assignment, by the assignor the group chose. */
  private async compute_assignment(members: JoinMember[]): Promise<Array<{ member_id: string; assignment: Buffer }>> {
    const protocol = this.protocol_name ?? '';
    const assigner = this.assigners.find((a) => a.name === protocol || (a.aliases ?? []).includes(protocol));
    if (!assigner) {
      throw new SluiceError(
        `group ${this.group_id} chose assignor ${protocol}, which this consumer does not have`,
        false,
      );
    }
    const group_members = members.map((m) => ({
      memberId: m.member_id,
      memberMetadata: m.metadata,
      groupInstanceId: m.group_instance_id,
    }));
    const topics = [
      ...new Set(group_members.flatMap((m) => AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.topics ?? [])),
    ].sort();
    const cluster = this.ctx.cluster;
    await cluster.with_retry('metadata', () => cluster.refresh_metadata(topics));
    this.ctx.last_metadata_check = Date.now();
    const result = await assigner.assign({ members: group_members, topics });
    // A topic the metadata did not show (deleted, or a broker that has not caught up) counts 0
    // partitions: the leader looks again soon and rebalances once it appears (check_metadata).
    this.assigned_counts = new Map(topics.map((topic) => [topic, cluster.topics.get(topic)?.partitions.length ?? 0]));
    const empty = AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: {} });
    return group_members.map((m) => ({
      member_id: m.memberId,
      assignment: result.find((r) => r.memberId === m.memberId)?.memberAssignment ?? empty,
    }));
  }

  // ---------------------------------------------------------------- heartbeats and leaving

  start_heartbeats(generation: number): void {
    this.heartbeat_wakeup = new Signal();
    const wakeup = this.heartbeat_wakeup;
    this.last_heartbeat = Date.now();
    const current = () =>
      this.ctx.running &&
      this.generation_id === generation &&
      !this.ctx.needs_rejoin &&
      this.heartbeat_wakeup === wakeup;
    void (async () => {
      while (current()) {
        await wakeup.wait(Math.max(0, this.ctx.config.heartbeatInterval - (Date.now() - this.last_heartbeat)));
        if (!current()) return;
        await this.heartbeat().catch(() => {});
      }
    })();
  }

  /** The payload's heartbeat(): the background heartbeats usually make it a no-op. Never throws. */
  async heartbeat_if_due(): Promise<void> {
    if (!this.ctx.group_id || this.generation_id < 0) return;
    if (Date.now() - this.last_heartbeat < this.ctx.config.heartbeatInterval) return;
    await this.heartbeat().catch((error) => this.ctx.report(error));
  }

  private heartbeat(): Promise<void> {
    this.heartbeat_in_flight ??= this.send_heartbeat().finally(() => {
      this.heartbeat_in_flight = null;
    });
    return this.heartbeat_in_flight;
  }

  private async send_heartbeat(): Promise<void> {
    const generation = this.generation_id;
    const instance_id = this.ctx.config.groupInstanceId ?? null;
    const { response } = await this.group_send(HEARTBEAT, instance_id ? 3 : 0, 4, {
      group_id: this.group_id,
      generation_id: generation,
      member_id: this.member_id,
      group_instance_id: instance_id,
    });
    this.last_heartbeat = Date.now();
    const code = response.error_code;
    if (generation !== this.generation_id) return;
    if (code === ErrorCode.NONE) {
      this.ctx.emit(ConsumerEvents.HEARTBEAT, {
        groupId: this.ctx.group_id,
        memberId: this.member_id,
        groupGenerationId: generation,
      });
      return;
    }
    if (REJOIN_CODES.has(code)) return this.on_group_error(code);
    if (COORDINATOR_CODES.has(code)) return this.forget_coordinator();
    // FENCED_INSTANCE_ID and the like: this member is out for good.
    this.on_fenced(new KafkaProtocolError(code, `Heartbeat for group ${this.group_id}`));
  }

  async leave_group(): Promise<void> {
    this.heartbeat_wakeup.fire();
    const member_id = this.member_id;
    const instance_id = this.ctx.config.groupInstanceId ?? null;
    this.generation_id = -1;
    this.leader_id = '';
    this.ctx.needs_rejoin = true;
    // Static members keep their place until the session times out, so a restart does not rebalance.
    if (instance_id !== null || member_id === '') return;
    this.member_id = '';
    const { version, response } = await this.group_send(LEAVE_GROUP, 0, 4, {
      group_id: this.group_id,
      member_id,
      members: [{ member_id, group_instance_id: null, reason: 'the consumer is stopping' }],
    });
    const code = version >= 3 ? response.error_code || (response.members[0]?.error_code ?? 0) : response.error_code;
    if (code !== ErrorCode.NONE && code !== ErrorCode.UNKNOWN_MEMBER_ID) {
      throw new KafkaProtocolError(code, `LeaveGroup ${this.group_id}`);
    }
  }
}
