// Client quotas as the core offers them to front ends: byte rates and a share of request time per
// user and client id (Kafka's entities and keys), kept in the metadata store so every broker of a
// cluster enforces the same ones. Each broker measures and throttles its own traffic, as Kafka's do.

export const QUOTA_KEYS = ['producer_byte_rate', 'consumer_byte_rate', 'request_percentage'] as const;
export type QuotaKey = (typeof QUOTA_KEYS)[number];

/** Kafka's entity types a quota can name. */
export const QUOTA_ENTITY_TYPES = ['user', 'client-id'] as const;
export type QuotaEntityType = (typeof QUOTA_ENTITY_TYPES)[number];

/**
 * Who a quota applies to: for each entity type a name, or null for that type's default (every
 * user, or every client id, without a quota of its own, each measured on its own). A type left
 * out is not part of the entity: `{ user: 'alice' }` covers all of alice's client ids together.
 */
export type QuotaEntity = Partial<Record<QuotaEntityType, string | null>>;

export type QuotaValues = Partial<Record<QuotaKey, number>>;

export interface ClientQuota {
  entity: QuotaEntity;
  values: QuotaValues;
}

/** One component of a DescribeClientQuotas filter. */
export interface QuotaFilterComponent {
  entity_type: QuotaEntityType;
  /** A name: that name only; 'default': the default entity; 'any': any name (not the default). */
  match: { name: string } | 'default' | 'any';
}

export interface QuotaFilter {
  components: QuotaFilterComponent[];
  /** Strict: entities naming other types too are left out. */
  strict: boolean;
}

/** The client a request comes from, as quotas see it. */
export interface QuotaClient {
  /** The principal's name (the SASL user or certificate subject; ANONYMOUS without either). */
  user: string;
  client_id: string;
}

export interface QuotasApi {
  /** False while no quota is set: front ends then skip measuring altogether. */
  readonly active: boolean;
  list(filter: QuotaFilter): ClientQuota[];
  /** Sets `set` and removes `remove` on the entity; an entity left with no value is gone. */
  alter(entity: QuotaEntity, set: QuotaValues, remove: readonly QuotaKey[], validate_only: boolean): Promise<void>;
  /**
   * Counts `amount` (bytes, or milliseconds of request time) against the client's quota for `key`
   * and answers how long to throttle it (0 within its quota).
   */
  record(client: QuotaClient, key: QuotaKey, amount: number): number;
}

/** One string per entity, the same for equal entities (types in a fixed order, defaults marked). */
export function quota_entity_key(entity: QuotaEntity): string {
  return JSON.stringify(QUOTA_ENTITY_TYPES.filter((type) => type in entity).map((type) => [type, entity[type]]));
}

export function is_quota_key(key: string): key is QuotaKey {
  return (QUOTA_KEYS as readonly string[]).includes(key);
}

export function is_quota_entity_type(type: string): type is QuotaEntityType {
  return (QUOTA_ENTITY_TYPES as readonly string[]).includes(type);
}
