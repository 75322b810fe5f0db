// The fuzz targets by name. Each is loaded only when asked for, inside the fuzzing worker, after
// coverage has started: code compiled before that would be counted less finely.
import type { FuzzTarget } from '../engine/target.ts';

const LOADERS = {
  kafka_request: async () => (await import('./kafka_request.ts')).target,
  record_batch: async () => (await import('./record_batch.ts')).target,
  amqp_frame: async () => (await import('./amqp_frame.ts')).target,
  http_request: async () => (await import('./http_request.ts')).target,
} satisfies Record<string, () => Promise<FuzzTarget>>;

export type TargetName = keyof typeof LOADERS;

export const TARGET_NAMES = Object.keys(LOADERS) as TargetName[];

export function is_target_name(name: string): name is TargetName {
  return Object.hasOwn(LOADERS, name);
}

export function load_target(name: TargetName): Promise<FuzzTarget> {
  return LOADERS[name]();
}
