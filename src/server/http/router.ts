// A small path router: patterns such as /api/v1/topics/:name, matched segment by segment after
// splitting (so an encoded '/' inside a group id stays inside its segment). A path that matches
// with another method is reported with the methods it allows (405).
import type { Core } from '../../core/index.ts';

export interface Reply {
  status: number;
  /** Sent as JSON; absent for 204. */
  body?: unknown;
}

/** What the API handlers may use: the broker core, and the Kafka listener's address and load. */
export interface ApiContext {
  core: Core;
  /** The Kafka listener's address as clients use it. */
  kafka_address(): { host: string; port: number };
  /** The Kafka listener whose addresses the API shows (the first). */
  kafka_listener_name(): string;
  /** Kafka client connections open now. */
  connections(): number;
}

export interface RouteRequest {
  params: Record<string, string>;
  query: URLSearchParams;
  /** The request body as parsed JSON (undefined when empty). */
  body(): Promise<unknown>;
}

export type RouteHandler = (request: RouteRequest, ctx: ApiContext) => Promise<Reply> | Reply;

interface Route {
  method: string;
  segments: string[];
  handler: RouteHandler;
  /** "METHOD /pattern", as the authorization rules name it. */
  name: string;
}

export type RouteMatch =
  { handler: RouteHandler; params: Record<string, string>; route: string } | { allowed: string[] } | null;

export class Router {
  private readonly routes: Route[] = [];

  add(method: string, pattern: string, handler: RouteHandler): this {
    this.routes.push({ method, segments: split(pattern), handler, name: `${method} ${pattern}` });
    return this;
  }

  /** Every route, "METHOD /pattern". */
  get names(): string[] {
    return this.routes.map((route) => route.name);
  }

  /** The handler for the request, the methods the path allows, or null when nothing matches. */
  find(method: string, path: string): RouteMatch {
    let segments: string[];
    try {
      segments = split(path).map((s) => decodeURIComponent(s));
    } catch {
      return null; // a malformed escape names nothing
    }
    const allowed: string[] = [];
    for (const route of this.routes) {
      const params = match(route.segments, segments);
      if (!params) continue;
      if (route.method === method) return { handler: route.handler, params, route: route.name };
      allowed.push(route.method);
    }
    return allowed.length > 0 ? { allowed } : null;
  }
}

function split(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

function match(pattern: string[], segments: string[]): Record<string, string> | null {
  if (pattern.length !== segments.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const expected = pattern[i]!;
    if (expected.startsWith(':')) params[expected.slice(1)] = segments[i]!;
    else if (expected !== segments[i]) return null;
  }
  return params;
}
