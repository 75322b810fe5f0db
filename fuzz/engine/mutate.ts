// The mutator: turns a corpus input into a new one with a few stacked random edits. The edits are
// the ones that break binary decoders: flipped bits, bytes and integers set to the values at the
// edges of int8/16/32 (both byte orders), small arithmetic on integers, varints, length fields
// pointed at the bytes that follow, chunks inserted, deleted, duplicated or spliced from another
// input, and tokens of the target's dictionary. Seeded, so a run can be repeated.

/** A small, fast, seedable generator (mulberry32); Math.random cannot be replayed. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** A uniform 32-bit unsigned integer. */
  next_u32(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** An integer in [0, bound). */
  below(bound: number): number {
    return bound <= 1 ? 0 : this.next_u32() % bound;
  }

  /** True once in `odds` draws. */
  chance(odds: number): boolean {
    return this.below(odds) === 0;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)]!;
  }
}

// Values at the edges of signed and unsigned integers of each width: where length and count checks
// tend to be off by one or forget the sign.
const INTERESTING_8 = [-128, -1, 0, 1, 2, 16, 32, 64, 100, 127, 128, 255];
const INTERESTING_16 = [...INTERESTING_8, -32768, -129, 256, 512, 1000, 1024, 4096, 32767, 32768, 65535];
const INTERESTING_32 = [
  ...INTERESTING_16,
  -2147483648,
  -100663046,
  -32769,
  65536,
  100663045,
  0x7fffffff,
  0x80000000,
  0xffffffff,
];

export interface MutationContext {
  random: Random;
  /** Longest input to make. */
  max_bytes: number;
  /** Another corpus input, for splicing. */
  other: () => Buffer;
  dictionary: readonly Buffer[];
}

type Mutation = (data: Buffer, ctx: MutationContext) => Buffer;

function position(data: Buffer, random: Random, width = 1): number {
  return random.below(Math.max(1, data.length - width + 1));
}

function write_int(data: Buffer, at: number, width: number, value: number, little: boolean): void {
  if (at + width > data.length) return;
  if (width === 1) data[at] = value & 0xff;
  else if (width === 2) little ? data.writeUInt16LE(value & 0xffff, at) : data.writeUInt16BE(value & 0xffff, at);
  else little ? data.writeUInt32LE(value >>> 0, at) : data.writeUInt32BE(value >>> 0, at);
}

function read_int(data: Buffer, at: number, width: number): number {
  if (width === 1) return data[at]!;
  return width === 2 ? data.readUInt16BE(at) : data.readUInt32BE(at);
}

const flip_bit: Mutation = (data, { random }) => {
  if (data.length === 0) return data;
  data[position(data, random)]! ^= 1 << random.below(8);
  return data;
};

const set_byte: Mutation = (data, { random }) => {
  if (data.length === 0) return data;
  data[position(data, random)] = random.below(256);
  return data;
};

const interesting_int: Mutation = (data, { random }) => {
  const width = random.pick([1, 2, 4]);
  const values = width === 1 ? INTERESTING_8 : width === 2 ? INTERESTING_16 : INTERESTING_32;
  write_int(data, position(data, random, width), width, random.pick(values), random.chance(4));
  return data;
};

const arithmetic: Mutation = (data, { random }) => {
  const width = random.pick([1, 2, 4]);
  const at = position(data, random, width);
  if (at + width > data.length) return data;
  const delta = (random.below(35) + 1) * (random.chance(2) ? 1 : -1);
  write_int(data, at, width, read_int(data, at, width) + delta, false);
  return data;
};

/** An unsigned LEB128 (Kafka's compact lengths, tagged fields) or zigzag varint (records) over bytes. */
const varint: Mutation = (data, { random }) => {
  let value = random.pick(INTERESTING_32);
  if (random.chance(2)) value = value < 0 ? -value * 2 - 1 : value * 2; // zigzag
  const bytes: number[] = [];
  let rest = Math.abs(value);
  do {
    const low = rest % 128;
    rest = Math.floor(rest / 128);
    bytes.push(rest > 0 ? low | 0x80 : low);
  } while (rest > 0 && bytes.length < 10);
  const at = position(data, random, bytes.length);
  for (let i = 0; i < bytes.length && at + i < data.length; i++) data[at + i] = bytes[i]!;
  return data;
};

