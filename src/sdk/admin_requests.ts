// The admin client's request plumbing, shared by every area (admin_topics.ts, admin_configs.ts,
// admin_groups.ts, admin_offsets.ts, admin_partitions.ts, admin_cluster.ts, dead_letters.ts):
// routing (topic administration to the controller, partition requests to each leader, group
// requests to the group's coordinator, found with FindCoordinator and cached, broker configs to
// that broker), retries with the cluster's backoff that resend only the resources that failed,
// and the failures left reported together in one AdminError. The requests themselves are the
// areas'.
import type { BrokerConnection, Cluster, TopicInfo } from './cluster.ts';
import { ConnectionError, KafkaProtocolError, SluiceError } from './errors.ts';
import { AdminError, ConfigResourceTypes, type AdminFailure } from './admin_types.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { FIND_COORDINATOR } from '../protocol/kafka/messages/10_find_coordinator.ts';

export const LATEST = -1;
export const EARLIEST = -2;
export const NO_NODE = -1;
export const TIMEOUT_MS_DEFAULT = 5_000;
export { ZERO_UUID } from '../protocol/kafka/codec.ts';
const NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name]));
/** Codes after which cached partition leaders are stale. */
const LEADER_CODES = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  74,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
]);
/** Codes after which a cached group coordinator is stale. */
const COORDINATOR_CODES = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE]);

/** What one round of a request reports per resource: null when done, else why it failed. */
export type Outcomes<K> = Map<K, AdminFailure | null>;

/** A response row about a config resource. */
export interface ResourceResult {
  error_code: number;
  error_message: string | null;
  resource_type: number;
  resource_name: string;
}

/** A response row about a partition. */
export interface PartitionResult {
  partition_index: number;
  error_code: number;
}

function code_retriable(code: number): boolean {
  return new KafkaProtocolError(code, '').retriable;
}

/** A failure with a broker code; codes in `final` are not retried for this request. */
export function coded_failure(
  resource: string,
  code: number,
  message: string | null,
  final: readonly number[] = [],
): AdminFailure {
  return {
    resource,
    code,
    type: NAMES.get(code) ?? `ERROR_${code}`,
    message,
    retriable: code_retriable(code) && !final.includes(code),
  };
}

/** A failure from a thrown error (a KafkaProtocolError keeps its code). */
export function thrown_failure(resource: string, error: unknown, final: readonly number[] = []): AdminFailure {
  if (error instanceof KafkaProtocolError) {
    return { ...coded_failure(resource, error.code, error.message, final), cause: error };
  }
  const retriable = error instanceof SluiceError ? error.retriable : false;
  return {
    resource,
    code: null,
    type: error instanceof Error ? error.name : 'Error',
    message: error instanceof Error ? error.message : String(error),
    retriable,
    cause: error,
  };
}

export const no_answer = (resource: string): AdminFailure =>
  coded_failure(resource, ErrorCode.UNKNOWN_SERVER_ERROR, 'the response has no result for it');

export const topic_label = (name: string) => `topic ${JSON.stringify(name)}`;
export const partition_label = (topic: string, partition: number) =>
  `partition ${partition} of ${JSON.stringify(topic)}`;
export const group_label = (group: string) => `group ${JSON.stringify(group)}`;

function resource_kind(type: number): string {
  if (type === ConfigResourceTypes.TOPIC) return 'topic';
  if (type === ConfigResourceTypes.BROKER) return 'broker';
  if (type === ConfigResourceTypes.BROKER_LOGGER) return 'broker logger';
  return `resource type ${type}`;
}

export const resource_label = (type: number, name: string) => `${resource_kind(type)} ${JSON.stringify(name)}`;

export function invalid(message: string): SluiceError {
  return new SluiceError(message, false);
}

export function parse_offset(value: string | number, what: string): number {
  const offset = typeof value === 'number' ? value : /^-?\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(offset) || offset < EARLIEST) {
    throw invalid(
      `${what}: offset ${JSON.stringify(value)} is not an offset ` +
        '(a non-negative integer, -1 for latest or -2 for earliest)',
    );
  }
  return offset;
}

