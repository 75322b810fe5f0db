// The admin API's handling of request text, without a server: the input is a raw HTTP/1.1 request
// (request line, headers, blank line, body), split here the way Node's parser would hand it over.
// What runs is what server.ts and the routes run before they reach the broker core: the URL, the
// Basic login header, the router (with its percent-decoding), the query parameters, the JSON body
// and every route's body checks, and the error body sent for a refusal.
import type { IncomingMessage } from 'node:http';
import type { Credentials } from '../../src/core/index.ts';
import { PARTITIONS_MAX } from '../../src/core/index.ts';
import { redrive_selection } from '../../src/server/http/api_dead_letters.ts';
import { reset_target } from '../../src/server/http/api_groups.ts';
import { http_requester } from '../../src/server/http/http_auth.ts';
import { BasicLogins } from '../../src/server/http/basic_logins.ts';
import { HttpError, error_body, http_error_of } from '../../src/server/http/http_errors.ts';
import {
  body_object,
  optional_int,
  paging_of,
  query_bool,
  query_int,
  request_url,
  required_string,
  string_map,
} from '../../src/server/http/request_params.ts';
import { api_router } from '../../src/server/http/server.ts';
import type { FuzzTarget } from '../engine/target.ts';

const router = api_router(null);
/** Any password is right: the login header is parsed, and the request goes on as that user. */
const logins = new BasicLogins({ verify_password: async () => true, has: () => true } as unknown as Credentials);

interface RawRequest {
  method: string;
  target: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** The request line, headers and body; null where Node's parser would refuse the request. */
function split_request(input: Buffer): RawRequest | null {
  const head_end = input.indexOf('\r\n\r\n');
  const head = input.toString('latin1', 0, head_end < 0 ? input.length : head_end).split('\r\n');
  const [method, target, version] = head[0]!.split(' ');
  if (!method || !target || !version?.startsWith('HTTP/')) return null;
  if (/[\x00-\x20\x7f]/.test(target)) return null; // Node's parser refuses controls and spaces in the target
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { method, target, headers, body: head_end < 0 ? Buffer.alloc(0) : input.subarray(head_end + 4) };
}

/**
 * Runs `step`; a refusal (HttpError) is answered with its error body, as the server would. Returns
 * the refusal's code ('' when the step passed), so the outcome tells which checks refused.
 */
async function refused_or_done(step: () => unknown): Promise<string> {
  try {
    await step();
    return '';
  } catch (error) {
    if (!(error instanceof HttpError)) throw error;
    JSON.stringify(error_body(http_error_of(error)));
    return error.code;
  }
}

/** server.ts's read_json_body after the bytes are in: the content type, then JSON. */
function json_body(request: RawRequest): unknown {
  if (request.body.length === 0) return undefined;
  if (!/^application\/json\b/i.test(request.headers['content-type'] ?? ''))
    throw new HttpError(415, 'unsupported_media_type', 'send the body as JSON');
  try {
    return JSON.parse(request.body.toString('utf8')) as unknown;
  } catch (error) {
    throw new HttpError(400, 'invalid_body', `the body is not valid JSON: ${String(error)}`);
  }
}

/** Every route's checks of its body (each route runs some of them; all run here); the refusals' codes. */
async function body_checks(request: RawRequest): Promise<string[]> {
  const body = body_object(json_body(request));
  return [
    await refused_or_done(() => required_string(body, 'name')),
    await refused_or_done(() => optional_int(body, 'partitions', 1, PARTITIONS_MAX)),
    await refused_or_done(() => string_map(body.configs, 'configs')),
    await refused_or_done(() => string_map(body.set, 'set')),
    await refused_or_done(() => reset_target(body.to)),
    await refused_or_done(() => redrive_selection(body)),
  ];
}

/** Handles the request as far as the core; returns the route and the codes its checks refused with. */
async function handle(input: Buffer): Promise<string | void> {
  const request = split_request(input);
  if (request === null) return;
  const url = request_url(request.target);
  const fake = { headers: request.headers, socket: { remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage;
  const login = await refused_or_done(() => http_requester(fake, logins));
  const found = router.find(request.method === 'HEAD' ? 'GET' : request.method, url.pathname);
  const query = url.searchParams;
  const refusals = [
    login,
    await refused_or_done(() => paging_of(query)),
    await refused_or_done(() => query_bool(query, 'internal', false)),
    await refused_or_done(() => query_int(query, 'partition', 0, 0, 63)),
    await refused_or_done(() => query_int(query, 'limit', 50, 1, 500)),
    await refused_or_done(() => query_int(query, 'offset', 0, 0)),
  ];
  let body: string[] = [];
  const body_refused = await refused_or_done(async () => void (body = await body_checks(request)));
  const route = found === null ? 'none' : 'route' in found ? found.route : 'method not allowed';
  return `${route} ${[...new Set([...refusals, body_refused, ...body])].sort().join(',')}`;
}

export const target: FuzzTarget = {
  name: 'http_request',
  summary: 'URL, Basic login header, router, query parameters, JSON body and the routes body checks',
  run: handle,
  is_expected: (error) => error instanceof HttpError,
  max_bytes: 64 * 1024,
  dictionary: [
    '/api/v1/topics/',
    '/api/v1/groups/g/offsets/reset',
    '/api/v1/dead-letters/t/redrive',
    '?offset=',
    '&limit=',
    '%2F',
    '%',
    '//',
    'Authorization: Basic ',
    'Content-Type: application/json\r\n',
    '{"offsets":[{"partition":0,"offset":1}]}',
    '{"to":{"offset":1}}',
    '{"configs":{"a":1}}',
    '[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[', // nesting: printers and parsers that recurse
    '\\ud800',
  ].map((token) => Buffer.from(token, 'latin1')),
};
