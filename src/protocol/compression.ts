// Compression of record batches (magic 2): the records section (everything after the 61-byte
// header) is compressed as one unit and the codec id goes in bits 0-2 of the attributes; the record
// count stays in the header and the CRC-32C is computed over the compressed bytes. gzip comes from
// node:zlib; snappy, lz4 and zstd come from npm packages that are loaded on first use only, so a
// program that never uses a codec never loads it.
//
// Formats, as Kafka's Java client writes them and Kafka and librdkafka read them:
// - gzip: a gzip member (RFC 1952).
// - snappy: xerial framing (the `SnappyOutputStream` header, then blocks of at most 32 KiB of input,
//   each an int32 length and a raw snappy block). Readers also accept unframed raw snappy.
// - lz4: the LZ4 frame format with independent blocks.
// - zstd: one zstd frame.
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import { crc32c } from '@node-rs/crc32';
import {
  ATTRIBUTE_COMPRESSION_MASK,
  ATTRIBUTE_TRANSACTIONAL,
  BATCH_HEADER_BYTES,
  BATCH_LOG_OVERHEAD_BYTES,
  OFFSET_ATTRIBUTES,
  OFFSET_BASE_SEQUENCE,
  OFFSET_BATCH_LENGTH,
  OFFSET_CRC,
  OFFSET_PRODUCER_EPOCH,
  OFFSET_PRODUCER_ID,
  batch_records_count,
  batch_size_at,
  records_count_fits,
  write_int64,
} from '../format/batch_layout.ts';

/** A codec that is unknown, cannot load, or meets malformed data. Not retriable. */
export class CompressionError extends Error {
  readonly retriable = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CompressionError';
  }
}

export type CompressionName = 'none' | 'gzip' | 'snappy' | 'lz4' | 'zstd';
/** A codec by name, or by its Kafka id (0-4, the values of kafkajs's `CompressionTypes`). */
export type CompressionType = CompressionName | 0 | 1 | 2 | 3 | 4;

export const CompressionCodes: Readonly<Record<CompressionName, number>> = {
  none: 0,
  gzip: 1,
  snappy: 2,
  lz4: 3,
  zstd: 4,
};
/** kafkajs's `CompressionTypes`, for code moving from kafkajs. */
export const CompressionTypes = { None: 0, GZIP: 1, Snappy: 2, LZ4: 3, ZSTD: 4 } as const;
const NAMES: readonly CompressionName[] = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

/** The codec's name for a name or Kafka id; throws for anything else. */
export function compression_name(type: CompressionType | undefined | null): CompressionName {
  if (type === undefined || type === null) return 'none';
  if (typeof type === 'number') {
    const name = NAMES[type];
    if (name) return name;
  } else if (NAMES.includes(type)) {
    return type;
  }
  throw new CompressionError(`unknown compression ${JSON.stringify(type)} (expected one of ${NAMES.join(', ')})`);
}

/**
 * The most a batch's records may decompress to. zstd makes 128 KiB of 4 bytes and gzip 1 MiB of
 * 1 KiB, so without a bound a batch of a few kilobytes could make the broker allocate gigabytes;
 * producers' batches stay far below this.
 */
export const DECOMPRESSED_BYTES_MAX = 64 * 1024 * 1024;

interface Codec {
  compress(data: Buffer): Promise<Buffer>;
  /** Fails once the output passes `bytes_max` bytes: before making more, where the codec can stop. */
  decompress(data: Buffer, bytes_max: number): Promise<Buffer>;
}

const gzip = promisify(zlib.gzip);
const gunzip = promisify(zlib.gunzip) as (data: Buffer, options: zlib.ZlibOptions) => Promise<Buffer>;

const GZIP: Codec = {
  compress: (data) => gzip(data),
  decompress: (data, bytes_max) => gunzip(data, { maxOutputLength: bytes_max }),
};

function too_large(bytes_max: number): CompressionError {
  return new CompressionError(`the records decompress to more than ${bytes_max} bytes`);
}

/** Imports an optional codec package, with an error that says what to install. */
async function load<T>(name: string, loader: () => Promise<T>): Promise<T> {
  try {
    return await loader();
  } catch (error) {
    throw new CompressionError(
      `the ${name} codec package could not be loaded (npm install ${name}): ${String(error)}`,
      { cause: error },
    );
  }
}

// --- snappy (xerial framing) -----------------------------------------------------------------

const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_BYTES = 16;
/** SnappyOutputStream's default block size. */
const XERIAL_BLOCK_BYTES = 32 * 1024;

/** The uncompressed length a raw snappy block starts with (a varint), or -1 if it is malformed. */
function snappy_length(block: Buffer): number {
  let length = 0;
  for (let i = 0; i < 5 && i < block.length; i++) {
    length += (block[i]! & 0x7f) * 2 ** (7 * i);
    if ((block[i]! & 0x80) === 0) return length;
  }
  return -1;
}

