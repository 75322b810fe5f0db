import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { OFFSET_RECORDS_COUNT } from '../format/batch_layout.ts';
import {
  CompressionError,
  DECOMPRESSED_BYTES_MAX,
  compress,
  compress_record_batch,
  decompress,
  decompress_record_batch,
  type CompressionName,
} from './compression.ts';
import { decode_record_batch, encode_record_batch } from './record_batch.ts';

const CODECS: readonly CompressionName[] = ['gzip', 'snappy', 'lz4', 'zstd'];
const RLE_BLOCK_BYTES = 128 * 1024;

/** A zstd frame of `blocks` RLE blocks: 4 bytes each, every one 128 KiB of output. */
function zstd_bomb(blocks: number): Buffer {
  const parts = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58])]; // magic, no content size, 2 MiB window
  for (let i = 0; i < blocks; i++) {
    const header = (i === blocks - 1 ? 1 : 0) | (1 << 1) | (RLE_BLOCK_BYTES << 3); // last?, RLE, size
    parts.push(Buffer.from([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff, 0x61]));
  }
  return Buffer.concat(parts);
}

const is_compression_error = (error: unknown) => error instanceof CompressionError;

test('every codec round-trips under the bound', async () => {
  const data = Buffer.from('sluice '.repeat(5000));
  for (const codec of CODECS) assert.deepEqual(await decompress(codec, await compress(codec, data)), data, codec);
});

// A 16 KiB zstd frame made half a gigabyte: a produced batch of a few kilobytes could take the
// broker's memory (every compressed batch is decompressed for its delay headers).
test('decompression_bomb: output past the bound is refused before it is all made', async () => {
  const blocks = Math.ceil(DECOMPRESSED_BYTES_MAX / RLE_BLOCK_BYTES) + 1;
  await assert.rejects(decompress('zstd', zstd_bomb(blocks)), is_compression_error);
  assert.equal((await decompress('zstd', zstd_bomb(8))).length, 8 * RLE_BLOCK_BYTES, 'a small frame still decodes');
  const zeros = Buffer.alloc(2 * 1024 * 1024);
  for (const codec of CODECS)
    await assert.rejects(decompress(codec, await compress(codec, zeros), 1024 * 1024), is_compression_error, codec);
});

test('decompression_bomb: a raw snappy block stating 4 GiB is refused before the decoder allocates it', async () => {
  const block = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]);
  await assert.rejects(decompress('snappy', block), is_compression_error);
});

// The codecs fail with their own plain Errors (zlib's Z_DATA_ERROR, snappy's and lz4's), which
// escaped the CompressionError the module declares for malformed data.
test('codec_errors_escaped: data a codec cannot read fails with CompressionError', async () => {
  const garbage = Buffer.from('definitely not compressed data');
  for (const codec of CODECS) await assert.rejects(decompress(codec, garbage), is_compression_error, codec);
  await assert.rejects(decompress('gzip', zlib.gzipSync('x').subarray(0, 12)), is_compression_error);
});

test('records_count_beyond_the_batch_bytes: a compressed batch with more records than bytes is refused', async () => {
  const records = [{ key: null, value: Buffer.from('v'), timestamp_ms: 0 }];
  const batch = await compress_record_batch(encode_record_batch(records), 'gzip');
  assert.equal(decode_record_batch(await decompress_record_batch(batch)).length, 1);
  batch.writeInt32BE(22_000_000, OFFSET_RECORDS_COUNT);
  await assert.rejects(decompress_record_batch(batch), is_compression_error);
});
