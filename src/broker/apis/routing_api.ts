// The core API's routing (RoutingApi): exchanges, queues and bindings per virtual host over the
// metadata store. Each change is written whole for its virtual host, one at a time, and applies
// once stored; a queue gets its topic (one partition) and its share group's configs first. The
// in-memory table is rebuilt when the stored definitions change (another broker of a cluster).
import type { RoutingApi, SharesApi, TopicsApi } from '../../core/api.ts';
import { RoutingError } from '../../core/errors.ts';
import type {
  BindingRecord,
  ExchangeRecord,
  ExchangeSpec,
  QueueRecord,
  QueueSpec,
  RoutingArgs,
  RoutingDefinitions,
} from '../../core/types.ts';
import type { CoreInternals } from './internals.ts';
import { encode_record_batch, type BatchRecord, type DecodedRecord } from '../../protocol/record_batch.ts';
import { dead_letter_message, type DeadLetterRouter } from '../routing/dead_lettering.ts';
import { RoutingTable, is_standard, same_args } from '../routing/routing_table.ts';
import {
  check_queue_arguments,
  queue_group_configs,
  queue_partitions,
  queue_group_id,
  queue_topic_configs,
  queue_topic_name,
} from '../routing/queue_arguments.ts';

interface VhostState {
  table: RoutingTable;
  /** The stored definitions the table was built from (identity tells a newer one apart). */
  built_from: RoutingDefinitions | undefined;
  chain: Promise<void>;
}

/** The routing API and what the broker itself calls. */
export interface RoutingCore extends RoutingApi {
  /** Drops what this broker declared before it (re)started that does not outlive it. */
  forget_transient(): Promise<void>;
  route_dead_letters: DeadLetterRouter;
  route_maxlen(
    vhost: string,
    queue: QueueRecord,
    records: ReadonlyArray<Pick<DecodedRecord, 'key' | 'value' | 'headers'>>,
  ): Array<{ topic: string; records: BatchRecord[] }> | null;
  queue_of_topic(topic: string): { vhost: string; queue: QueueRecord } | null;
}

export function routing_api(broker: CoreInternals, topics: TopicsApi, shares: SharesApi): RoutingCore {
  return new Routing(broker, topics, shares);
}

class Routing implements RoutingCore {
  private readonly vhosts = new Map<string, VhostState>();

  constructor(
    private readonly broker: CoreInternals,
    private readonly topics: TopicsApi,
    private readonly shares: SharesApi,
  ) {}

  private state(vhost: string): VhostState {
    const stored = this.broker.metadata.routing_definitions(vhost);
    let s = this.vhosts.get(vhost);
    if (!s)
      this.vhosts.set(vhost, (s = { table: new RoutingTable(stored), built_from: stored, chain: Promise.resolve() }));
    else if (s.built_from !== stored) Object.assign(s, { table: new RoutingTable(stored), built_from: stored });
    return s;
  }

