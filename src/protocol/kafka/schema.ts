// The project's schema form for Kafka messages. Each API is declared once (messages/NN_name.ts) as
// a MessageSpec: its key, version range, first flexible version and fields with version gates,
// transcribed from Kafka's published message definitions (names in snake_case). codec.ts compiles
// a spec into an encoder and a decoder per version.

/** Version ranges as Kafka writes them: '3+', '0-4', '5', or 'none'. */
export type VersionRange = string;

export type PrimitiveType =
  | 'int8'
  | 'int16'
  | 'int32'
  | 'int64'
  | 'uint16'
  | 'uint32'
  | 'float64'
  | 'bool'
  | 'string'
  | 'bytes'
  /** Record batches: bytes on the wire, kept as a Buffer slice without copying. */
  | 'records'
  | 'uuid';

export type TypeSpec = PrimitiveType | { array: TypeSpec } | { struct: FieldSpec[] };

export interface FieldSpec {
  name: string;
  type: TypeSpec;
  /** Versions in which the field is present (for tagged fields: in which the tag may appear). */
  versions: VersionRange;
  nullable_versions?: VersionRange;
  /** A tagged field (flexible versions only): its tag number. */
  tag?: number;
  /** Value used when the field is absent in a version or missing from the object to encode. */
  default?: unknown;
}

export interface MessageSpec {
  name: string;
  api_key: number;
  type: 'request' | 'response' | 'header' | 'data';
  valid_versions: VersionRange;
  flexible_versions: VersionRange;
  fields: FieldSpec[];
}

export interface ApiSpec {
  api_key: number;
  name: string;
  request: MessageSpec;
  response: MessageSpec;
}

// ------------------------------------------------------------------ declaration helpers

type FieldOptions = Omit<FieldSpec, 'name' | 'type' | 'versions'>;

export function field(name: string, type: TypeSpec, versions: VersionRange, options: FieldOptions = {}): FieldSpec {
  return { name, type, versions, ...options };
}

export function array_of(type: TypeSpec): TypeSpec {
  return { array: type };
}

export function struct_array(...fields: FieldSpec[]): TypeSpec {
  return { array: { struct: fields } };
}

export function struct(...fields: FieldSpec[]): TypeSpec {
  return { struct: fields };
}

// ------------------------------------------------------------------ version ranges

export function parse_range(range: VersionRange): { low: number; high: number } | null {
  const text = range.trim();
  if (text === 'none') return null;
  if (text.endsWith('+')) return { low: Number(text.slice(0, -1)), high: Number.POSITIVE_INFINITY };
  const dash = text.indexOf('-');
  if (dash > 0) return { low: Number(text.slice(0, dash)), high: Number(text.slice(dash + 1)) };
  const single = Number(text);
  return { low: single, high: single };
}

export function in_range(range: VersionRange | undefined, version: number): boolean {
  if (range === undefined) return false;
  const parsed = parse_range(range);
  return parsed !== null && version >= parsed.low && version <= parsed.high;
}

export function version_bounds(spec: MessageSpec): { min: number; max: number } {
  const parsed = parse_range(spec.valid_versions);
  if (parsed === null || !Number.isFinite(parsed.high)) throw new Error(`${spec.name}: valid_versions must be a closed range`);
  return { min: parsed.low, max: parsed.high };
}
