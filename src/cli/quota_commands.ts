// `sluice quota set|remove|list`: client quotas through the SDK's admin (AlterClientQuotas,
// DescribeClientQuotas). The entity is --user and/or --client-id, or their defaults.
import type { ClientQuotaEntity, ClientQuotaEntry, ClientQuotaFilterComponent, ClientQuotaKey } from '../sdk/index.ts';
import { print, with_admin, type ClientFlags } from './client_support.ts';

export interface QuotaFlags extends ClientFlags {
  user?: string;
  defaultUser?: boolean;
  clientId?: string;
  defaultClientId?: boolean;
  producerByteRate?: string;
  consumerByteRate?: string;
  requestPercentage?: string;
}

const KEYS: ReadonlyArray<[ClientQuotaKey, 'producerByteRate' | 'consumerByteRate' | 'requestPercentage']> = [
  ['producer_byte_rate', 'producerByteRate'],
  ['consumer_byte_rate', 'consumerByteRate'],
  ['request_percentage', 'requestPercentage'],
];

function entity_of(flags: QuotaFlags): ClientQuotaEntity {
  if (flags.user !== undefined && flags.defaultUser) throw new Error('--user and --default-user: one or the other');
  if (flags.clientId !== undefined && flags.defaultClientId)
    throw new Error('--client-id and --default-client-id: one or the other');
  const entity: ClientQuotaEntity = {};
  if (flags.user !== undefined || flags.defaultUser) entity.user = flags.user ?? null;
  if (flags.clientId !== undefined || flags.defaultClientId) entity.clientId = flags.clientId ?? null;
  if (Object.keys(entity).length === 0)
    throw new Error('name the entity: --user, --default-user, --client-id or --default-client-id');
  return entity;
}

function values_of(flags: QuotaFlags): Partial<Record<ClientQuotaKey, number>> {
  const values: Partial<Record<ClientQuotaKey, number>> = {};
  for (const [key, flag] of KEYS) {
    const text = flags[flag];
    if (text === undefined) continue;
    const value = Number(text);
    if (text.trim() === '' || !Number.isFinite(value))
      throw new Error(`--${key.replaceAll('_', '-')}: not a number: ${text}`);
    values[key] = value;
  }
  return values;
}

export function describe_entity(entity: ClientQuotaEntity): string {
  const parts = [];
  if (entity.user !== undefined) parts.push(`user=${entity.user ?? '<default>'}`);
  if (entity.clientId !== undefined) parts.push(`client-id=${entity.clientId ?? '<default>'}`);
  return parts.join(',');
}

export async function quota_set(flags: QuotaFlags): Promise<void> {
  const entity = entity_of(flags);
  const set = values_of(flags);
  if (Object.keys(set).length === 0)
    throw new Error('give a quota: --producer-byte-rate, --consumer-byte-rate or --request-percentage');
  await with_admin(flags, (admin) => admin.alterClientQuotas([{ entity, set }]));
  print(flags, { entity, set }, () => `${describe_entity(entity)}: ${JSON.stringify(set)}`);
}

/** Removes the quotas flagged (any value), or all of the entity's when none is. */
export async function quota_remove(flags: QuotaFlags): Promise<void> {
  const entity = entity_of(flags);
  const named = KEYS.filter(([, flag]) => flags[flag] !== undefined).map(([key]) => key);
  const remove = named.length > 0 ? named : KEYS.map(([key]) => key);
  await with_admin(flags, (admin) => admin.alterClientQuotas([{ entity, remove }]));
  print(flags, { entity, removed: remove }, () => `${describe_entity(entity)}: removed ${remove.join(', ')}`);
}

export async function quota_list(flags: QuotaFlags): Promise<void> {
  const components: ClientQuotaFilterComponent[] = [];
  if (flags.user !== undefined || flags.defaultUser)
    components.push({ entityType: 'user', name: flags.user, default: flags.defaultUser });
  if (flags.clientId !== undefined || flags.defaultClientId)
    components.push({ entityType: 'client-id', name: flags.clientId, default: flags.defaultClientId });
  const entries: ClientQuotaEntry[] = await with_admin(flags, (admin) => admin.describeClientQuotas({ components }));
  print(flags, entries, () =>
    entries.length === 0
      ? 'no quotas'
      : entries
          .map(
            (entry) =>
              `${describe_entity(entry.entity)}\t${Object.entries(entry.values)
                .map(([k, v]) => `${k}=${v}`)
                .join(' ')}`,
          )
          .join('\n'),
  );
}