export function group_by<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    let list = groups.get(k);
    if (!list) groups.set(k, (list = []));
    list.push(item);
  }
  return groups;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** A response row about a topic named in the request. */
export interface TopicResult {
  name: string;
  error_code: number;
  error_message?: string | null;
}

/** Outcomes per topic; a topic the broker does not know is final, not retried. */
export function topic_outcomes(results: readonly TopicResult[]): Outcomes<string> {
  const outcomes: Outcomes<string> = new Map();
  for (const { name, error_code: code, error_message } of results) {
    const failure =
      code === ErrorCode.NONE
        ? null
        : coded_failure(topic_label(name), code, error_message ?? null, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
    outcomes.set(name, failure);
  }
  return outcomes;
}

/** Outcomes per partition of a response's `topics[].partitions[]` with `error_code`s. */
export function partition_outcomes<P extends PartitionResult>(
  topic: string,
  response_topics: ReadonlyArray<{ name: string; partitions: readonly P[] }>,
  on_success?: (row: P) => void,
  final: readonly number[] = [],
): Outcomes<number> {
  const outcomes: Outcomes<number> = new Map();
  for (const t of response_topics) {
    if (t.name !== topic) continue;
    for (const p of t.partitions) {
      const code = p.error_code;
      if (code === ErrorCode.NONE) on_success?.(p);
      const failure =
        code === ErrorCode.NONE ? null : coded_failure(partition_label(topic, p.partition_index), code, null, final);
      outcomes.set(p.partition_index, failure);
    }
  }
  return outcomes;
}

/** Matches a config response's rows to the requested resources (by type and name). */
export function resource_outcomes<R extends ResourceResult>(
  resources: ReadonlyArray<{ type: number; name: string }>,
  indexes: number[],
  results: readonly R[],
  on_success: (index: number, row: R) => void,
): Outcomes<number> {
  const outcomes: Outcomes<number> = new Map();
  for (const i of indexes) {
    const r = resources[i]!;
    const row = results.find((x) => x.resource_type === r.type && x.resource_name === r.name);
    if (!row) continue;
    const code = row.error_code;
    if (code === ErrorCode.NONE) on_success(i, row);
    const failure =
      code === ErrorCode.NONE
        ? null
        : coded_failure(resource_label(r.type, r.name), code, row.error_message ?? null, [
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
          ]);
    outcomes.set(i, failure);
  }
  return outcomes;
}

/** The codes of a failed round, to see which cached routes it shows to be stale. */
function failure_codes(error: unknown): number[] {
  if (error instanceof AdminError) return error.failures.map((f) => f.code ?? ErrorCode.NONE);
  return error instanceof KafkaProtocolError ? [error.code] : [];
}

export class AdminRequests {
  /** Group id → node id of its coordinator. */
  private readonly coordinators = new Map<string, number>();

  constructor(readonly cluster: Cluster) {}

  /** Forgets every cached coordinator (the admin disconnects). */
  forget_coordinators(): void {
    this.coordinators.clear();
  }

  /** Forgets the cached coordinator of one group (the group was deleted). */
  forget_coordinator(group_id: string): void {
    this.coordinators.delete(group_id);
  }

  /**
   * Runs rounds of a request about several resources until each has succeeded: `round(pending)`
   * reports an outcome per resource; retriable failures are sent again after the cluster's backoff,
   * the others (or the retriable ones once retries run out) are thrown as one AdminError.
   */
  async retry_pending<K>(
    operation: string,
    keys: K[],
    round: (pending: K[]) => Promise<Outcomes<K>>,
    label: (key: K) => string = String,
  ): Promise<void> {
    let pending = keys;
    await this.cluster.with_retry(operation, async () => {
      let outcomes: Outcomes<K>;
      try {
        outcomes = await round(pending);
      } catch (error) {
        this.forget_routes(failure_codes(error), error instanceof ConnectionError);
        throw error;
      }
      const failures: AdminFailure[] = [];
      pending = pending.filter((key) => {
        const outcome = outcomes.has(key) ? outcomes.get(key)! : no_answer(label(key));
        if (outcome !== null) failures.push(outcome);
        return outcome !== null;
      });
      if (failures.length === 0) return;
      this.forget_routes(
        failures.map((f) => f.code ?? ErrorCode.NONE),
        failures.some((f) => f.code === null),
      );
      if (failures.every((f) => f.code === null)) {
        throw failures[0]!.cause ?? new SluiceError(failures[0]!.message ?? operation, failures[0]!.retriable);
      }
      throw new AdminError(operation, failures);
    });
  }

  /** Drops cached routes that `codes` (or a lost connection) show to be stale. */
  private forget_routes(codes: number[], connection_lost: boolean): void {
    if (connection_lost || codes.includes(ErrorCode.NOT_CONTROLLER)) this.cluster.controller_id = NO_NODE;
    if (connection_lost || codes.some((c) => COORDINATOR_CODES.has(c))) this.coordinators.clear();
    if (connection_lost || codes.some((c) => LEADER_CODES.has(c))) this.cluster.topics.clear();
  }

  /** Fresh metadata of one topic (not cached: partitions may have been added). */
  async topic_info(topic: string): Promise<TopicInfo> {
    return this.cluster.with_retry(`metadata for ${topic}`, async () => {
      const errors = await this.cluster.refresh_metadata([topic]);
      const code = errors.get(topic);
      if (code !== undefined) {
        throw new AdminError('Metadata', [
          coded_failure(topic_label(topic), code, null, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]),
        ]);
      }
      const info = this.cluster.topics.get(topic);
      if (!info) throw new AdminError('Metadata', [no_answer(topic_label(topic))]);
      return info;
    });
  }

  /** Fails with UNKNOWN_TOPIC_OR_PARTITION naming each partition the topic does not have. */
  async check_partitions(operation: string, topic: string, partitions: number[]): Promise<void> {
    const info = await this.topic_info(topic);
    const missing = partitions.filter((p) => !info.partitions.some((q) => q.partition === p));
    if (missing.length > 0) {
      throw new AdminError(
        operation,
        missing.map((p) =>
          coded_failure(
            partition_label(topic, p),
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
            `the topic has ${info.partitions.length} partitions`,
            [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
          ),
        ),
      );
    }
  }

  /** Sends a request about `partitions` of `topic` to each partition's leader. */
  async on_leaders(
    operation: string,
    topic: string,
    partitions: number[],
    send: (connection: BrokerConnection, partitions: number[]) => Promise<Outcomes<number>>,
  ): Promise<void> {
    await this.retry_pending(
      operation,
      partitions,
      async (pending) => {
        const info = this.cluster.topics.get(topic) ?? (await this.topic_info(topic));
        const outcomes: Outcomes<number> = new Map();
        const by_leader = group_by(pending, (p) => info.partitions.find((q) => q.partition === p)?.leader ?? NO_NODE);
        await Promise.all(
          [...by_leader].map(async ([leader, list]) => {
            if (leader < 0) {
              for (const p of list) {
                const failure = coded_failure(
                  partition_label(topic, p),
                  ErrorCode.LEADER_NOT_AVAILABLE,
                  'no leader in the metadata',
                );
                outcomes.set(p, failure);
              }
              return;
            }
            try {
              for (const [p, outcome] of await send(await this.cluster.node(leader), list)) outcomes.set(p, outcome);
            } catch (error) {
              for (const p of list) outcomes.set(p, thrown_failure(partition_label(topic, p), error));
            }
          }),
        );
        return outcomes;
      },
      (p) => partition_label(topic, p),
    );
  }

  /** The connection to the coordinator of `group_id` (FindCoordinator, then cached). */
  async coordinator(group_id: string): Promise<BrokerConnection> {
    let node_id = this.coordinators.get(group_id);
    if (node_id === undefined) {
      const connection = await this.cluster.any();
      const { version, response } = await connection.send(FIND_COORDINATOR, 0, 6, (v) =>
        v >= 4 ? { key_type: 0, coordinator_keys: [group_id] } : { key: group_id, key_type: 0 },
      );
      const entry = version >= 4 ? response.coordinators.find((c) => c.key === group_id) : response;
      if (!entry) throw new AdminError('FindCoordinator', [no_answer(group_label(group_id))]);
      const code = entry.error_code;
      if (code !== ErrorCode.NONE) {
        throw new KafkaProtocolError(code, `FindCoordinator for ${group_label(group_id)}`, entry.error_message);
      }
      node_id = entry.node_id;
      if (!this.cluster.brokers.has(node_id)) {
        this.cluster.brokers.set(node_id, { node_id, host: entry.host, port: entry.port });
      }
      this.coordinators.set(group_id, node_id);
    }
    return this.cluster.node(node_id);
  }

  /** Runs `work` against the coordinator of one group, retrying (and looking it up again). */
  async on_coordinator<T>(
    operation: string,
    group_id: string,
    work: (connection: BrokerConnection) => Promise<T>,
  ): Promise<T> {
    return this.cluster.with_retry(operation, async () => {
      try {
        return await work(await this.coordinator(group_id));
      } catch (error) {
        const codes =
          error instanceof AdminError
            ? error.failures.map((f) => f.code ?? 0)
            : error instanceof KafkaProtocolError
              ? [error.code]
              : [];
        if (error instanceof ConnectionError || codes.some((c) => COORDINATOR_CODES.has(c))) {
          this.coordinators.delete(group_id);
        }
        throw error;
      }
    });
  }

  /** Sends a request about `group_ids` to each group's coordinator, one request per coordinator. */
  async on_coordinators(
    operation: string,
    group_ids: string[],
    send: (connection: BrokerConnection, groups: string[]) => Promise<Outcomes<string>>,
  ): Promise<void> {
    await this.retry_pending(
      operation,
      group_ids,
      async (pending) => {
        const outcomes: Outcomes<string> = new Map();
        const located: Array<{ group: string; connection: BrokerConnection }> = [];
        await Promise.all(
          pending.map(async (group) => {
            try {
              located.push({ group, connection: await this.coordinator(group) });
            } catch (error) {
              outcomes.set(group, thrown_failure(group_label(group), error));
            }
          }),
        );
        await Promise.all(
          [...group_by(located, (l) => l.connection)].map(async ([connection, list]) => {
            const groups = list.map((l) => l.group);
            try {
              for (const [group, outcome] of await send(connection, groups)) outcomes.set(group, outcome);
            } catch (error) {
              for (const group of groups) outcomes.set(group, thrown_failure(group_label(group), error));
            }
          }),
        );
        return outcomes;
      },
      group_label,
    );
  }

  /**
   * Sends a config request about `resources` (by index) to their targets: broker resources to that
   * broker (any broker for the cluster default, name ''), the others to the controller.
   */
  async on_config_targets(
    operation: string,
    resources: ReadonlyArray<{ type: number; name: string }>,
    send: (connection: BrokerConnection, indexes: number[]) => Promise<Outcomes<number>>,
  ): Promise<void> {
    const label = (i: number) => resource_label(resources[i]!.type, resources[i]!.name);
    const target = (i: number): string => {
      const r = resources[i]!;
      if (r.type !== ConfigResourceTypes.BROKER && r.type !== ConfigResourceTypes.BROKER_LOGGER) return 'controller';
      return r.name === '' ? 'any' : `node:${r.name}`;
    };
    await this.retry_pending(
      operation,
      resources.map((_, i) => i),
      async (pending) => {
        const outcomes: Outcomes<number> = new Map();
        await Promise.all(
          [...group_by(pending, target)].map(async ([where, indexes]) => {
            try {
              for (const [i, outcome] of await send(await this.config_target(where), indexes)) outcomes.set(i, outcome);
            } catch (error) {
              for (const i of indexes) outcomes.set(i, thrown_failure(label(i), error));
            }
          }),
        );
        return outcomes;
      },
      label,
    );
  }

  private config_target(where: string): Promise<BrokerConnection> {
    if (where === 'controller') return this.cluster.controller();
    if (where === 'any') return this.cluster.any();
    return this.cluster.node(Number(where.slice(5)));
  }
}
