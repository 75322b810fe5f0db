// Query and body checks shared by the API handlers, each naming the field that is wrong, and
// paging: listings take offset and limit (capped), and build their items in slices with a yield
// to the event loop between slices so a large page never stalls produce and fetch.
import { HttpError, invalid_body, invalid_query } from './http_errors.ts';

export const LIST_LIMIT_DEFAULT = 100;
export const LIST_LIMIT_MAX = 1000;
/** Items built between two yields to the event loop. */
export const ITEMS_PER_YIELD = 200;

/**
 * The URL of a request target. Node's parser passes on targets no URL parser takes (`//[`, a bad
 * host after `//`): those are the client's error, answered 400, not a TypeError of ours.
 */
export function request_url(target: string): URL {
  try {
    return new URL(target, 'http://localhost');
  } catch {
    throw new HttpError(400, 'invalid_url', `the request target ${JSON.stringify(target.slice(0, 200))} is not a URL`);
  }
}

export function query_int(
  query: URLSearchParams,
  name: string,
  fallback: number,
  min: number,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const text = query.get(name);
  if (text === null || text === '') return fallback;
  if (!/^-?\d+$/.test(text) || !Number.isSafeInteger(Number(text)) || Number(text) < min || Number(text) > max) {
    throw invalid_query(
      name,
      `${name} must be an integer from ${min}${max === Number.MAX_SAFE_INTEGER ? '' : ` to ${max}`}, got ` +
        `${JSON.stringify(text)}`,
    );
  }
  return Number(text);
}

export function query_bool(query: URLSearchParams, name: string, fallback: boolean): boolean {
  const text = query.get(name);
  if (text === null || text === '') return fallback;
  if (text === 'true' || text === '1') return true;
  if (text === 'false' || text === '0') return false;
  throw invalid_query(name, `${name} must be true or false, got ${JSON.stringify(text)}`);
}

export interface Paging {
  offset: number;
  limit: number;
}

/** offset and limit from the query; a limit above `limit_max` is lowered to it. */
export function paging_of(
  query: URLSearchParams,
  limit_default = LIST_LIMIT_DEFAULT,
  limit_max = LIST_LIMIT_MAX,
): Paging {
  const offset = query_int(query, 'offset', 0, 0);
  const limit = Math.min(query_int(query, 'limit', limit_default, 1), limit_max);
  return { offset, limit };
}

/** One page of a sorted listing, its items built by `build` with yields in between. */
export async function page_of<T, R>(
  all: readonly T[],
  paging: Paging,
  build: (item: T) => R | Promise<R>,
): Promise<{ items: R[]; total: number; offset: number; limit: number }> {
  const slice = all.slice(paging.offset, paging.offset + paging.limit);
  return { items: await map_yielding(slice, build), total: all.length, offset: paging.offset, limit: paging.limit };
}

export async function map_yielding<T, R>(items: readonly T[], build: (item: T) => R | Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && i % ITEMS_PER_YIELD === 0) await yield_to_event_loop();
    out.push(await build(items[i]!));
  }
  return out;
}

export function yield_to_event_loop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function compare_text(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// ------------------------------------------------------------------ bodies

export type JsonObject = Record<string, unknown>;

/** Longest excerpt of a request value an error message quotes. */
const EXCERPT_CHARS_MAX = 100;

/**
 * A value of the request as JSON for an error message: cut short, and never itself an error
 * (JSON.stringify overflows the stack on a value nested some thousands deep, which a body may be).
 */
export function json_excerpt(value: unknown): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    return '(a value nested too deeply to show)';
  }
  return text.length > EXCERPT_CHARS_MAX ? `${text.slice(0, EXCERPT_CHARS_MAX)}...` : text;
}

export function body_object(body: unknown): JsonObject {
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw invalid_body(null, 'the body must be a JSON object');
  return body as JsonObject;
}

export function required_string(body: JsonObject, field: string): string {
  const value = body[field];
  if (typeof value !== 'string' || value === '') throw invalid_body(field, `${field} must be a non-empty string`);
  return value;
}

export function optional_int(body: JsonObject, field: string, min: number, max: number): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw invalid_body(field, `${field} must be an integer from ${min} to ${max}`);
  return value;
}

/** A flat {name: value} object; numbers and booleans are taken as their text (configs are strings). */
export function string_map(value: unknown, field: string): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw invalid_body(field, `${field} must be an object of names to values`);
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value as JsonObject)) {
    if (typeof v === 'string') out[name] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') out[name] = String(v);
    else throw invalid_body(`${field}.${name}`, `${field}.${name} must be a string, number or boolean`);
  }
  return out;
}