/** An int16 or int32 made to count the bytes after it (give or take one): a length field that fits. */
const length_field: Mutation = (data, { random }) => {
  const width = random.chance(2) ? 2 : 4;
  const at = position(data, random, width);
  if (at + width > data.length) return data;
  const after = data.length - at - width;
  const value = random.pick([after, after - 1, after + 1, random.below(after + 1), 0, -1]);
  write_int(data, at, width, value, false);
  return data;
};

const insert_bytes: Mutation = (data, { random }) => {
  const length = 1 + random.below(random.chance(4) ? 64 : 8);
  const fill = random.chance(2) ? Buffer.alloc(length, random.below(256)) : random_bytes(random, length);
  const at = random.below(data.length + 1);
  return Buffer.concat([data.subarray(0, at), fill, data.subarray(at)]);
};

const delete_bytes: Mutation = (data, { random }) => {
  if (data.length < 2) return data;
  const length = 1 + random.below(Math.min(data.length - 1, random.chance(4) ? 64 : 8));
  const at = random.below(data.length - length + 1);
  return Buffer.concat([data.subarray(0, at), data.subarray(at + length)]);
};

/** Copies a chunk of the input elsewhere in it: repeats array elements, tables, records. */
const duplicate_chunk: Mutation = (data, { random }) => {
  if (data.length === 0) return data;
  const length = 1 + random.below(Math.min(data.length, 128));
  const from = random.below(data.length - length + 1);
  const to = random.below(data.length + 1);
  const chunk = Buffer.from(data.subarray(from, from + length));
  return Buffer.concat([data.subarray(0, to), chunk, data.subarray(to)]);
};

/** The head of this input with the tail of another, or another's chunk over part of this one. */
const splice: Mutation = (data, { random, other }) => {
  const donor = other();
  if (donor.length === 0) return data;
  if (random.chance(2)) {
    const cut = random.below(data.length + 1);
    return Buffer.concat([data.subarray(0, cut), donor.subarray(random.below(donor.length))]);
  }
  const length = 1 + random.below(Math.min(donor.length, 64));
  const from = random.below(donor.length - length + 1);
  const at = random.below(data.length + 1);
  return Buffer.concat([data.subarray(0, at), donor.subarray(from, from + length), data.subarray(at + length)]);
};

const dictionary_token: Mutation = (data, { random, dictionary }) => {
  if (dictionary.length === 0) return data;
  const token = random.pick(dictionary);
  const at = random.below(data.length + 1);
  if (random.chance(2)) return Buffer.concat([data.subarray(0, at), token, data.subarray(at)]);
  return Buffer.concat([data.subarray(0, at), token, data.subarray(at + token.length)]);
};

const truncate: Mutation = (data, { random }) => data.subarray(0, random.below(data.length + 1));

function random_bytes(random: Random, length: number): Buffer {
  const bytes = Buffer.allocUnsafe(length);
  for (let i = 0; i < length; i++) bytes[i] = random.below(256);
  return bytes;
}

// Weighted by repetition: edits that keep the length (and so the framing) intact come up most,
// since most decoders stop at the first length that disagrees with the bytes.
const MUTATIONS: readonly Mutation[] = [
  flip_bit,
  flip_bit,
  set_byte,
  set_byte,
  interesting_int,
  interesting_int,
  interesting_int,
  arithmetic,
  arithmetic,
  varint,
  length_field,
  length_field,
  insert_bytes,
  delete_bytes,
  duplicate_chunk,
  splice,
  dictionary_token,
  truncate,
];

/** A mutated copy of `input` (never the same buffer): one to eight stacked edits. */
export function mutate(input: Buffer, ctx: MutationContext): Buffer {
  let data: Buffer = Buffer.from(input);
  const edits = 1 << ctx.random.below(4);
  for (let i = 0; i < edits; i++) {
    data = ctx.random.pick(MUTATIONS)(data, ctx);
    if (data.length > ctx.max_bytes) data = data.subarray(0, ctx.max_bytes);
  }
  if (data.length === 0) data = random_bytes(ctx.random, 1 + ctx.random.below(16));
  // The edits above may return views of `input`'s copy: a fresh buffer keeps saved inputs independent.
  return Buffer.from(data);
}
