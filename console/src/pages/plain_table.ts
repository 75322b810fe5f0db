// A table for records whose fields the console does not know in advance (group members, a
// queue's details): one column per field, nested values shown compactly.
import { h, table } from '../dom.ts';

function label(field: string): string {
  const words = field.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

export function compact(value: unknown): string {
  if (value === null || value === undefined) return '–';
  if (typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return value.map(compact).join(', ');
  return Object.entries(value)
    .map(([k, v]) => `${k}: ${compact(v)}`)
    .join('; ');
}

export function plain_table(
  rows: Array<Record<string, unknown>>,
  options: { testid: string; empty: string },
): HTMLElement {
  const fields = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  return table(
    fields.map((field) => ({
      title: label(field),
      cell: (row: Record<string, unknown>) =>
        h('span', { class: typeof row[field] === 'object' ? 'mono small' : null }, compact(row[field])),
      numeric: rows.every((row) => typeof row[field] === 'number'),
    })),
    rows,
    options,
  );
}
