// Small helpers shared by the handlers.
import type { ApiSpec } from '../../../protocol/kafka/schema.ts';
import { version_bounds } from '../../../protocol/kafka/schema.ts';
import { kafka_error_code, error_message } from '../error_map.ts';

/** The advertised range: what the handler implements, within what the schema declares. */
export function versions(api: ApiSpec, min: number, max: number): { min_version: number; max_version: number } {
  const bounds = version_bounds(api.request);
  const response = version_bounds(api.response);
  return { min_version: Math.max(min, bounds.min, response.min), max_version: Math.min(max, bounds.max, response.max) };
}

export function error_fields(error: unknown): { error_code: number; error_message: string } {
  return { error_code: kafka_error_code(error), error_message: error_message(error) };
}

/** Runs `work` and turns a thrown error into its Kafka code (and message). */
export async function settle_code<T>(work: () => Promise<T> | T): Promise<{ value: T | null; error_code: number; error_message: string | null }> {
  try {
    return { value: await work(), error_code: 0, error_message: null };
  } catch (error) {
    return { value: null, error_code: kafka_error_code(error), error_message: error_message(error) };
  }
}

export type Row = Record<string, unknown>;

export function rows(value: unknown): Row[] {
  return (value as Row[] | null | undefined) ?? [];
}
