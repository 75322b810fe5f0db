// Checkpoint files of a data directory: a map from partition name to an offset, replaced
// atomically (temporary file, fsync, rename, directory fsync) and protected by a CRC32C, so a
// reader sees either the previous or the new map, and rejects a damaged file instead of trusting it.
//
// Text layout (UTF-8, one item per line):
//   sluice-checkpoint 1
//   <count>
//   <partition name> <offset>      (count lines)
//   crc32c <8 hex digits over every byte above this line>
import path from 'node:path';
import { crc32c } from '@node-rs/crc32';
import type { FileIO } from './file_io.ts';
import { read_whole_file, replace_file_atomically } from './file_util.ts';

const HEADER = 'sluice-checkpoint 1';

export function encode_checkpoint(offsets: ReadonlyMap<string, number>): Buffer {
  const lines = [HEADER, String(offsets.size)];
  for (const [name, offset] of [...offsets].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    lines.push(`${name} ${offset}`);
  }
  const body = Buffer.from(`${lines.join('\n')}\n`, 'utf8');
  const trailer = Buffer.from(`crc32c ${crc32c(body).toString(16).padStart(8, '0')}\n`, 'utf8');
  return Buffer.concat([body, trailer]);
}

/** The map, or null when the bytes are not a complete, intact checkpoint. */
export function decode_checkpoint(bytes: Buffer): Map<string, number> | null {
  const text = bytes.toString('utf8');
  const trailer_at = text.lastIndexOf('crc32c ');
  if (trailer_at < 0 || !text.endsWith('\n')) return null;
  const body = bytes.subarray(0, Buffer.byteLength(text.slice(0, trailer_at), 'utf8'));
  const stored = text.slice(trailer_at + 7, -1);
  if (!/^[0-9a-f]{8}$/.test(stored) || parseInt(stored, 16) !== crc32c(body)) return null;
  const lines = body.toString('utf8').split('\n');
  if (lines[0] !== HEADER) return null;
  const count = Number(lines[1]);
  if (!Number.isSafeInteger(count) || lines.length !== count + 3) return null;
  const offsets = new Map<string, number>();
  for (let i = 0; i < count; i++) {
    const line = lines[i + 2]!;
    const space = line.lastIndexOf(' ');
    const offset = Number(line.slice(space + 1));
    if (space <= 0 || !Number.isSafeInteger(offset) || offset < 0) return null;
    offsets.set(line.slice(0, space), offset);
  }
  return offsets;
}

/** One checkpoint file; writes are serialised so the newest map always lands last. */
export class CheckpointFile {
  private chain: Promise<void> = Promise.resolve();
  readonly path: string;

  constructor(
    private readonly io: FileIO,
    dir: string,
    name: string,
  ) {
    this.path = path.join(dir, name);
  }

  /** The stored map; empty when the file is missing; `damaged` when it exists but fails its checks. */
  async read(): Promise<{ offsets: Map<string, number>; damaged: boolean }> {
    const bytes = await read_whole_file(this.io, this.path);
    if (bytes === null) return { offsets: new Map(), damaged: false };
    const offsets = decode_checkpoint(bytes);
    return offsets === null ? { offsets: new Map(), damaged: true } : { offsets, damaged: false };
  }

  /** Writes the map produced by `snapshot` at the time the write actually starts. */
  write(snapshot: () => ReadonlyMap<string, number>): Promise<void> {
    const next = this.chain.then(() => replace_file_atomically(this.io, this.path, encode_checkpoint(snapshot())));
    this.chain = next.catch(() => undefined);
    return next;
  }
}
