// /api/v1/amqp/*: the AMQP routing of each vhost, or of the one `?vhost=` names (exchanges, queues
// with their depth and consumers, bindings) from the core, and this broker's AMQP connections.
import type { Core, QueueRecord } from '../../core/index.ts';
import type { Router } from './router.ts';
import { not_found } from './http_errors.ts';

/** The AMQP listener as this API sees it: its vhosts and connections, shown as it describes them. */
export interface AmqpSource {
  readonly vhosts: readonly string[];
  connections(): Array<{ readonly channels: number; readonly consumers: number }>;
}

/** The vhost `?vhost=` names (404 when not served), or every served vhost without it. */
function vhosts_of(query: URLSearchParams, amqp: AmqpSource | null): readonly string[] {
  const served = amqp?.vhosts ?? ['/'];
  const vhost = query.get('vhost');
  if (vhost === null) return served;
  if (!served.includes(vhost)) throw not_found(`no vhost '${vhost}'`);
  return [vhost];
}

/** Rows of each vhost, each marked with its vhost. */
function per_vhost<T extends object>(vhosts: readonly string[], rows: (vhost: string) => T[]) {
  return vhosts.flatMap((vhost) => rows(vhost).map((row) => ({ vhost, ...row })));
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
  router.add('GET', '/api/v1/amqp/vhosts', () => ({ status: 200, body: { vhosts: amqp?.vhosts ?? ['/'] } }));
  router.add('GET', '/api/v1/amqp/exchanges', (request, { core }) => ({
    status: 200,
    body: { exchanges: per_vhost(vhosts_of(request.query, amqp), (v) => core.routing.exchanges(v)) },
  }));
  router.add('GET', '/api/v1/amqp/queues', (request, { core }) => ({
    status: 200,
    body: {
      queues: per_vhost(vhosts_of(request.query, amqp), (v) => core.routing.queues(v).map((q) => queue_row(core, q))),
    },
  }));
  router.add('GET', '/api/v1/amqp/queues/:name', (request, { core }) => {
    const [vhost] = request.query.has('vhost') ? vhosts_of(request.query, amqp) : ['/'];
    const queue = core.routing.queue(vhost!, request.params['name']!);
    if (!queue) throw not_found(`no queue '${request.params['name']}' in vhost '${vhost}'`);
    const bindings = core.routing
      .bindings(vhost!)
      .filter((b) => b.destination_type === 'queue' && b.destination === queue.name);
    return { status: 200, body: { vhost, ...queue_row(core, queue), bindings } };
  });
  router.add('GET', '/api/v1/amqp/bindings', (request, { core }) => ({
    status: 200,
    body: { bindings: per_vhost(vhosts_of(request.query, amqp), (v) => core.routing.bindings(v)) },
  }));
  router.add('GET', '/api/v1/amqp/connections', () => ({
    status: 200,
    body: { connections: amqp?.connections() ?? [] },
  }));
}
