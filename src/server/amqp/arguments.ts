// AMQP field tables as routing keeps them: declare and binding arguments, and message headers for
// headers exchanges. Routing compares strings, numbers and booleans; byte strings compare as text,
// and nested tables, arrays and decimals are kept as their JSON text.
import type { RoutingArgs, RoutingArgValue } from '../../core/index.ts';
import type { FieldTable, FieldValue } from '../../protocol/amqp/field_table.ts';

function arg_value(value: FieldValue): RoutingArgValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (value instanceof Date) return value.getTime();
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? Number(v) : v));
}

export function routing_args(table: FieldTable | undefined): RoutingArgs {
  const args: RoutingArgs = {};
  for (const [name, value] of Object.entries(table ?? {})) args[name] = arg_value(value);
  return args;
}

/** Message headers for a headers exchange; null when the message has none. */
export function routing_headers(table: FieldTable | undefined): RoutingArgs | null {
  return table ? routing_args(table) : null;
}

/** Routing arguments back as a field table (for answers that show them). */
export function field_table_of(args: RoutingArgs): FieldTable {
  return { ...args };
}
