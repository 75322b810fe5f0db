// The core's QuotasApi: quotas checked and kept in the metadata store, and each client's use
// measured against the quota that applies to it. Which quota applies follows Kafka's order, most
// specific first, for each key on its own: user and client id, user and default client id, user,
// default user and client id, default user and default client id, default user, client id,
// default client id. A default applies to each user (or client id) separately.
import { BrokerError } from '../../core/errors.ts';
import type { MetadataStore } from '../../core/metadata_store.ts';
import {
  QUOTA_ENTITY_TYPES,
  quota_entity_key,
  type ClientQuota,
  type QuotaClient,
  type QuotaEntity,
  type QuotaFilter,
  type QuotaKey,
  type QuotaValues,
  type QuotasApi,
} from '../../core/quotas.ts';
import { QUOTA_BUCKETS_MAX, RateBuckets } from './rate_buckets.ts';

/** Entities with quotas kept at most. */
export const QUOTA_ENTITIES_MAX = 10_000;

type Level = { user?: 'named' | 'default'; 'client-id'?: 'named' | 'default' };

/** Kafka's order of precedence: the first level whose entity sets a key gives that key's quota. */
const PRECEDENCE: readonly Level[] = [
  { user: 'named', 'client-id': 'named' },
  { user: 'named', 'client-id': 'default' },
  { user: 'named' },
  { user: 'default', 'client-id': 'named' },
  { user: 'default', 'client-id': 'default' },
  { user: 'default' },
  { 'client-id': 'named' },
  { 'client-id': 'default' },
];

/** Why `value` cannot be the quota `key`, or null. */
export function quota_value_problem(key: QuotaKey, value: number): string | null {
  if (!Number.isFinite(value) || value <= 0) return `${key} must be a positive number, not ${value}`;
  if (key !== 'request_percentage' && !Number.isInteger(value)) return `${key} must be a whole number of bytes`;
  return null;
}

export function quota_entity_problem(entity: QuotaEntity): string | null {
  const types = Object.keys(entity);
  if (types.length === 0) return 'the entity names no type';
  const unknown = types.find((type) => !(QUOTA_ENTITY_TYPES as readonly string[]).includes(type));
  if (unknown !== undefined) return `unknown entity type ${JSON.stringify(unknown)}`;
  if (entity.user === '') return 'a user name cannot be empty';
  return null;
}

export function filter_matches(filter: QuotaFilter, entity: QuotaEntity): boolean {
  for (const { entity_type, match } of filter.components) {
    if (!(entity_type in entity)) return false;
    const name = entity[entity_type];
    if (match === 'default' ? name !== null : match === 'any' ? name === null : name !== match.name) return false;
  }
  return !filter.strict || Object.keys(entity).length === filter.components.length;
}

export class Quotas implements QuotasApi {
  private readonly buckets: RateBuckets;
  private loaded: readonly ClientQuota[] | null = null;
  private by_entity = new Map<string, QuotaValues>();
  /** What quota_of answered for each client and key, until the quotas change. */
  private resolved = new Map<string, Applied | null>();

  private readonly exempt: ReadonlySet<string>;

  constructor(
    private readonly store: MetadataStore,
    exempt_users: readonly string[],
    now_ms: () => number,
  ) {
    this.buckets = new RateBuckets(now_ms);
    this.exempt = new Set(exempt_users);
  }

  get active(): boolean {
    return this.store.client_quotas().length > 0;
  }

  list(filter: QuotaFilter): ClientQuota[] {
    return this.store.client_quotas().filter((quota) => filter_matches(filter, quota.entity));
  }

  async alter(entity: QuotaEntity, set: QuotaValues, remove: readonly QuotaKey[], validate_only: boolean) {
    const problem =
      quota_entity_problem(entity) ??
      Object.entries(set)
        .map(([key, value]) => quota_value_problem(key as QuotaKey, value))
        .find((found) => found !== null) ??
      null;
    if (problem !== null) throw new BrokerError('invalid_request', problem);
    const key = quota_entity_key(entity);
    const current = this.store.client_quotas();
    const before = current.find((quota) => quota_entity_key(quota.entity) === key);
    if (before === undefined && current.length >= QUOTA_ENTITIES_MAX)
      throw new BrokerError('policy_violation', `at most ${QUOTA_ENTITIES_MAX} entities have quotas`);
    const values: QuotaValues = { ...before?.values, ...set };
    for (const gone of remove) delete values[gone];
    if (validate_only) return;
    await this.store.set_client_quota(entity, Object.keys(values).length > 0 ? values : null);
  }

  record(client: QuotaClient, key: QuotaKey, amount: number): number {
    const by_entity = this.entities();
    const client_key = `${key}\n${client.user}\n${client.client_id}`;
    let found = this.resolved.get(client_key);
    if (found === undefined) {
      if (this.resolved.size >= QUOTA_BUCKETS_MAX) this.resolved.clear();
      found = this.exempt.has(client.user) ? null : quota_of(by_entity, client, key);
      this.resolved.set(client_key, found);
    }
    if (found === null) return 0;
    return this.buckets.take(`${key}\n${found.measured}`, rate_per_s(key, found.value), amount);
  }

  private entities(): Map<string, QuotaValues> {
    const current = this.store.client_quotas();
    if (current !== this.loaded) {
      this.by_entity = new Map(current.map((quota) => [quota_entity_key(quota.entity), quota.values]));
      this.resolved = new Map();
      this.loaded = current;
    }
    return this.by_entity;
  }
}

/** A quota that applies to a client, and the entity its use is measured as. */
interface Applied {
  value: number;
  measured: string;
}

/** The quota on `key` that applies to the client. */
function quota_of(by_entity: Map<string, QuotaValues>, client: QuotaClient, key: QuotaKey): Applied | null {
  for (const level of PRECEDENCE) {
    const entity: QuotaEntity = {};
    const measured: QuotaEntity = {};
    if (level.user) {
      entity.user = level.user === 'named' ? client.user : null;
      measured.user = client.user;
    }
    if (level['client-id']) {
      entity['client-id'] = level['client-id'] === 'named' ? client.client_id : null;
      measured['client-id'] = client.client_id;
    }
    const value = by_entity.get(quota_entity_key(entity))?.[key];
    if (value !== undefined) return { value, measured: quota_entity_key(measured) };
  }
  return null;
}

/** Byte rates are bytes per second; request_percentage is milliseconds of request time per second. */
function rate_per_s(key: QuotaKey, value: number): number {
  return key === 'request_percentage' ? value * 10 : value;
}
