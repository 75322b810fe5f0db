// The I/O boundary of the storage layer. Everything storage does to a disk goes through this
// interface, so tests can swap in SimFileIO (in memory, with crashes and injected faults).
// Errors carry the OS error code in `code` ('ENOSPC', 'EIO', 'ENOENT', ...).

export type Fd = number;
export type OpenMode = 'read' | 'update' | 'create';

export interface FileStat {
  size: number;
  is_directory: boolean;
}

export interface DiskSpace {
  free_bytes: number;
  total_bytes: number;
}

export interface FileIO {
  /**
   * 'read': an existing file, read-only. 'update': an existing file, read-write.
   * 'create': read-write, creating the file when missing.
   */
  open(path: string, mode: OpenMode): Promise<Fd>;
  close(fd: Fd): Promise<void>;
  /** Positional read; returns the bytes read (fewer at end of file). */
  read(fd: Fd, buffer: Buffer, offset: number, length: number, position: number): Promise<number>;
  /**
   * The same, blocking: only for a few bytes just written, which the page cache holds (a write's
   * read-back). A trip through the thread pool would cost more than the read, on every append.
   */
  read_sync(fd: Fd, buffer: Buffer, offset: number, length: number, position: number): number;
  /** Positional gather write; may write fewer bytes than given (see write_all). */
  writev(fd: Fd, buffers: readonly Buffer[], position: number): Promise<number>;
  fdatasync(fd: Fd): Promise<void>;
  ftruncate(fd: Fd, length: number): Promise<void>;
  fsize(fd: Fd): Promise<number>;
  /** null when nothing exists at the path. */
  stat(path: string): Promise<FileStat | null>;
  /** Creates the directory and its parents; no error if it exists. */
  mkdir(path: string): Promise<void>;
  readdir(path: string): Promise<string[]>;
  rename(from: string, to: string): Promise<void>;
  unlink(path: string): Promise<void>;
  /** Removes a directory and everything below it; no error if it is missing. */
  remove_tree(path: string): Promise<void>;
  /** Makes the directory's entries (creations, renames, deletions) durable. */
  fsync_dir(path: string): Promise<void>;
  /** The file system holding `path`: bytes an unprivileged writer may still use, and its size. */
  disk_space(path: string): Promise<DiskSpace>;
}
