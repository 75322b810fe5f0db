// Splits a stream of size-prefixed frames (the Kafka framing, both directions) into frames, each in
// a buffer of exactly its size that the reader hands over and never touches again.
//
// Reads land in one buffer reused for the connection's life; once a frame's size is known and much
// of it is still to come, reads land straight in the rest of that frame. So a byte is copied at
// most once between the kernel and its frame, and the bytes of large frames not at all. Node would
// otherwise allocate a fresh buffer for every read, and V8 collects garbage in proportion to what
// is allocated (docs/benchmarks.md, "Garbage collection").

/** Where frames go. */
export interface FrameSink {
  /** Why a frame of `size` bytes (its prefix not counted) is refused, or null to accept it. */
  size_problem(size: number): string | null;
  frame(frame: Buffer): void;
  /** The stream is unusable (a refused size); nothing more is delivered. */
  fail(reason: string): void;
}

/** The reused read buffer of each connection. */
export const READ_BUFFER_BYTES = 64 * 1024;
/** A frame with at least this many bytes still to come is read into directly. */
export const DIRECT_READ_BYTES_MIN = 16 * 1024;

const SIZE_PREFIX_BYTES = 4;

export class FrameReader {
  sink: FrameSink | null = null;
  /** Allocated on the first socket read: a reader fed only through push() (TLS) never needs it. */
  private read_buffer: Buffer | null = null;
  /** The buffer the next read lands in: read_buffer, or the unfilled rest of `frame`. */
  private next: Buffer | null = null;
  private frame: Buffer | null = null;
  private frame_filled = 0;
  private readonly size_bytes = Buffer.alloc(SIZE_PREFIX_BYTES);
  private size_filled = 0;
  private stopped = false;

  constructor(private readonly read_buffer_bytes = READ_BUFFER_BYTES) {}

  /** For `onread.buffer` of a net.Socket: Node asks for the next read's buffer after each read. */
  readonly buffer = (): Buffer => (this.next ??= this.read_buffer = Buffer.allocUnsafe(this.read_buffer_bytes));

  /** For `onread.callback`: `n` bytes arrived in the buffer `buffer()` last returned. */
  readonly on_read = (n: number): boolean => {
    if (this.next === this.read_buffer) {
      this.push(this.read_buffer!.subarray(0, n));
    } else {
      this.frame_filled += n;
      this.complete_frame_if_filled();
    }
    this.choose_next();
    return true;
  };

  /** Bytes from anywhere else (a TLS socket's 'data'); `bytes` is not kept. */
  push(bytes: Buffer): void {
    let at = 0;
    while (at < bytes.length && !this.stopped) {
      if (this.frame !== null) {
        const n = Math.min(this.frame.length - this.frame_filled, bytes.length - at);
        bytes.copy(this.frame, this.frame_filled, at, at + n);
        this.frame_filled += n;
        at += n;
        this.complete_frame_if_filled();
      } else if (this.size_filled === 0 && bytes.length - at >= SIZE_PREFIX_BYTES) {
        this.start_frame(bytes.readInt32BE(at));
        at += SIZE_PREFIX_BYTES;
      } else {
        const n = Math.min(SIZE_PREFIX_BYTES - this.size_filled, bytes.length - at);
        bytes.copy(this.size_bytes, this.size_filled, at, at + n);
        this.size_filled += n;
        at += n;
        if (this.size_filled < SIZE_PREFIX_BYTES) return;
        this.size_filled = 0;
        this.start_frame(this.size_bytes.readInt32BE(0));
      }
    }
  }

  private start_frame(size: number): void {
    const problem = this.sink!.size_problem(size);
    if (problem !== null) {
      this.stopped = true;
      this.sink!.fail(problem);
      return;
    }
    this.frame = Buffer.allocUnsafe(size);
    this.frame_filled = 0;
    this.complete_frame_if_filled();
  }

  private complete_frame_if_filled(): void {
    const frame = this.frame!;
    if (this.frame_filled < frame.length) return;
    this.frame = null;
    this.sink!.frame(frame);
  }

  private choose_next(): void {
    const rest = this.frame === null || this.stopped ? 0 : this.frame.length - this.frame_filled;
    this.next = rest >= DIRECT_READ_BYTES_MIN ? this.frame!.subarray(this.frame_filled) : this.read_buffer!;
  }
}
