// Compiles a MessageSpec into an encoder and a decoder for one version: the version gates, the
// flexible (compact + tagged fields) encodings and the defaults are resolved once, leaving a list of
// small closures per field. Values are plain objects keyed by the snake_case field names.
import { type FieldSpec, type MessageSpec, type TypeSpec, in_range } from './schema.ts';
import { ProtocolDecodeError, type Reader, Writer } from './wire.ts';

export type Value = Record<string, unknown>;

interface Codec {
  encode(writer: Writer, value: unknown): void;
  decode(reader: Reader): unknown;
}

export interface MessageCodec {
  readonly version: number;
  readonly flexible: boolean;
  encode(writer: Writer, value: Value): void;
  decode(reader: Reader): Value;
}

const cache = new WeakMap<MessageSpec, Map<number, MessageCodec>>();

export function message_codec(spec: MessageSpec, version: number): MessageCodec {
  let versions = cache.get(spec);
  if (!versions) {
    versions = new Map();
    cache.set(spec, versions);
  }
  let codec = versions.get(version);
  if (!codec) {
    if (!in_range(spec.valid_versions, version)) throw new RangeError(`${spec.name} has no version ${version}`);
    const flexible = in_range(spec.flexible_versions, version);
    const body = struct_codec(spec.fields, version, flexible, spec.name);
    codec = {
      version,
      flexible,
      encode: (writer, value) => body.encode(writer, value),
      decode: (reader) => body.decode(reader) as Value,
    };
    versions.set(version, codec);
  }
  return codec;
}

/** The all-zero uuid: a topic id not known (or not given), as Kafka writes it in base64. */
export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

function zero_value(type: TypeSpec, nullable: boolean): unknown {
  if (nullable) return null;
  if (typeof type === 'object') return 'array' in type ? [] : {};
  switch (type) {
    case 'bool':
      return false;
    case 'string':
      return '';
    case 'bytes':
    case 'records':
      return Buffer.alloc(0);
    case 'uuid':
      return ZERO_UUID;
    default:
      return 0;
  }
}

function default_of(field: FieldSpec, version: number): unknown {
  if (field.default !== undefined) return field.default;
  return zero_value(field.type, in_range(field.nullable_versions, version));
}

function struct_codec(fields: readonly FieldSpec[], version: number, flexible: boolean, path: string): Codec {
  const present: Array<{ name: string; codec: Codec; fallback: unknown }> = [];
  const absent: Array<{ name: string; fallback: unknown }> = [];
  const tagged = new Map<number, { name: string; codec: Codec; fallback: unknown }>();
  for (const field of fields) {
    const fallback = default_of(field, version);
    const active = in_range(field.versions, version);
    if (field.tag !== undefined) {
      if (flexible && active) {
        tagged.set(field.tag, {
          name: field.name,
          codec: type_codec(field, version, true, `${path}.${field.name}`),
          fallback,
        });
      } else {
        absent.push({ name: field.name, fallback });
      }
    } else if (active) {
      present.push({
        name: field.name,
        codec: type_codec(field, version, flexible, `${path}.${field.name}`),
        fallback,
      });
    } else {
      absent.push({ name: field.name, fallback });
    }
  }
  const tags = [...tagged.entries()].sort(([a], [b]) => a - b);
  return {
    encode(writer, value) {
      const object = (value ?? {}) as Value;
      for (const { name, codec, fallback } of present) {
        const v = object[name];
        codec.encode(writer, v === undefined ? fallback : v);
      }
      if (!flexible) return;
      const to_write = tags.filter(([, t]) => !is_default(object[t.name], t.fallback));
      writer.uvarint(to_write.length);
      for (const [tag, t] of to_write) {
        const inner = new Writer();
        t.codec.encode(inner, object[t.name]);
        const bytes = inner.to_buffer();
        writer.uvarint(tag);
        writer.uvarint(bytes.length);
        writer.raw(bytes);
      }
    },
    decode(reader) {
      const object: Value = {};
      for (const { name, codec } of present) object[name] = codec.decode(reader);
      for (const { name, fallback } of absent) object[name] = clone_default(fallback);
      if (flexible) {
        for (const [, t] of tags) object[t.name] = clone_default(t.fallback);
        const count = reader.checked_length(reader.uvarint(), 2, `${path} tagged fields`);
        let last_tag = -1;
        for (let i = 0; i < count; i++) {
          const tag = reader.uvarint();
          if (tag <= last_tag) throw new ProtocolDecodeError(`${path}: tagged fields out of order`);
          last_tag = tag;
          const size = reader.checked_length(reader.uvarint(), 1, `${path} tag ${tag}`);
          const known = tagged.get(tag);
          if (!known) {
            reader.bytes_slice(size); // unknown tags are skipped
            continue;
          }
          const end = reader.position + size;
          object[known.name] = known.codec.decode(reader);
          if (reader.position !== end) throw new ProtocolDecodeError(`${path}: tag ${tag} size mismatch`);
        }
      }
      return object;
    },
  };
}

/** Each decoded message gets its own copy of a default array or struct. */
function clone_default(value: unknown): unknown {
  if (Array.isArray(value)) return [];
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) return structuredClone(value);
  return value;
}

function is_default(value: unknown, fallback: unknown): boolean {
  if (value === undefined || value === fallback) return true;
  return Array.isArray(value) && Array.isArray(fallback) && value.length === 0 && fallback.length === 0;
}