function make_snappy(snappy: typeof import('snappy')): Codec {
  // The native decoder allocates the length the block states before reading it: checked first.
  const raw_decompress = async (block: Buffer, bytes_max: number): Promise<Buffer> => {
    if (snappy_length(block) > bytes_max) throw too_large(bytes_max);
    return (await snappy.uncompress(block, { asBuffer: true })) as Buffer;
  };
  return {
    async compress(data) {
      const header = Buffer.alloc(XERIAL_HEADER_BYTES);
      XERIAL_MAGIC.copy(header, 0);
      header.writeInt32BE(1, 8); // version
      header.writeInt32BE(1, 12); // minimum compatible version
      const parts: Buffer[] = [header];
      let at = 0;
      do {
        const block = snappy.compressSync(data.subarray(at, at + XERIAL_BLOCK_BYTES));
        const length = Buffer.allocUnsafe(4);
        length.writeInt32BE(block.length, 0);
        parts.push(length, block);
        at += XERIAL_BLOCK_BYTES;
      } while (at < data.length);
      return Buffer.concat(parts);
    },
    async decompress(data, bytes_max) {
      if (data.length < XERIAL_HEADER_BYTES || !data.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC))
        return raw_decompress(data, bytes_max);
      const blocks: Buffer[] = [];
      let total = 0;
      let at = XERIAL_HEADER_BYTES;
      while (at < data.length) {
        if (at + 4 > data.length) throw new CompressionError('truncated xerial snappy block length');
        const length = data.readInt32BE(at);
        at += 4;
        if (length < 0 || at + length > data.length) throw new CompressionError('truncated xerial snappy block');
        const block = await raw_decompress(data.subarray(at, at + length), bytes_max - total);
        blocks.push(block);
        total += block.length;
        at += length;
      }
      return Buffer.concat(blocks);
    },
  };
}

// --- lz4 (frame format) ----------------------------------------------------------------------

function make_lz4(lz4: typeof import('lz4-napi')): Codec {
  return {
    compress: (data) => lz4.compressFrame(data),
    // No bound to give the decoder; LZ4 makes at most about 255 bytes of one, and decompress checks after.
    decompress: (data) => lz4.decompressFrame(data),
  };
}

// --- zstd ------------------------------------------------------------------------------------

const ZSTD_LEVEL = 3;
/** Output bound for frames that do not state their content size: doubled up to this on failure. */
const ZSTD_UNKNOWN_SIZE_MAX = 256 * 1024 * 1024;

async function make_zstd(): Promise<Codec> {
  // Node 22.15+ has zstd built in; Node 20 uses the WebAssembly build of the reference library.
  const builtin = zlib as unknown as {
    zstdCompress?: typeof zlib.gzip;
    zstdDecompress?: typeof zlib.gunzip;
    constants: Record<string, number>;
  };
  if (typeof builtin.zstdCompress === 'function' && typeof builtin.zstdDecompress === 'function') {
    const compress = promisify(builtin.zstdCompress) as (data: Buffer, options: object) => Promise<Buffer>;
    const decompress = promisify(builtin.zstdDecompress) as (data: Buffer, options: object) => Promise<Buffer>;
    const level_param = builtin.constants.ZSTD_c_compressionLevel ?? 100;
    return {
      compress: (data) => compress(data, { params: { [level_param]: ZSTD_LEVEL } }),
      decompress: (data, bytes_max) => decompress(data, { maxOutputLength: bytes_max }),
    };
  }
  const zstd = await import('@bokuweb/zstd-wasm');
  await zstd.init();
  const to_buffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return {
    compress: async (data) => to_buffer(zstd.compress(data, ZSTD_LEVEL)),
    async decompress(data, bytes_max) {
      // The frame header usually gives the size; when it does not, grow the output buffer.
      for (let heap = 1024 * 1024; ; heap *= 2) {
        try {
          return to_buffer(zstd.decompress(data, { defaultHeapSize: heap }));
        } catch (error) {
          if (heap >= Math.min(ZSTD_UNKNOWN_SIZE_MAX, bytes_max)) throw error;
        }
      }
    },
  };
}

const codecs = new Map<CompressionName, Promise<Codec>>([['gzip', Promise.resolve(GZIP)]]);

function codec(name: CompressionName): Promise<Codec> {
  let loaded = codecs.get(name);
  if (!loaded) {
    if (name === 'snappy') loaded = load('snappy', async () => make_snappy(await import('snappy')));
    else if (name === 'lz4') loaded = load('lz4-napi', async () => make_lz4(await import('lz4-napi')));
    else if (name === 'zstd') loaded = load('@bokuweb/zstd-wasm', make_zstd);
    else throw new CompressionError(`compression ${name} has no codec`);
    codecs.set(name, loaded);
    loaded.catch(() => codecs.delete(name)); // a failed load may be retried later
  }
  return loaded;
}

/** Compresses `data` with the codec (`none` returns it unchanged). */
export async function compress(type: CompressionType, data: Buffer): Promise<Buffer> {
  const name = compression_name(type);
  if (name === 'none') return data;
  return (await codec(name)).compress(data);
}

