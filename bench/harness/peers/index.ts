// Entry point for the orchestrator: every peer system, or an Unavailable saying why it cannot run.
// Checking availability may install a missing server package (apt-get, when running as root).
import type { SystemUnderTest, Unavailable } from '../types.ts';
import { is_unavailable } from './adapter.ts';
import { nats_systems } from './nats.ts';
import { rabbitmq_systems } from './rabbitmq.ts';
import { redis_systems } from './redis.ts';

export { is_unavailable } from './adapter.ts';
export { NatsSystem, nats_systems } from './nats.ts';
export { RabbitMQSystem, rabbitmq_systems } from './rabbitmq.ts';
export { RedisSystem, redis_systems } from './redis.ts';

/** Peer system ids, in report order. */
export const PEER_IDS = [
  'rabbitmq-quorum',
  'rabbitmq-classic',
  'nats-jetstream',
  'redis-always',
  'redis-everysec',
] as const;

/**
 * All peer systems (optionally only those whose id is in `only`), each either ready to start or an
 * Unavailable with the reason. Never throws for a missing broker.
 */
export async function peer_systems(only?: readonly string[]): Promise<Array<SystemUnderTest | Unavailable>> {
  const wanted = (id: string) => !only || only.includes(id);
  const out: Array<SystemUnderTest | Unavailable> = [];
  const groups: Array<[readonly string[], () => Promise<Array<SystemUnderTest | Unavailable>>]> = [
    [['rabbitmq-quorum', 'rabbitmq-classic'], rabbitmq_systems],
    [['nats-jetstream'], nats_systems],
    [['redis-always', 'redis-everysec'], redis_systems],
  ];
  for (const [ids, make] of groups) {
    if (!ids.some(wanted)) continue;
    try {
      for (const system of await make()) if (wanted(system.id)) out.push(system);
    } catch (error) {
      for (const id of ids.filter(wanted))
        out.push({
          id,
          label: id,
          reason: `availability check failed: ${error instanceof Error ? error.message : String(error)}`,
        });
    }
  }
  return out;
}

export function split_available(systems: Array<SystemUnderTest | Unavailable>): {
  available: SystemUnderTest[];
  unavailable: Unavailable[];
} {
  const available: SystemUnderTest[] = [];
  const missing: Unavailable[] = [];
  for (const system of systems) {
    if (is_unavailable(system)) missing.push(system);
    else available.push(system);
  }
  return { available, unavailable: missing };
}
