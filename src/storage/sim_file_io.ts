// An in-memory FileIO with a power-loss model and injectable faults, for tests.
//
// Every file has a volatile image (what processes see: the page cache) and a durable image (what
// survives power loss). fdatasync copies a file's volatile image to its durable one; fsync_dir makes
// a directory's entries durable. crash() models either a process crash (the page cache survives) or
// a power loss (only what was synced survives). Faults: fail an operation with an OS error code,
// tear a write after some bytes, stop the "machine" after a global byte count, or a disk capacity.
import path from 'node:path';
import type { DiskSpace, Fd, FileIO, FileStat, OpenMode } from './file_io.ts';

interface SimFile {
  kind: 'file';
  data: Buffer;
  length: number;
  durable: Buffer;
}
interface SimDir {
  kind: 'dir';
}
type SimNode = SimFile | SimDir;

export type SimOp =
  'open' | 'read' | 'writev' | 'fdatasync' | 'ftruncate' | 'rename' | 'unlink' | 'fsync_dir' | 'mkdir';

export interface SimFault {
  op: SimOp;
  /** Only paths containing this text; any path when absent. */
  path_includes?: string;
  /** Only this exact (resolved) path. */
  path_exact?: string;
  code: 'EIO' | 'ENOSPC';
  /** For writev: write this many bytes before failing (a torn write). */
  after_bytes?: number;
  /**
   * For writev: report success but put the bytes this much further into the file (a misdirected
   * write: a lying disk that only reading back notices). `code` is then not raised.
   */
  misdirect_bytes?: number;
  /** How many matching calls fail; 1 when absent. */
  times?: number;
}

export class SimulatedCrash extends Error {
  readonly code = 'ESIMCRASH';
  constructor() {
    super('simulated machine stop: no further I/O takes effect');
  }
}

