// The project's schema form for Kafka messages. Each API is declared once (messages/NN_name.ts) as
// an ApiSpec: its key, version range, first flexible version and fields with version gates,
// transcribed from Kafka's published message definitions (names in snake_case). codec.ts compiles
// a spec into an encoder and a decoder per version. The declarations keep their literal types, so
// the TypeScript types of decoded and encodable messages are inferred from them (RequestOf,
// ResponseOf, RequestIn, ResponseIn below): handlers, the SDK and followers read `req.topics`
// without casts, and a field renamed in a declaration is a compile error wherever it is used.

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

export type TypeSpec = PrimitiveType | { readonly array: TypeSpec } | { readonly struct: readonly FieldSpec[] };

export interface FieldSpec {
  readonly name: string;
  readonly type: TypeSpec;
  /** Versions in which the field is present (for tagged fields: in which the tag may appear). */
  readonly versions: VersionRange;
  readonly nullable_versions?: VersionRange;
  /** A tagged field (flexible versions only): its tag number. */
  readonly tag?: number;
  /** Value used when the field is absent in a version or missing from the object to encode. */
  readonly default?: unknown;
}

export interface MessageSpec {
  readonly name: string;
  readonly api_key: number;
  readonly type: 'request' | 'response' | 'header' | 'data';
  readonly valid_versions: VersionRange;
  readonly flexible_versions: VersionRange;
  readonly fields: readonly FieldSpec[];
}

export interface ApiSpec {
  readonly api_key: number;
  readonly name: string;
  readonly request: MessageSpec;
  readonly response: MessageSpec;
}

// ------------------------------------------------------------------ declaration helpers

type FieldOptions = Omit<FieldSpec, 'name' | 'type' | 'versions'>;

export function field<
  const N extends string,
  const T extends TypeSpec,
  const V extends VersionRange,
  const O extends FieldOptions = {},
>(
  name: N,
  type: T,
  versions: V,
  options?: O,
): { readonly name: N; readonly type: T; readonly versions: V } & NoInfer<O> {
  return { name, type, versions, ...(options as O) };
}

export function array_of<const T extends TypeSpec>(type: T): { readonly array: T } {
  return { array: type };
}

export function struct_array<const F extends readonly FieldSpec[]>(
  ...fields: F
): { readonly array: { readonly struct: F } } {
  return { array: { struct: fields } };
}

export function struct<const F extends readonly FieldSpec[]>(...fields: F): { readonly struct: F } {
  return { struct: fields };
}

/** Declares an API; keeps the literal types of its fields for the message types below. */
export function api_spec<const A extends ApiSpec>(spec: A): A {
  return spec;
}

// ------------------------------------------------------------------ message types

type NumberType = 'int8' | 'int16' | 'int32' | 'int64' | 'uint16' | 'uint32' | 'float64';

/** A decoded value of `T` (what a decoder returns). */
type Decoded<T extends TypeSpec> = T extends NumberType
  ? number
  : T extends 'bool'
    ? boolean
    : T extends 'string' | 'uuid'
      ? string
      : T extends 'bytes' | 'records'
        ? Buffer
        : T extends { readonly array: infer E extends TypeSpec }
          ? Decoded<E>[]
          : T extends { readonly struct: infer F extends readonly FieldSpec[] }
            ? DecodedStruct<F>
            : never;

/** A value of `T` an encoder accepts: record sets may also be a list of stored batches. */
type Encodable<T extends TypeSpec, Low extends string> = T extends NumberType
  ? number
  : T extends 'bool'
    ? boolean
    : T extends 'string' | 'uuid'
      ? string
      : T extends 'bytes'
        ? Buffer
        : T extends 'records'
          ? Buffer | readonly Buffer[]
          : T extends { readonly array: infer E extends TypeSpec }
            ? readonly Encodable<E, Low>[]
            : T extends { readonly struct: infer F extends readonly FieldSpec[] }
              ? EncodableStruct<F, Low>
              : never;

type Nullable<F extends FieldSpec, V> = F extends { readonly nullable_versions: string } ? V | null : V;

/** Untyped: what a spec known only as `ApiSpec` (not its declaration) decodes to and encodes from. */
export type AnyMessage = Record<string, unknown>;

/** Every field is present once decoded: fields absent in a version carry their default. */
export type DecodedStruct<F extends readonly FieldSpec[]> = string extends F[number]['name']
  ? AnyMessage
  : { [K in F[number] as K['name']]: Nullable<K, Decoded<K['type']>> };

/**
 * Fields present in every version of the message (from version 0, or from its lowest valid
 * version `Low`) with no default must be given; the encoder fills the others (and any field left
 * out) with their defaults.
 */
type IsRequired<F, Low extends string> = F extends { readonly versions: '0+' | `${Low}+` }
  ? F extends { readonly default: unknown }
    ? false
    : F extends { readonly tag: number }
      ? false
      : true
  : false;

export type EncodableStruct<F extends readonly FieldSpec[], Low extends string = '0'> = string extends F[number]['name']
  ? AnyMessage
  : {
      [K in F[number] as IsRequired<K, Low> extends true ? K['name'] : never]: Nullable<K, Encodable<K['type'], Low>>;
    } & {
      [K in F[number] as IsRequired<K, Low> extends true ? never : K['name']]?: Nullable<K, Encodable<K['type'], Low>>;
    };

/** The lowest version of a range written '1-2', '3+' or '5'. */
type LowestVersion<V extends string> = V extends `${infer L}-${string}` ? L : V extends `${infer L}+` ? L : V;

/** A request as the broker's decoder hands it to a handler. */
export type RequestOf<A extends ApiSpec> = DecodedStruct<A['request']['fields']>;
/** A response as the client's decoder returns it. */
export type ResponseOf<A extends ApiSpec> = DecodedStruct<A['response']['fields']>;
/** A request a client may encode. */
export type RequestIn<A extends ApiSpec> = EncodableStruct<
  A['request']['fields'],
  LowestVersion<A['request']['valid_versions']>
>;
/** A response a handler may return for encoding. */
export type ResponseIn<A extends ApiSpec> = EncodableStruct<
  A['response']['fields'],
  LowestVersion<A['response']['valid_versions']>
>;

/** The element type of an array type, to name nested rows: `Row<ResponseOf<X>['topics']>`. */
export type Row<T> = T extends readonly (infer E)[] ? E : never;

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
  if (parsed === null || !Number.isFinite(parsed.high))
    throw new Error(`${spec.name}: valid_versions must be a closed range`);
  return { min: parsed.low, max: parsed.high };
}