  /** Runs `apply` on the current table after earlier changes, then stores the result. */
  private change<T>(vhost: string, apply: (table: RoutingTable) => Promise<T> | T): Promise<T> {
    const s = this.state(vhost);
    const run = s.chain.then(async () => {
      const table = this.state(vhost).table;
      const result = await apply(table);
      await this.broker.metadata.set_routing_definitions(vhost, table.definitions());
      Object.assign(this.state(vhost), { table, built_from: this.broker.metadata.routing_definitions(vhost) });
      return result;
    });
    s.chain = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private async create_queue(vhost: string, spec: QueueSpec): Promise<QueueRecord> {
    check_queue_arguments(spec.arguments);
    const topic = queue_topic_name(vhost, spec.name);
    const adopted = this.topics.get(topic) !== undefined;
    if (!adopted)
      await this.topics.create(topic, queue_partitions(spec.arguments), queue_topic_configs(spec.arguments));
    const group_id = queue_group_id(topic);
    await this.shares.set_configs(group_id, queue_group_configs(spec.arguments));
    if (this.shares.is_coordinator) await this.shares.track(group_id, topic);
    return { ...spec, topic, group_id, owns_topic: !adopted, declared_by: this.broker.node_id };
  }

  private async drop_queue(table: RoutingTable, queue: QueueRecord): Promise<void> {
    table.queues.delete(queue.name);
    table.remove_bindings_of(queue.name, 'queue');
    if (queue.owns_topic && this.topics.get(queue.topic)) await this.topics.delete(queue.topic);
  }

  exchange(vhost: string, name: string): ExchangeRecord | undefined {
    return this.state(vhost).table.exchanges.get(name);
  }

  exchanges(vhost: string): ExchangeRecord[] {
    return [...this.state(vhost).table.exchanges.values()];
  }

  declare_exchange(vhost: string, spec: ExchangeSpec): Promise<ExchangeRecord> {
    return this.change(vhost, (table) => {
      const existing = table.exchanges.get(spec.name);
      if (existing) {
        check_same_exchange(existing, spec);
        return existing;
      }
      if (spec.name.startsWith('amq.'))
        throw new RoutingError('access_refused', `exchange name '${spec.name}' is reserved (amq. prefix)`);
      const record: ExchangeRecord = { ...spec, declared_by: this.broker.node_id };
      table.exchanges.set(spec.name, record);
      return record;
    });
  }

  delete_exchange(vhost: string, name: string, { if_unused }: { if_unused: boolean }): Promise<void> {
    return this.change(vhost, (table) => {
      if (is_standard(name)) throw new RoutingError('access_refused', `exchange '${name}' cannot be deleted`);
      if (!table.exchanges.has(name)) throw new RoutingError('not_found', `no exchange '${name}' in vhost '${vhost}'`);
      if (if_unused && table.bindings_from(name).length > 0)
        throw new RoutingError('precondition_failed', `exchange '${name}' in vhost '${vhost}' in use`);
      table.exchanges.delete(name);
      table.remove_bindings_of(name, 'exchange');
    });
  }

  queue(vhost: string, name: string): QueueRecord | undefined {
    return this.state(vhost).table.queues.get(name);
  }

  queues(vhost: string): QueueRecord[] {
    return [...this.state(vhost).table.queues.values()];
  }

  queue_topic(vhost: string, name: string): string {
    return this.queue(vhost, name)?.topic ?? queue_topic_name(vhost, name);
  }

  declare_queue(vhost: string, spec: QueueSpec): Promise<QueueRecord> {
    return this.change(vhost, async (table) => {
      const existing = table.queues.get(spec.name);
      if (existing) {
        check_same_queue(existing, spec);
        return existing;
      }
      if (spec.name.startsWith('amq.') && !spec.name.startsWith('amq.gen-'))
        throw new RoutingError('access_refused', `queue name '${spec.name}' is reserved (amq. prefix)`);
      const record = await this.create_queue(vhost, spec);
      table.queues.set(record.name, record);
      return record;
    });
  }

  delete_queue(vhost: string, name: string): Promise<void> {
    return this.change(vhost, async (table) => {
      const queue = table.queues.get(name);
      if (!queue) throw new RoutingError('not_found', `no queue '${name}' in vhost '${vhost}'`);
      await this.drop_queue(table, queue);
    });
  }

  bindings(vhost: string): BindingRecord[] {
    return this.state(vhost).table.bindings();
  }

  bind(vhost: string, binding: BindingRecord): Promise<void> {
    return this.change(vhost, (table) => {
      check_binding_ends(table, vhost, binding);
      table.add_binding(binding);
    });
  }

  unbind(vhost: string, binding: BindingRecord): Promise<void> {
    return this.change(vhost, (table) => {
      check_binding_ends(table, vhost, binding);
      table.remove_binding(binding);
    });
  }

  route(vhost: string, exchange: string, routing_key: string, headers: RoutingArgs | null): QueueRecord[] {
    return this.state(vhost).table.route(exchange, routing_key, headers);
  }

  /** The queue whose deliveries share group `group_id` makes, with its virtual host. */
  private queue_of_group(group_id: string): { vhost: string; queue: QueueRecord } | null {
    for (const vhost of this.broker.metadata.routing_vhosts())
      for (const queue of this.state(vhost).table.queues.values())
        if (queue.group_id === group_id) return { vhost, queue };
    return null;
  }

  readonly route_dead_letters: DeadLetterRouter = (group_id, letters, originals, now_ms) => {
    const found = this.queue_of_group(group_id);
    const exchange = found?.queue.arguments['x-dead-letter-exchange'];
    if (!found || typeof exchange !== 'string') return null;
    const { vhost, queue } = found;
    const fixed_key = queue.arguments['x-dead-letter-routing-key'];
    const by_topic = new Map<string, BatchRecord[]>();
    for (const letter of letters) {
      const original = originals.get(letter.offset);
      if (!original) continue;
      const routing_key = typeof fixed_key === 'string' ? fixed_key : (original.key?.toString('utf8') ?? '');
      const targets = this.route(vhost, exchange, routing_key, null);
      if (targets.length === 0) return null; // the dead-letter topic keeps them instead
      const record = dead_letter_message(queue, original, letter.reason, exchange, routing_key, now_ms);
      for (const target of targets) by_topic.set(target.topic, [...(by_topic.get(target.topic) ?? []), record]);
    }
    return [...by_topic].map(([topic, records]) => ({ topic, records }));
  };

  async dead_letter_rejected(vhost: string, queue: QueueRecord, records: readonly BatchRecord[]): Promise<boolean> {
    const routed = this.route_maxlen(vhost, queue, records);
    if (!routed) return false;
    for (const target of routed)
      await this.broker.produce_anywhere(target.topic, 0, encode_record_batch(target.records));
    return true;
  }

  /**
   * A queue's messages that its length limit pushes out (drop-head) or refuses
   * (reject-publish-dlx), as dead letters through its dead-letter exchange; null when it has
   * none or it routes nowhere (they are archived, or only refused, instead).
   */
  route_maxlen(
    vhost: string,
    queue: QueueRecord,
    records: ReadonlyArray<Pick<DecodedRecord, 'key' | 'value' | 'headers'>>,
  ): Array<{ topic: string; records: BatchRecord[] }> | null {
    const exchange = queue.arguments['x-dead-letter-exchange'];
    if (typeof exchange !== 'string' || records.length === 0) return null;
    const fixed_key = queue.arguments['x-dead-letter-routing-key'];
    const now_ms = this.broker.clock.now_ms();
    const by_topic = new Map<string, BatchRecord[]>();
    for (const original of records) {
      const routing_key = typeof fixed_key === 'string' ? fixed_key : (original.key?.toString('utf8') ?? '');
      const targets = this.route(vhost, exchange, routing_key, null);
      if (targets.length === 0) return null;
      const record = dead_letter_message(queue, original, 'maxlen', exchange, routing_key, now_ms);
      for (const target of targets) by_topic.set(target.topic, [...(by_topic.get(target.topic) ?? []), record]);
    }
    return [...by_topic].map(([topic, records]) => ({ topic, records }));
  }

  /** The queue whose messages topic `topic` holds, with its virtual host. */
  queue_of_topic(topic: string): { vhost: string; queue: QueueRecord } | null {
    for (const vhost of this.broker.metadata.routing_vhosts())
      for (const queue of this.state(vhost).table.queues.values()) if (queue.topic === topic) return { vhost, queue };
    return null;
  }

  /** Non-durable and exclusive declarations this broker made before it restarted. */
  async forget_transient(): Promise<void> {
    const node_id = this.broker.node_id;
    for (const vhost of this.broker.metadata.routing_vhosts())
      await this.change(vhost, async (table) => {
        for (const queue of [...table.queues.values()])
          if (queue.declared_by === node_id && (!queue.durable || queue.exclusive)) await this.drop_queue(table, queue);
        for (const exchange of [...table.exchanges.values()])
          if (exchange.declared_by === node_id && !exchange.durable && !is_standard(exchange.name)) {
            table.exchanges.delete(exchange.name);
            table.remove_bindings_of(exchange.name, 'exchange');
          }
      });
  }
}

/** A precondition_failed naming what differs, in RabbitMQ's words. */
function inequivalent(kind: string, name: string, what: string, received: unknown, current: unknown): RoutingError {
  const text = `inequivalent arg '${what}' for ${kind} '${name}': received '${String(received)}'`;
  return new RoutingError('precondition_failed', `${text} but current is '${String(current)}'`);
}

function check_same_exchange(existing: ExchangeRecord, spec: ExchangeSpec): void {
  const differs = (what: string, ours: unknown, theirs: unknown) => {
    if (ours !== theirs) throw inequivalent('exchange', spec.name, what, theirs, ours);
  };
  differs('type', existing.type, spec.type);
  differs('durable', existing.durable, spec.durable);
  differs('auto_delete', existing.auto_delete, spec.auto_delete);
  differs('internal', existing.internal, spec.internal);
  if (!same_args(existing.arguments, spec.arguments))
    throw new RoutingError('precondition_failed', `inequivalent arguments for exchange '${spec.name}'`);
}

function check_same_queue(existing: QueueRecord, spec: QueueSpec): void {
  for (const what of ['durable', 'exclusive', 'auto_delete'] as const)
    if (existing[what] !== spec[what]) throw inequivalent('queue', spec.name, what, spec[what], existing[what]);
  if (!same_args(existing.arguments, spec.arguments))
    throw new RoutingError('precondition_failed', `inequivalent arguments for queue '${spec.name}'`);
}

function check_binding_ends(table: RoutingTable, vhost: string, binding: BindingRecord): void {
  if (binding.source === '')
    throw new RoutingError('access_refused', 'the default exchange cannot be bound to or from');
  if (!table.exchanges.has(binding.source))
    throw new RoutingError('not_found', `no exchange '${binding.source}' in vhost '${vhost}'`);
  const exists =
    binding.destination_type === 'queue'
      ? table.queues.has(binding.destination)
      : table.exchanges.has(binding.destination);
  if (!exists)
    throw new RoutingError('not_found', `no ${binding.destination_type} '${binding.destination}' in vhost '${vhost}'`);
}