function type_codec(field: FieldSpec, version: number, flexible: boolean, path: string): Codec {
  return codec_for(field.type, in_range(field.nullable_versions, version), version, flexible, path);
}

function codec_for(type: TypeSpec, nullable: boolean, version: number, flexible: boolean, path: string): Codec {
  if (typeof type === 'object') {
    if ('array' in type) return array_codec(type.array, nullable, version, flexible, path);
    const inner = struct_codec(type.struct, version, flexible, path);
    if (!nullable) return inner;
    // A nullable struct is preceded by an int8 presence marker (-1 null, 1 present).
    return {
      encode(writer, value) {
        if (value === null || value === undefined) return writer.int8(-1);
        writer.int8(1);
        inner.encode(writer, value);
      },
      decode(reader) {
        return reader.int8() < 0 ? null : inner.decode(reader);
      },
    };
  }
  switch (type) {
    case 'int8':
      return { encode: (w, v) => w.int8(v as number), decode: (r) => r.int8() };
    case 'int16':
      return { encode: (w, v) => w.int16(v as number), decode: (r) => r.int16() };
    case 'int32':
      return { encode: (w, v) => w.int32(v as number), decode: (r) => r.int32() };
    case 'int64':
      return { encode: (w, v) => w.int64(v as number), decode: (r) => r.int64() };
    case 'uint16':
      return { encode: (w, v) => w.uint16(v as number), decode: (r) => r.uint16() };
    case 'uint32':
      return { encode: (w, v) => w.uint32(v as number), decode: (r) => r.uint32() };
    case 'float64':
      return { encode: (w, v) => w.float64(v as number), decode: (r) => r.float64() };
    case 'bool':
      return { encode: (w, v) => w.bool(v as boolean), decode: (r) => r.bool() };
    case 'uuid':
      return { encode: (w, v) => w.uuid(v as string), decode: (r) => r.uuid() };
    case 'string':
      return string_codec(nullable, flexible, path);
    case 'bytes':
    case 'records':
      return bytes_codec(nullable, flexible, path);
  }
}

function length_prefix(flexible: boolean, wide: boolean) {
  return {
    write(writer: Writer, length: number | null): void {
      if (flexible) writer.uvarint(length === null ? 0 : length + 1);
      else if (wide) writer.int32(length === null ? -1 : length);
      else writer.int16(length === null ? -1 : length);
    },
    read(reader: Reader): number | null {
      if (flexible) {
        const raw = reader.uvarint();
        return raw === 0 ? null : raw - 1;
      }
      const length = wide ? reader.int32() : reader.int16();
      return length < 0 ? null : length;
    },
  };
}

function string_codec(nullable: boolean, flexible: boolean, path: string): Codec {
  const prefix = length_prefix(flexible, false);
  return {
    encode(writer, value) {
      if (value === null || value === undefined) {
        if (!nullable) throw new RangeError(`${path} is not nullable`);
        return prefix.write(writer, null);
      }
      const bytes = Buffer.from(value as string, 'utf8');
      prefix.write(writer, bytes.length);
      writer.raw(bytes);
    },
    decode(reader) {
      const length = prefix.read(reader);
      if (length === null) {
        if (!nullable) throw new ProtocolDecodeError(`${path} is null but not nullable`);
        return null;
      }
      return reader.bytes_slice(reader.checked_length(length, 1, path)).toString('utf8');
    },
  };
}

function bytes_codec(nullable: boolean, flexible: boolean, path: string): Codec {
  const prefix = length_prefix(flexible, true);
  return {
    encode(writer, value) {
      if (value === null || value === undefined) {
        if (!nullable) throw new RangeError(`${path} is not nullable`);
        return prefix.write(writer, null);
      }
      // A list of buffers (stored batches) is written back to back without joining them.
      if (Array.isArray(value)) {
        let length = 0;
        for (const part of value as Buffer[]) length += part.length;
        prefix.write(writer, length);
        for (const part of value as Buffer[]) writer.raw(part);
        return;
      }
      const bytes = value as Buffer;
      prefix.write(writer, bytes.length);
      writer.raw(bytes);
    },
    decode(reader) {
      const length = prefix.read(reader);
      if (length === null) {
        if (!nullable) throw new ProtocolDecodeError(`${path} is null but not nullable`);
        return null;
      }
      return reader.bytes_slice(reader.checked_length(length, 1, path));
    },
  };
}

function array_codec(element: TypeSpec, nullable: boolean, version: number, flexible: boolean, path: string): Codec {
  const inner = codec_for(element, false, version, flexible, `${path}[]`);
  const prefix = length_prefix(flexible, true);
  return {
    encode(writer, value) {
      if (value === null || value === undefined) {
        if (!nullable) return prefix.write(writer, 0);
        return prefix.write(writer, null);
      }
      const items = value as unknown[];
      prefix.write(writer, items.length);
      for (const item of items) inner.encode(writer, item);
    },
    decode(reader) {
      const count = prefix.read(reader);
      if (count === null) return nullable ? null : [];
      reader.checked_length(count, 1, path);
      const items = new Array<unknown>(count);
      for (let i = 0; i < count; i++) items[i] = inner.decode(reader);
      return items;
    },
  };
}
