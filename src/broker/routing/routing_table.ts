// One virtual host's exchanges, queues and bindings in memory, and the routing of a message through
// them: direct, fanout, topic and headers exchanges, exchange-to-exchange bindings and alternate
// exchanges. Pure data and lookups; routing_api.ts persists changes and creates queues' topics.
import type {
  BindingRecord,
  ExchangeRecord,
  QueueRecord,
  RoutingArgs,
  RoutingArgValue,
  RoutingDefinitions,
} from '../../core/types.ts';
import { topic_matcher } from './topic_match.ts';

const standard = (name: string, type: ExchangeRecord['type']): ExchangeRecord => ({
  name,
  type,
  durable: true,
  auto_delete: false,
  internal: false,
  arguments: {},
  declared_by: -1,
});

/** The exchanges every virtual host has; they cannot be deleted. */
export const STANDARD_EXCHANGES: readonly ExchangeRecord[] = [
  standard('', 'direct'),
  standard('amq.direct', 'direct'),
  standard('amq.fanout', 'fanout'),
  standard('amq.topic', 'topic'),
  standard('amq.headers', 'headers'),
  standard('amq.match', 'headers'),
];

/** Exchange hops one message may take (exchange bindings can form cycles; each is visited once). */
const ROUTE_EXCHANGES_MAX = 1_000;

export function same_binding(a: BindingRecord, b: BindingRecord): boolean {
  return (
    a.source === b.source &&
    a.destination === b.destination &&
    a.destination_type === b.destination_type &&
    a.routing_key === b.routing_key &&
    same_args(a.arguments, b.arguments)
  );
}

export function same_args(a: RoutingArgs, b: RoutingArgs): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

export class RoutingTable {
  readonly exchanges = new Map<string, ExchangeRecord>();
  readonly queues = new Map<string, QueueRecord>();
  /** Bindings by source exchange. */
  private readonly by_source = new Map<string, BindingRecord[]>();

  constructor(definitions?: RoutingDefinitions) {
    for (const e of STANDARD_EXCHANGES) this.exchanges.set(e.name, e);
    for (const e of definitions?.exchanges ?? []) this.exchanges.set(e.name, e);
    for (const q of definitions?.queues ?? []) this.queues.set(q.name, q);
    for (const b of definitions?.bindings ?? []) this.add_binding(b);
  }

  /** Everything declared, as the metadata store keeps it (the standard exchanges are implied). */
  definitions(): RoutingDefinitions {
    const exchanges = [...this.exchanges.values()].filter((e) => !is_standard(e.name));
    return { exchanges, queues: [...this.queues.values()], bindings: this.bindings() };
  }

  bindings(): BindingRecord[] {
    return [...this.by_source.values()].flat();
  }

  has_binding(binding: BindingRecord): boolean {
    return (this.by_source.get(binding.source) ?? []).some((b) => same_binding(b, binding));
  }

  add_binding(binding: BindingRecord): void {
    if (this.has_binding(binding)) return;
    const list = this.by_source.get(binding.source) ?? [];
    this.by_source.set(binding.source, [...list, binding]);
  }

  remove_binding(binding: BindingRecord): boolean {
    const list = this.by_source.get(binding.source) ?? [];
    const kept = list.filter((b) => !same_binding(b, binding));
    if (kept.length === list.length) return false;
    if (kept.length > 0) this.by_source.set(binding.source, kept);
    else {
      this.by_source.delete(binding.source);
      this.drop_auto_deleted([binding.source]);
    }
    return true;
  }

  /**
   * Removes every binding from or to `name` (a deleted exchange or queue), then the auto-delete
   * exchanges that lost their last binding by it.
   */
  remove_bindings_of(name: string, type: 'queue' | 'exchange'): void {
    if (type === 'exchange') this.by_source.delete(name);
    const emptied: string[] = [];
    for (const [source, list] of this.by_source) {
      const kept = list.filter((b) => !(b.destination === name && b.destination_type === type));
      if (kept.length === list.length) continue;
      if (kept.length > 0) this.by_source.set(source, kept);
      else {
        this.by_source.delete(source);
        emptied.push(source);
      }
    }
    this.drop_auto_deleted(emptied);
  }

