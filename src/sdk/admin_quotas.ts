// Admin: client quotas (AlterClientQuotas, DescribeClientQuotas), in the shape of Kafka's Java
// admin client, which kafkajs lacks. An entity names a user, a client id or both; null names the
// default of that type. Quota keys keep Kafka's names (producer_byte_rate, consumer_byte_rate,
// request_percentage).
import { ALTER_CLIENT_QUOTAS } from '../protocol/kafka/messages/49_alter_client_quotas.ts';
import { DESCRIBE_CLIENT_QUOTAS } from '../protocol/kafka/messages/48_describe_client_quotas.ts';
import { check_code } from './errors.ts';
import { invalid, type AdminRequests } from './admin_requests.ts';

export type ClientQuotaKey = 'producer_byte_rate' | 'consumer_byte_rate' | 'request_percentage';

/** A user, a client id or both; null stands for the default entity of that type. */
export interface ClientQuotaEntity {
  user?: string | null;
  clientId?: string | null;
}

export interface ClientQuotaAlteration {
  entity: ClientQuotaEntity;
  set?: Partial<Record<ClientQuotaKey, number>>;
  remove?: ClientQuotaKey[];
}

/** One filter component: `name` matches that name, `default: true` the default entity, neither any name. */
export interface ClientQuotaFilterComponent {
  entityType: 'user' | 'client-id';
  name?: string;
  default?: boolean;
}

export interface ClientQuotaEntry {
  entity: ClientQuotaEntity;
  values: Partial<Record<ClientQuotaKey, number>>;
}

const VERSIONS = { min: 0, max: 1 } as const;

function entity_to_wire(entity: ClientQuotaEntity): Array<{ entity_type: string; entity_name: string | null }> {
  const wire = [];
  if (entity.user !== undefined) wire.push({ entity_type: 'user', entity_name: entity.user });
  if (entity.clientId !== undefined) wire.push({ entity_type: 'client-id', entity_name: entity.clientId });
  return wire;
}

function entity_of(wire: ReadonlyArray<{ entity_type: string; entity_name: string | null }>): ClientQuotaEntity {
  const entity: ClientQuotaEntity = {};
  for (const { entity_type, entity_name } of wire) {
    if (entity_type === 'user') entity.user = entity_name;
    else if (entity_type === 'client-id') entity.clientId = entity_name;
  }
  return entity;
}

/** Sets and removes quotas; throws the first entity refused (the others may have changed). */
export async function alter_client_quotas(
  admin: AdminRequests,
  alterations: ClientQuotaAlteration[],
  options: { validateOnly?: boolean } = {},
): Promise<void> {
  if (!Array.isArray(alterations) || alterations.length === 0)
    throw invalid('alterClientQuotas: alterations must be a non-empty array');
  const entries = alterations.map(({ entity, set = {}, remove = [] }) => ({
    entity: entity_to_wire(entity ?? {}),
    ops: [
      ...Object.entries(set).map(([key, value]) => ({ key, value, remove: false })),
      ...remove.map((key) => ({ key, value: 0, remove: true })),
    ],
  }));
  const { response } = await admin.cluster.with_retry('AlterClientQuotas', async () =>
    (await admin.cluster.any()).send(ALTER_CLIENT_QUOTAS, VERSIONS.min, VERSIONS.max, {
      entries,
      validate_only: options.validateOnly ?? false,
    }),
  );
  for (const entry of response.entries)
    check_code(entry.error_code, `alterClientQuotas ${JSON.stringify(entity_of(entry.entity))}`, entry.error_message);
}

/** The quotas of the entities the filter matches (no components: every entity). */
export async function describe_client_quotas(
  admin: AdminRequests,
  filter: { components?: ClientQuotaFilterComponent[]; strict?: boolean } = {},
): Promise<ClientQuotaEntry[]> {
  const components = (filter.components ?? []).map((component) => ({
    entity_type: component.entityType,
    match_type: component.name !== undefined ? 0 : component.default ? 1 : 2,
    match: component.name ?? null,
  }));
  const { response } = await admin.cluster.with_retry('DescribeClientQuotas', async () =>
    (await admin.cluster.any()).send(DESCRIBE_CLIENT_QUOTAS, VERSIONS.min, VERSIONS.max, {
      components,
      strict: filter.strict ?? false,
    }),
  );
  check_code(response.error_code, 'describeClientQuotas', response.error_message);
  return (response.entries ?? []).map((entry) => ({
    entity: entity_of(entry.entity),
    values: Object.fromEntries(entry.values.map(({ key, value }) => [key, value])),
  }));
}
