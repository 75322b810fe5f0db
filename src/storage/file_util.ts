// Whole-file helpers over FileIO: loops for short reads and writes, atomic replacement.
import path from 'node:path';
import type { Fd, FileIO } from './file_io.ts';

/** Writes every byte of `buffers` at `position`, looping over short writes. */
export async function write_all(io: FileIO, fd: Fd, buffers: readonly Buffer[], position: number): Promise<void> {
  let pending = buffers;
  let at = position;
  let remaining = 0;
  for (const buffer of buffers) remaining += buffer.length;
  while (remaining > 0) {
    const written = await io.writev(fd, pending, at);
    if (written <= 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
    remaining -= written;
    at += written;
    if (remaining > 0) pending = skip_bytes(pending, written);
  }
}

function skip_bytes(buffers: readonly Buffer[], count: number): Buffer[] {
  const rest: Buffer[] = [];
  let skip = count;
  for (const buffer of buffers) {
    if (skip >= buffer.length) {
      skip -= buffer.length;
      continue;
    }
    rest.push(skip > 0 ? buffer.subarray(skip) : buffer);
    skip = 0;
  }
  return rest;
}

/** Reads up to `length` bytes at `position`; returns the filled prefix (shorter at end of file). */
export async function read_at(io: FileIO, fd: Fd, length: number, position: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(length);
  let filled = 0;
  while (filled < length) {
    const count = await io.read(fd, buffer, filled, length - filled, position + filled);
    if (count === 0) break;
    filled += count;
  }
  return filled === length ? buffer : buffer.subarray(0, filled);
}

export async function read_whole_file(io: FileIO, file: string): Promise<Buffer | null> {
  const stat = await io.stat(file);
  if (stat === null || stat.is_directory) return null;
  const fd = await io.open(file, 'read');
  try {
    return await read_at(io, fd, await io.fsize(fd), 0);
  } finally {
    await io.close(fd);
  }
}

/**
 * Replaces `file` so that after a crash it holds either the old or the new content, never a mix:
 * write a temporary file, fsync it, rename it over the old one, fsync the directory.
 */
export async function replace_file_atomically(io: FileIO, file: string, content: Buffer): Promise<void> {
  const temporary = `${file}.tmp`;
  const fd = await io.open(temporary, 'create');
  try {
    await io.ftruncate(fd, 0);
    await write_all(io, fd, [content], 0);
    await io.fdatasync(fd);
  } finally {
    await io.close(fd);
  }
  await io.rename(temporary, file);
  await io.fsync_dir(path.dirname(file));
}