function os_error(code: string, message: string): Error {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

export class SimFileIO implements FileIO {
  private volatile_names = new Map<string, SimNode>([['/', { kind: 'dir' }]]);
  private durable_names = new Map<string, SimNode>([['/', { kind: 'dir' }]]);
  private fds = new Map<Fd, { file: SimFile; path: string }>();
  private next_fd = 3;
  private faults: SimFault[] = [];
  private stopped = false;
  /** Stop the machine once this many bytes have been written in total (a torn write at that byte). */
  stop_after_bytes_written: number | null = null;
  /** Total bytes the disk holds; writes past it fail with ENOSPC. null means unlimited. */
  capacity_bytes: number | null = null;

  bytes_written = 0;
  writes = 0;
  reads = 0;
  fdatasyncs = 0;
  dir_fsyncs = 0;
  open_fds_max = 0;

  get open_fds(): number {
    return this.fds.size;
  }

  get is_stopped(): boolean {
    return this.stopped;
  }

  /** Stops the machine now: every later operation fails until crash() restarts it. */
  stop(): void {
    this.stopped = true;
  }

  inject(fault: SimFault): void {
    this.faults.push({ ...fault, times: fault.times ?? 1 });
  }

  clear_faults(): void {
    this.faults = [];
  }

  /**
   * Ends every open file and restarts the machine. keep_unsynced: true models a process crash
   * (the OS keeps its page cache); false models a power loss (only synced data and entries remain).
   */
  crash(options: { keep_unsynced: boolean }): void {
    if (options.keep_unsynced) {
      this.durable_names = new Map(this.volatile_names);
      for (const node of this.volatile_names.values()) {
        if (node.kind === 'file') node.durable = Buffer.from(node.data.subarray(0, node.length));
      }
    } else {
      this.volatile_names = new Map(this.durable_names);
      for (const node of this.volatile_names.values()) {
        if (node.kind === 'file') {
          node.data = Buffer.from(node.durable);
          node.length = node.durable.length;
        }
      }
    }
    this.fds.clear();
    this.stopped = false;
    this.stop_after_bytes_written = null;
    this.faults = [];
  }

  /** Test access to a file's current bytes. */
  peek(file: string): Buffer | null {
    const node = this.volatile_names.get(path.resolve(file));
    return node?.kind === 'file' ? Buffer.from(node.data.subarray(0, node.length)) : null;
  }

  /** Test access: overwrite bytes of a file in place (e.g. to flip a bit), durably. */
  poke(file: string, position: number, bytes: Buffer): void {
    const node = this.volatile_names.get(path.resolve(file));
    if (node?.kind !== 'file') throw new Error(`no file ${file}`);
    bytes.copy(node.data, position);
    node.durable = Buffer.from(node.data.subarray(0, node.length));
  }

  disk_space(_path: string): Promise<DiskSpace> {
    const total_bytes = this.capacity_bytes ?? Number.MAX_SAFE_INTEGER;
    const free_bytes = this.capacity_bytes === null ? total_bytes : this.capacity_bytes - this.used_bytes();
    return Promise.resolve({ free_bytes, total_bytes });
  }

  used_bytes(): number {
    let total = 0;
    for (const node of this.volatile_names.values()) if (node.kind === 'file') total += node.length;
    return total;
  }

  private async begin(op: SimOp, file: string): Promise<SimFault | null> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    return this.begin_now(op, file);
  }

  /** The fault (or crash) an operation meets, without yielding first (the blocking calls). */
  private begin_now(op: SimOp, file: string): SimFault | null {
    if (this.stopped) throw new SimulatedCrash();
    const index = this.faults.findIndex(
      (f) =>
        f.op === op &&
        (f.path_includes === undefined || file.includes(f.path_includes)) &&
        (f.path_exact === undefined || path.resolve(f.path_exact) === file),
    );
    if (index < 0) return null;
    const fault = this.faults[index]!;
    fault.times = (fault.times ?? 1) - 1;
    if (fault.times <= 0) this.faults.splice(index, 1);
    return fault;
  }

  private fail_unless_write(fault: SimFault | null, op: string, file: string): void {
    if (fault) throw os_error(fault.code, `${op} ${file} (injected)`);
  }

  private file_of(fd: Fd): { file: SimFile; path: string } {
    const entry = this.fds.get(fd);
    if (!entry) throw os_error('EBADF', `fd ${fd}`);
    return entry;
  }

  private parent_exists(file: string): boolean {
    return this.volatile_names.get(path.dirname(file))?.kind === 'dir';
  }

  async open(file: string, mode: OpenMode): Promise<Fd> {
    const resolved = path.resolve(file);
    this.fail_unless_write(await this.begin('open', resolved), 'open', resolved);
    let node = this.volatile_names.get(resolved);
    if (!node) {
      if (mode !== 'create') throw os_error('ENOENT', `open ${resolved}`);
      if (!this.parent_exists(resolved)) throw os_error('ENOENT', `open ${resolved}: no parent directory`);
      node = { kind: 'file', data: Buffer.alloc(0), length: 0, durable: Buffer.alloc(0) };
      this.volatile_names.set(resolved, node);
    }
    if (node.kind !== 'file') throw os_error('EISDIR', `open ${resolved}`);
    const fd = this.next_fd++;
    this.fds.set(fd, { file: node, path: resolved });
    this.open_fds_max = Math.max(this.open_fds_max, this.fds.size);
    return fd;
  }

  async close(fd: Fd): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.file_of(fd);
    this.fds.delete(fd);
  }

  async read(fd: Fd, buffer: Buffer, offset: number, length: number, position: number): Promise<number> {
    const { path: name } = this.file_of(fd);
    this.fail_unless_write(await this.begin('read', name), 'read', name);
    return this.copy_out(fd, buffer, offset, length, position);
  }

  read_sync(fd: Fd, buffer: Buffer, offset: number, length: number, position: number): number {
    const { path: name } = this.file_of(fd);
    this.fail_unless_write(this.begin_now('read', name), 'read', name);
    return this.copy_out(fd, buffer, offset, length, position);
  }

  private copy_out(fd: Fd, buffer: Buffer, offset: number, length: number, position: number): number {
    const { file } = this.file_of(fd);
    this.reads++;
    if (position >= file.length) return 0;
    const count = Math.min(length, file.length - position);
    file.data.copy(buffer, offset, position, position + count);
    return count;
  }

  async writev(fd: Fd, buffers: readonly Buffer[], position: number): Promise<number> {
    const { file, path: name } = this.file_of(fd);
    const fault = await this.begin('writev', name);
    let total = 0;
    for (const buffer of buffers) total += buffer.length;
    let allowed = total;
    let error: Error | null = null;
    if (fault?.misdirect_bytes !== undefined) {
      this.write_bytes(file, buffers, position + fault.misdirect_bytes, total);
      this.writes++;
      this.bytes_written += total;
      return total;
    }
    if (fault) {
      allowed = Math.min(total, fault.after_bytes ?? 0);
      error = os_error(fault.code, `writev ${name} (injected)`);
    }
    if (this.capacity_bytes !== null) {
      const growth = Math.max(0, position + allowed - file.length);
      const free = this.capacity_bytes - this.used_bytes();
      if (growth > free) {
        allowed = Math.max(0, free + (file.length - position));
        error = os_error('ENOSPC', `writev ${name}`);
      }
    }
    if (this.stop_after_bytes_written !== null && this.bytes_written + allowed >= this.stop_after_bytes_written) {
      allowed = Math.max(0, this.stop_after_bytes_written - this.bytes_written);
      error = new SimulatedCrash();
      this.stopped = true;
    }
    this.write_bytes(file, buffers, position, allowed);
    this.writes++;
    this.bytes_written += allowed;
    // An injected fault or a stop throws after its torn prefix landed. A full disk returns a short
    // count first and fails on the next call, as write(2) does.
    if (error && (allowed === 0 || fault !== null || error instanceof SimulatedCrash)) throw error;
    return allowed;
  }

  private write_bytes(file: SimFile, buffers: readonly Buffer[], position: number, count: number): void {
    const end = position + count;
    if (end > file.data.length) {
      const grown = Buffer.alloc(Math.max(end, file.data.length * 2, 4096));
      file.data.copy(grown, 0, 0, file.length);
      file.data = grown;
    }
    if (position > file.length) file.data.fill(0, file.length, position);
    let at = position;
    for (const buffer of buffers) {
      if (at >= end) break;
      const take = Math.min(buffer.length, end - at);
      buffer.copy(file.data, at, 0, take);
      at += take;
    }
    file.length = Math.max(file.length, end);
  }

  async fdatasync(fd: Fd): Promise<void> {
    const { file, path: name } = this.file_of(fd);
    this.fail_unless_write(await this.begin('fdatasync', name), 'fdatasync', name);
    file.durable = Buffer.from(file.data.subarray(0, file.length));
    this.fdatasyncs++;
  }

  async ftruncate(fd: Fd, length: number): Promise<void> {
    const { file, path: name } = this.file_of(fd);
    this.fail_unless_write(await this.begin('ftruncate', name), 'ftruncate', name);
    if (length > file.length)
      this.write_bytes(file, [Buffer.alloc(length - file.length)], file.length, length - file.length);
    file.length = length;
  }

  async fsize(fd: Fd): Promise<number> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.stopped) throw new SimulatedCrash();
    return this.file_of(fd).file.length;
  }

  async stat(file: string): Promise<FileStat | null> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.stopped) throw new SimulatedCrash();
    const node = this.volatile_names.get(path.resolve(file));
    if (!node) return null;
    return node.kind === 'dir' ? { size: 0, is_directory: true } : { size: node.length, is_directory: false };
  }

  async mkdir(dir: string): Promise<void> {
    const resolved = path.resolve(dir);
    this.fail_unless_write(await this.begin('mkdir', resolved), 'mkdir', resolved);
    const missing: string[] = [];
    for (let at = resolved; !this.volatile_names.has(at); at = path.dirname(at)) missing.push(at);
    for (const name of missing.reverse()) this.volatile_names.set(name, { kind: 'dir' });
    const node = this.volatile_names.get(resolved);
    if (node?.kind !== 'dir') throw os_error('ENOTDIR', `mkdir ${resolved}`);
  }

  async readdir(dir: string): Promise<string[]> {
    const resolved = path.resolve(dir);
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.stopped) throw new SimulatedCrash();
    if (this.volatile_names.get(resolved)?.kind !== 'dir') throw os_error('ENOENT', `readdir ${resolved}`);
    const names: string[] = [];
    for (const name of this.volatile_names.keys()) {
      if (name !== resolved && path.dirname(name) === resolved) names.push(path.basename(name));
    }
    return names.sort();
  }

  async rename(from: string, to: string): Promise<void> {
    const source = path.resolve(from);
    const target = path.resolve(to);
    this.fail_unless_write(await this.begin('rename', source), 'rename', source);
    const node = this.volatile_names.get(source);
    if (!node) throw os_error('ENOENT', `rename ${source}`);
    if (!this.parent_exists(target)) throw os_error('ENOENT', `rename to ${target}`);
    const moved: Array<[string, SimNode]> = [];
    for (const [name, child] of this.volatile_names) {
      if (name === source || name.startsWith(`${source}/`)) moved.push([name, child]);
    }
    for (const [name] of moved) this.volatile_names.delete(name);
    for (const name of [...this.volatile_names.keys()]) {
      if (name === target || name.startsWith(`${target}/`)) this.volatile_names.delete(name);
    }
    for (const [name, child] of moved) this.volatile_names.set(target + name.slice(source.length), child);
  }

  async unlink(file: string): Promise<void> {
    const resolved = path.resolve(file);
    this.fail_unless_write(await this.begin('unlink', resolved), 'unlink', resolved);
    const node = this.volatile_names.get(resolved);
    if (!node) throw os_error('ENOENT', `unlink ${resolved}`);
    if (node.kind === 'dir') throw os_error('EISDIR', `unlink ${resolved}`);
    this.volatile_names.delete(resolved);
  }

  async remove_tree(dir: string): Promise<void> {
    const resolved = path.resolve(dir);
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.stopped) throw new SimulatedCrash();
    for (const name of [...this.volatile_names.keys()]) {
      if (name === resolved || name.startsWith(`${resolved}/`)) this.volatile_names.delete(name);
    }
  }

  async fsync_dir(dir: string): Promise<void> {
    const resolved = path.resolve(dir);
    this.fail_unless_write(await this.begin('fsync_dir', resolved), 'fsync_dir', resolved);
    if (this.volatile_names.get(resolved)?.kind !== 'dir') throw os_error('ENOENT', `fsync_dir ${resolved}`);
    // Entries directly in this directory become durable as they are now. Subtrees renamed here
    // travel with their entry; their own contents follow their own directory fsyncs.
    for (const [name, node] of this.volatile_names) {
      if (path.dirname(name) !== resolved || name === resolved) continue;
      const before = this.durable_names.get(name);
      this.durable_names.set(name, node);
      if (node.kind === 'dir' && before === undefined) this.adopt_renamed_tree(name);
    }
    for (const name of [...this.durable_names.keys()]) {
      if (path.dirname(name) === resolved && !this.volatile_names.has(name)) this.drop_durable_tree(name);
    }
    this.dir_fsyncs++;
  }

  private drop_durable_tree(root: string): void {
    for (const name of [...this.durable_names.keys()]) {
      if (name === root || name.startsWith(`${root}/`)) this.durable_names.delete(name);
    }
  }

  /** A directory that became durable under a new name keeps the durable entries it had before. */
  private adopt_renamed_tree(root: string): void {
    for (const [name, node] of this.volatile_names) {
      if (!name.startsWith(`${root}/`)) continue;
      for (const [old_name, old_node] of this.durable_names) {
        if (old_node === node && old_name !== name) {
          this.durable_names.delete(old_name);
          this.durable_names.set(name, node);
          break;
        }
      }
    }
  }
}
