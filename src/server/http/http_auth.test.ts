// Every route of the admin API has an authorization rule (a new route without one fails here, and
// with authorization on it would be refused to everyone but super users).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api_router } from './server.ts';
import { ROUTE_NEEDS } from './http_auth.ts';

test('every API route has an authorization rule, and every rule a route', () => {
  const routes = api_router(null).names.sort();
  assert.deepEqual(routes, Object.keys(ROUTE_NEEDS).sort());
});
