// amqplib's own codec (lib/defs.js, lib/codec.js) for the tests, as a real client's encoder and
// decoder to check ours against. amqplib's package exports hide lib/, so the files are required by
// path; they have no types, so the few functions used are typed here.
import { createRequire } from 'node:module';
import path from 'node:path';

export interface AmqplibArgInfo {
  name: string;
  type: string;
  default?: unknown;
}

export interface AmqplibDefs {
  /** A whole method frame (prefix, class and method ids, arguments, frame end). */
  encodeMethod(id: number, channel: number, fields: Record<string, unknown>): Buffer;
  /** A whole content header frame. */
  encodeProperties(class_id: number, channel: number, body_size: number, fields: Record<string, unknown>): Buffer;
  /** Method arguments (after the ids) or, for id 60, property flags and list. */
  decode(id: number, buf: Buffer): Record<string, unknown>;
  info(id: number): { name: string; args: AmqplibArgInfo[] };
}

export interface AmqplibCodec {
  /** Writes `table` with its length prefix at `offset` of `buf`; returns the bytes written. */
  encodeTable(buf: Buffer, table: Record<string, unknown>, offset: number): number;
  /** Decodes table entries filling all of `slice` (no length prefix). */
  decodeFields(slice: Buffer): Record<string, unknown>;
}

const require = createRequire(import.meta.url);
const root = path.dirname(require.resolve('amqplib'));

export const amqplib_defs = require(path.join(root, 'lib', 'defs.js')) as AmqplibDefs;
export const amqplib_codec = require(path.join(root, 'lib', 'codec.js')) as AmqplibCodec;

/** amqplib's method id: class id in the high 16 bits, method id in the low. */
export function amqplib_id(class_id: number, method_id: number): number {
  return class_id * 0x10000 + method_id;
}

/** The fields amqplib names by their spec name and we call reserved_1. */
const RESERVED = new Set(['ticket', 'outOfBand', 'channelId']);

/** Our name for one of amqplib's argument names (`routingKey` → `routing_key`). */
export function our_field_name(amqplib_method: string, amqplib_name: string): string {
  if (RESERVED.has(amqplib_name)) return 'reserved_1';
  if (amqplib_method === 'BasicGetEmpty' && amqplib_name === 'clusterId') return 'reserved_1';
  return amqplib_name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);
}

/** amqplib's table encoding of `table`, length prefix included. */
export function amqplib_encode_table(table: Record<string, unknown>): Buffer {
  const buf = Buffer.alloc(1 << 16);
  return Buffer.from(buf.subarray(0, amqplib_codec.encodeTable(buf, table, 0)));
}

/** A deterministic pseudo-random source (Marsaglia's xorshift32), so a failing case can be replayed. */
export function seeded_random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x100000000;
  };
}
