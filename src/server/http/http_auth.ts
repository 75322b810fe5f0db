// Who may use the HTTP listener. With users (`--sasl-users`) every request but the health checks
// logs in with HTTP Basic (the same users and passwords as Kafka and AMQP; over TLS, so the password
// is never in the clear on a network); a failed login is 401 with a challenge, so a browser asks,
// and an address failing too many is told to wait (429; basic_logins.ts).
// With `--authorization` each API route also needs what the ACLs grant, as the Kafka API it
// mirrors would (ROUTE_NEEDS), and every change is written to the log as an audit line.
import type { IncomingMessage } from 'node:http';
import {
  ANONYMOUS,
  CLUSTER_RESOURCE,
  user_principal,
  type AclOperation,
  type AclResourceType,
  type Core,
  type Logger,
  type Requester,
} from '../../core/index.ts';
import { HttpError } from './http_errors.ts';
import type { BasicLogins } from './basic_logins.ts';

/** Paths any client may read: load balancers and orchestrators probe them without a login. */
export const OPEN_PATHS: ReadonlySet<string> = new Set(['/healthz', '/readyz']);
const REALM = 'Basic realm="sluice", charset="UTF-8"';

/** The principal of a request: its Basic login, checked; ANONYMOUS when the listener has no users. */
export async function http_requester(request: IncomingMessage, logins: BasicLogins | null): Promise<Requester> {
  const host = request.socket.remoteAddress ?? '';
  if (!logins) return { principal: ANONYMOUS, host };
  const login = await logins.check(request.headers.authorization ?? '', host);
  if ('user' in login) return { principal: user_principal(login.user), host };
  if (login.refused === 'wait')
    throw new HttpError(429, 'too_many_logins', 'too many failed logins from this address: wait', null, {
      'retry-after': String(login.retry_after_s),
    });
  throw new HttpError(401, 'unauthorized', 'log in with HTTP Basic as a user of the broker', null, {
    'www-authenticate': REALM,
  });
}

interface Need {
  operation: AclOperation;
  type: AclResourceType;
  /** The route parameter naming the resource; absent: the cluster. */
  param?: string;
}

const on_cluster = (operation: AclOperation): Need => ({ operation, type: 'cluster' });
const on_topic = (operation: AclOperation, param = 'name'): Need => ({ operation, type: 'topic', param });
const on_group = (operation: AclOperation, param: string): Need => ({ operation, type: 'group', param });

/**
 * What each route needs when authorization is on. Listings and overviews take DESCRIBE on the
 * cluster; a change takes what the Kafka request doing it takes (a redrive, ALTER on the cluster).
 */
export const ROUTE_NEEDS: Readonly<Record<string, Need>> = {
  'GET /api/v1/cluster': on_cluster('describe'),
  'GET /api/v1/stats': on_cluster('describe'),
  'GET /api/v1/topics': on_cluster('describe'),
  'POST /api/v1/topics': on_cluster('create'),
  'GET /api/v1/topics/:name': on_topic('describe'),
  'DELETE /api/v1/topics/:name': on_topic('delete'),
  'PATCH /api/v1/topics/:name/configs': on_topic('alter_configs'),
  'GET /api/v1/topics/:name/partitions/:partition/messages': on_topic('read'),
  'GET /api/v1/groups': on_cluster('describe'),
  'GET /api/v1/groups/:id': on_group('describe', 'id'),
  'POST /api/v1/groups/:id/offsets/reset': on_group('read', 'id'),
  'GET /api/v1/queues': on_cluster('describe'),
  'GET /api/v1/queues/:group': on_group('describe', 'group'),
  'GET /api/v1/dead-letters': on_cluster('describe'),
  'GET /api/v1/dead-letters/:topic/messages': on_topic('read', 'topic'),
  'POST /api/v1/dead-letters/:topic/redrive': on_cluster('alter'),
  'GET /api/v1/delayed': on_cluster('describe'),
  'GET /api/v1/amqp/vhosts': on_cluster('describe'),
  'GET /api/v1/amqp/exchanges': on_cluster('describe'),
  'GET /api/v1/amqp/queues': on_cluster('describe'),
  'GET /api/v1/amqp/queues/:name': on_cluster('describe'),
  'GET /api/v1/amqp/bindings': on_cluster('describe'),
  'GET /api/v1/amqp/connections': on_cluster('describe'),
  'GET /api/v1/acls': on_cluster('describe'),
  'POST /api/v1/acls': on_cluster('alter'),
  'DELETE /api/v1/acls': on_cluster('alter'),
  'GET /api/v1/users': on_cluster('describe'),
  'GET /api/v1/quotas': on_cluster('describe_configs'),
  'PUT /api/v1/quotas': on_cluster('alter_configs'),
};

/** Throws 403 unless the ACLs let `who` call the route (`route`: "METHOD pattern"). */
export function authorize_route(core: Core, who: Requester, route: string, params: Record<string, string>): void {
  if (!core.acls.enabled) return;
  const need = ROUTE_NEEDS[route];
  if (!need) throw new HttpError(403, 'forbidden', `${route} has no authorization rule`);
  const name = need.param === undefined ? CLUSTER_RESOURCE : (params[need.param] ?? '');
  if (!core.acls.authorize(who, need.operation, need.type, name))
    throw new HttpError(403, 'forbidden', `${who.principal} may not ${need.operation} ${need.type} ${name}`);
}

/** Every change through the API, whoever made it and how it ended. */
export function audit(logger: Logger, who: Requester, method: string, path: string, status: number): void {
  if (method === 'GET' || method === 'HEAD') return;
  logger.info({ audit: true, principal: who.principal, client: who.host, method, path, status }, 'admin API change');
}
