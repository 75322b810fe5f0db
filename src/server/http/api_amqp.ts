// /api/v1/amqp/*: the AMQP routing of a vhost (exchanges, queues with their depth and consumers,
// bindings) from the core, and the AMQP connections of this broker from its listener.
import type { Core, QueueRecord } from '../../core/index.ts';
import type { Router } from './router.ts';
import { invalid_query, not_found } from './http_errors.ts';

/** The AMQP listener as this API sees it: its connections, shown as it describes them. */
export interface AmqpSource {
  connections(): Array<{ readonly channels: number; readonly consumers: number }>;
}

function vhost_of(query: URLSearchParams): string {
  const vhost = query.get('vhost') ?? '/';
  if (vhost !== '/') throw invalid_query('vhost', `no vhost '${vhost}' (this broker serves '/')`);
  return vhost;
}

function queue_row(core: Core, queue: QueueRecord) {
  const stats = core.shares.is_coordinator ? core.shares.queue_stats(queue.group_id) : null;
  const members = core.shares.is_coordinator ? (core.shares.describe(queue.group_id)?.members.length ?? 0) : null;
  return {
    name: queue.name,
    topic: queue.topic,
    group: queue.group_id,
    durable: queue.durable,
    exclusive: queue.exclusive,
    auto_delete: queue.auto_delete,
    arguments: queue.arguments,
    ready: stats?.available ?? null,
    unacked: stats?.in_flight ?? null,
    consumers: members,
  };
}

export function add_amqp_routes(router: Router, amqp: AmqpSource | null): void {
  router.add('GET', '/api/v1/amqp/exchanges', (request, { core }) => ({
    status: 200,
    body: { exchanges: core.routing.exchanges(vhost_of(request.query)) },
  }));
  router.add('GET', '/api/v1/amqp/queues', (request, { core }) => ({
    status: 200,
    body: { queues: core.routing.queues(vhost_of(request.query)).map((q) => queue_row(core, q)) },
  }));
  router.add('GET', '/api/v1/amqp/queues/:name', (request, { core }) => {
    const vhost = vhost_of(request.query);
    const queue = core.routing.queue(vhost, request.params['name']!);
    if (!queue) throw not_found(`no queue '${request.params['name']}' in vhost '${vhost}'`);
    const bindings = core.routing
      .bindings(vhost)
      .filter((b) => b.destination_type === 'queue' && b.destination === queue.name);
    return { status: 200, body: { ...queue_row(core, queue), bindings } };
  });
  router.add('GET', '/api/v1/amqp/bindings', (request, { core }) => ({
    status: 200,
    body: { bindings: core.routing.bindings(vhost_of(request.query)) },
  }));
  router.add('GET', '/api/v1/amqp/connections', () => ({
    status: 200,
    body: { connections: amqp?.connections() ?? [] },
  }));
}
