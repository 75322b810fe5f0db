// Quota entities and alterations as AlterClientQuotas and DescribeClientQuotas carry them.
import {
  is_quota_entity_type,
  is_quota_key,
  QUOTA_ENTITY_TYPES,
  type QuotaEntity,
  type QuotaKey,
  type QuotaValues,
} from '../../core/index.ts';

export interface WireEntity {
  entity_type: string;
  entity_name: string | null;
}

/** Thrown for a part of a request that cannot be a quota: answered INVALID_REQUEST. */
export class QuotaWireError extends Error {}

export function entity_of(wire: readonly WireEntity[]): QuotaEntity {
  const entity: QuotaEntity = {};
  for (const { entity_type, entity_name } of wire) {
    if (!is_quota_entity_type(entity_type))
      throw new QuotaWireError(`unknown entity type ${JSON.stringify(entity_type)}`);
    if (entity_type in entity) throw new QuotaWireError(`entity type ${entity_type} named twice`);
    entity[entity_type] = entity_name;
  }
  return entity;
}

export function entity_to_wire(entity: QuotaEntity): WireEntity[] {
  return QUOTA_ENTITY_TYPES.filter((type) => type in entity).map((type) => ({
    entity_type: type,
    entity_name: entity[type] ?? null,
  }));
}

export function changes_of(ops: ReadonlyArray<{ key: string; value: number; remove: boolean }>): {
  set: QuotaValues;
  remove: QuotaKey[];
} {
  const set: QuotaValues = {};
  const remove: QuotaKey[] = [];
  for (const op of ops) {
    if (!is_quota_key(op.key)) throw new QuotaWireError(`unknown quota ${JSON.stringify(op.key)}`);
    if (op.remove) remove.push(op.key);
    else set[op.key] = op.value;
  }
  return { set, remove };
}
