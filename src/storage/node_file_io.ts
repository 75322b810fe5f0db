// FileIO on the real file system through Node's callback API (one libuv request per call, no
// FileHandle objects).
import fs from 'node:fs';
import type { DiskSpace, Fd, FileIO, FileStat, OpenMode } from './file_io.ts';

const OPEN_FLAGS: Record<OpenMode, number> = {
  read: fs.constants.O_RDONLY,
  update: fs.constants.O_RDWR,
  create: fs.constants.O_RDWR | fs.constants.O_CREAT,
};

function settle<T>(resolve: (value: T) => void, reject: (error: Error) => void) {
  return (error: NodeJS.ErrnoException | null, value?: T) => (error ? reject(error) : resolve(value as T));
}

export class NodeFileIO implements FileIO {
  open(path: string, mode: OpenMode): Promise<Fd> {
    return new Promise((resolve, reject) => fs.open(path, OPEN_FLAGS[mode], 0o644, settle(resolve, reject)));
  }

  close(fd: Fd): Promise<void> {
    return new Promise((resolve, reject) => fs.close(fd, settle(resolve, reject)));
  }

  read_sync(fd: Fd, buffer: Buffer, offset: number, length: number, position: number): number {
    return fs.readSync(fd, buffer, offset, length, position);
  }

  read(fd: Fd, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    return new Promise((resolve, reject) => fs.read(fd, buffer, offset, length, position, settle(resolve, reject)));
  }

  writev(fd: Fd, buffers: readonly Buffer[], position: number): Promise<number> {
    return new Promise((resolve, reject) =>
      fs.writev(fd, buffers as Buffer[], position, (error, written) => (error ? reject(error) : resolve(written))),
    );
  }

  fdatasync(fd: Fd): Promise<void> {
    return new Promise((resolve, reject) => fs.fdatasync(fd, settle(resolve, reject)));
  }

  ftruncate(fd: Fd, length: number): Promise<void> {
    return new Promise((resolve, reject) => fs.ftruncate(fd, length, settle(resolve, reject)));
  }

  fsize(fd: Fd): Promise<number> {
    return new Promise((resolve, reject) =>
      fs.fstat(fd, (error, stats) => (error ? reject(error) : resolve(stats.size))),
    );
  }

  stat(path: string): Promise<FileStat | null> {
    return new Promise((resolve, reject) =>
      fs.stat(path, (error, stats) => {
        if (error) return error.code === 'ENOENT' ? resolve(null) : reject(error);
        resolve({ size: stats.size, is_directory: stats.isDirectory() });
      }),
    );
  }

  async mkdir(path: string): Promise<void> {
    await fs.promises.mkdir(path, { recursive: true });
  }

  readdir(path: string): Promise<string[]> {
    return fs.promises.readdir(path);
  }

  rename(from: string, to: string): Promise<void> {
    return fs.promises.rename(from, to);
  }

  unlink(path: string): Promise<void> {
    return fs.promises.unlink(path);
  }

  remove_tree(path: string): Promise<void> {
    return fs.promises.rm(path, { recursive: true, force: true });
  }

  async disk_space(path: string): Promise<DiskSpace> {
    const stats = await fs.promises.statfs(path);
    return { free_bytes: stats.bavail * stats.bsize, total_bytes: stats.blocks * stats.bsize };
  }

  async fsync_dir(path: string): Promise<void> {
    const fd = await new Promise<Fd>((resolve, reject) =>
      fs.open(path, fs.constants.O_RDONLY, settle(resolve, reject)),
    );
    try {
      await new Promise<void>((resolve, reject) => fs.fsync(fd, settle(resolve, reject)));
    } finally {
      await this.close(fd);
    }
  }
}