  /**
   * An auto-delete exchange goes when its last binding (as the source) goes, as RabbitMQ does; one
   * never bound stays. Its own bindings to other exchanges go with it, which may empty those.
   */
  private drop_auto_deleted(sources: readonly string[]): void {
    for (const name of sources) {
      if (!this.exchanges.get(name)?.auto_delete || is_standard(name)) continue;
      this.exchanges.delete(name);
      this.remove_bindings_of(name, 'exchange');
    }
  }

  /** Bindings whose source is `name`. */
  bindings_from(name: string): readonly BindingRecord[] {
    return this.by_source.get(name) ?? [];
  }

  /** Whether anything is bound to `name` as a destination (exchange if-unused, auto-delete). */
  bound_to(name: string, type: 'queue' | 'exchange'): boolean {
    for (const list of this.by_source.values())
      if (list.some((b) => b.destination === name && b.destination_type === type)) return true;
    return false;
  }

  /** The queues a message reaches; the default exchange routes by queue name. */
  route(exchange: string, routing_key: string, headers: RoutingArgs | null): QueueRecord[] {
    if (exchange === '') {
      const queue = this.queues.get(routing_key);
      return queue ? [queue] : [];
    }
    const found = new Map<string, QueueRecord>();
    const visited = new Set<string>();
    this.route_from(exchange, routing_key, headers, found, visited);
    return [...found.values()];
  }

  private route_from(
    name: string,
    routing_key: string,
    headers: RoutingArgs | null,
    found: Map<string, QueueRecord>,
    visited: Set<string>,
  ): void {
    const exchange = this.exchanges.get(name);
    if (!exchange || visited.has(name) || visited.size >= ROUTE_EXCHANGES_MAX) return;
    visited.add(name);
    const before = found.size;
    for (const binding of this.bindings_from(name)) {
      if (!binding_matches(exchange, binding, routing_key, headers)) continue;
      if (binding.destination_type === 'exchange') {
        this.route_from(binding.destination, routing_key, headers, found, visited);
      } else {
        const queue = this.queues.get(binding.destination);
        if (queue) found.set(queue.name, queue);
      }
    }
    const alternate = exchange.arguments['alternate-exchange'];
    if (found.size === before && typeof alternate === 'string')
      this.route_from(alternate, routing_key, headers, found, visited);
  }
}

export function is_standard(exchange: string): boolean {
  return STANDARD_EXCHANGES.some((e) => e.name === exchange);
}

function binding_matches(
  exchange: ExchangeRecord,
  binding: BindingRecord,
  routing_key: string,
  headers: RoutingArgs | null,
): boolean {
  const type = exchange.type === 'x-delayed-message' ? delayed_type(exchange) : exchange.type;
  switch (type) {
    case 'direct':
      return binding.routing_key === routing_key;
    case 'fanout':
      return true;
    case 'topic':
      return topic_matcher(binding.routing_key)(routing_key);
    case 'headers':
      return headers_match(binding.arguments, headers ?? {});
  }
}

/** The routing of an x-delayed-message exchange (its x-delayed-type; direct when unset). */
function delayed_type(exchange: ExchangeRecord): 'direct' | 'fanout' | 'topic' | 'headers' {
  const type = exchange.arguments['x-delayed-type'];
  return type === 'fanout' || type === 'topic' || type === 'headers' ? type : 'direct';
}

/** x-match all/any (keys starting x- ignored) or all-with-x/any-with-x (they count too). */
export function headers_match(binding: RoutingArgs, headers: RoutingArgs): boolean {
  const mode = typeof binding['x-match'] === 'string' ? binding['x-match'] : 'all';
  const with_x = mode.endsWith('-with-x');
  const any = mode.startsWith('any');
  const wanted = Object.entries(binding).filter(([k]) => k !== 'x-match' && (with_x || !k.startsWith('x-')));
  const one = ([k, v]: [string, RoutingArgValue]) => Object.hasOwn(headers, k) && (v === null || headers[k] === v);
  return any ? wanted.some(one) : wanted.every(one);
}