/**
 * Decompresses `data` written with the codec `type` (a name or Kafka codec id). Data the codec
 * cannot read, or that would decompress to more than `bytes_max` bytes, fails with CompressionError.
 */
export async function decompress(
  type: CompressionType,
  data: Buffer,
  bytes_max = DECOMPRESSED_BYTES_MAX,
): Promise<Buffer> {
  const name = compression_name(type);
  if (name === 'none') return data;
  const loaded = await codec(name);
  let out: Buffer;
  try {
    out = await loaded.decompress(data, bytes_max);
  } catch (error) {
    if (error instanceof CompressionError) throw error;
    // zlib's output bound; the codecs' own errors (corrupt data) are plain Errors with a code.
    if ((error as { code?: unknown }).code === 'ERR_BUFFER_TOO_LARGE') throw too_large(bytes_max);
    throw new CompressionError(`${name} data cannot be decompressed: ${String(error)}`, { cause: error });
  }
  if (out.length > bytes_max) throw too_large(bytes_max);
  return out;
}

/**
 * Turns an uncompressed v2 record batch (as `encode_record_batch` makes it) into one whose records
 * section is compressed with `type`: length, attributes and CRC are rewritten; the other header
 * fields are kept. `none` returns the batch unchanged.
 */
export async function compress_record_batch(batch: Buffer, type: CompressionType): Promise<Buffer> {
  const name = compression_name(type);
  if (name === 'none') return batch;
  if ((batch.readInt16BE(OFFSET_ATTRIBUTES) & ATTRIBUTE_COMPRESSION_MASK) !== 0)
    throw new CompressionError('the batch is compressed already');
  const records = await compress(name, batch.subarray(BATCH_HEADER_BYTES));
  const out = Buffer.allocUnsafe(BATCH_HEADER_BYTES + records.length);
  batch.copy(out, 0, 0, BATCH_HEADER_BYTES);
  records.copy(out, BATCH_HEADER_BYTES);
  out.writeInt32BE(out.length - BATCH_LOG_OVERHEAD_BYTES, OFFSET_BATCH_LENGTH);
  out.writeInt16BE(
    (batch.readInt16BE(OFFSET_ATTRIBUTES) & ~ATTRIBUTE_COMPRESSION_MASK) | CompressionCodes[name],
    OFFSET_ATTRIBUTES,
  );
  out.writeUInt32BE(crc32c(out.subarray(OFFSET_ATTRIBUTES)), OFFSET_CRC);
  return out;
}

/**
 * The uncompressed form of a v2 batch (returned as is when it is not compressed). Records that
 * cannot be decompressed, decompress to more than `bytes_max` bytes, or are too few bytes for the
 * records count the header states fail with CompressionError.
 */
export async function decompress_record_batch(batch: Buffer, bytes_max = DECOMPRESSED_BYTES_MAX): Promise<Buffer> {
  const attributes = batch.readInt16BE(OFFSET_ATTRIBUTES);
  const id = attributes & ATTRIBUTE_COMPRESSION_MASK;
  if (id === 0) return batch;
  const size = batch_size_at(batch, 0);
  const data = batch.subarray(BATCH_HEADER_BYTES, size);
  const records = await decompress(compression_name(id as CompressionType), data, bytes_max);
  // Readers size their work by the count (one entry per record): a count no bytes back is refused.
  if (!records_count_fits(batch, 0, records.length))
    throw new CompressionError(
      `recordsCount ${batch_records_count(batch, 0)} does not fit the ${records.length} bytes of records`,
    );
  const out = Buffer.allocUnsafe(BATCH_HEADER_BYTES + records.length);
  batch.copy(out, 0, 0, BATCH_HEADER_BYTES);
  records.copy(out, BATCH_HEADER_BYTES);
  out.writeInt32BE(out.length - BATCH_LOG_OVERHEAD_BYTES, OFFSET_BATCH_LENGTH);
  out.writeInt16BE(attributes & ~ATTRIBUTE_COMPRESSION_MASK, OFFSET_ATTRIBUTES);
  out.writeUInt32BE(crc32c(out.subarray(OFFSET_ATTRIBUTES)), OFFSET_CRC);
  return out;
}

/**
 * Writes producer id, epoch and base sequence into a v2 batch (and the transactional bit when it
 * belongs to a transaction) and recomputes its CRC, in place.
 */
export function stamp_record_batch(
  batch: Buffer,
  producer_id: number,
  producer_epoch: number,
  base_sequence: number,
  transactional = false,
): void {
  if (transactional) {
    batch.writeInt16BE(batch.readInt16BE(OFFSET_ATTRIBUTES) | ATTRIBUTE_TRANSACTIONAL, OFFSET_ATTRIBUTES);
  }
  write_int64(batch, OFFSET_PRODUCER_ID, producer_id);
  batch.writeInt16BE(producer_epoch, OFFSET_PRODUCER_EPOCH);
  batch.writeInt32BE(base_sequence, OFFSET_BASE_SEQUENCE);
  batch.writeUInt32BE(crc32c(batch.subarray(OFFSET_ATTRIBUTES)), OFFSET_CRC);
}
