// Splits the byte stream a client sends into AMQP 0-9-1 frames: first the 8-byte protocol header,
// then frames of type (1), channel (2), payload size (4), payload and the frame-end octet. Bytes may
// arrive split anywhere; the same frames come out. A frame lying whole in one chunk is handed out
// as a view into that chunk (no copy); only a frame spanning chunks is assembled, once its size is
// known and checked against frame_max, into a buffer of exactly its size.
//
// Use: push(chunk), then call take_protocol_header() until it stops saying 'incomplete' ('wrong':
// answer with our own header and close), then next() until it returns null, after every push.
// Drained like that, the reader holds at most one chunk and one partly received frame.
import {
  AmqpError,
  FRAME_BODY,
  FRAME_END,
  FRAME_HEADER,
  FRAME_HEARTBEAT,
  FRAME_METHOD,
  FRAME_OVERHEAD_BYTES,
  PROTOCOL_HEADER,
  ReplyCode,
} from './constants.ts';

export interface Frame {
  type: number;
  channel: number;
  /** A view into the pushed chunk when the frame lay whole in it: pushed chunks must not be reused. */
  payload: Buffer;
}

export type ProtocolHeaderResult = 'ok' | 'wrong' | 'incomplete';

export interface FrameReaderOptions {
  /** Whether the stream starts with the protocol header (a server's view); true unless told. */
  protocol_header?: boolean;
}

/** Type, channel and size: what must be known before a frame's size can be checked. */
const PREFIX_BYTES = 7;

function check_frame_max(bytes: number): number {
  if (!Number.isInteger(bytes) || bytes < FRAME_OVERHEAD_BYTES) {
    throw new RangeError(`frame_max ${bytes} must be an integer of at least ${FRAME_OVERHEAD_BYTES} bytes`);
  }
  return bytes;
}

function is_frame_type(type: number): boolean {
  return type === FRAME_METHOD || type === FRAME_HEADER || type === FRAME_BODY || type === FRAME_HEARTBEAT;
}

export class FrameReader {
  private frame_max_bytes: number;
  private header_state: 'expected' | 'ok' | 'wrong';
  private readonly header_received = Buffer.alloc(PROTOCOL_HEADER.length);
  private header_filled = 0;
  /** Input not read yet; chunks[0] from offset chunk_at. */
  private readonly chunks: Buffer[] = [];
  private chunk_at = 0;
  /** The prefix of a frame split before its size was known. */
  private readonly prefix = Buffer.alloc(PREFIX_BYTES);
  private prefix_filled = 0;
  /** A frame spanning chunks, whole (prefix to end octet), and how much of it has arrived. */
  private partial: Buffer | null = null;
  private partial_filled = 0;
  /** Once the stream is found malformed it stays so: the bytes after a bad frame mean nothing. */
  private failure: AmqpError | null = null;

  constructor(frame_max_bytes: number, options: FrameReaderOptions = {}) {
    this.frame_max_bytes = check_frame_max(frame_max_bytes);
    this.header_state = options.protocol_header === false ? 'ok' : 'expected';
  }

  /** The negotiated frame_max (connection.tune-ok); it applies to frames not yet begun. */
  set_frame_max(bytes: number): void {
    this.frame_max_bytes = check_frame_max(bytes);
  }

  push(chunk: Buffer): void {
    if (chunk.length > 0) this.chunks.push(chunk);
  }

  /** Bytes held: pushed but not read, and the part received of a frame spanning chunks. */
  get buffered_bytes(): number {
    let bytes = this.prefix_filled + this.partial_filled - this.chunk_at;
    for (const chunk of this.chunks) bytes += chunk.length;
    return bytes;
  }

  /** The protocol header bytes received so far (for a log line about a wrong one). */
  get protocol_header_received(): Buffer {
    return Buffer.from(this.header_received.subarray(0, this.header_filled));
  }

  /**
   * Reads the protocol header: 'ok' once all 8 bytes match AMQP 0-9-1's, 'wrong' as soon as one
   * byte differs (nothing more is read then), 'incomplete' while it could still be right.
   */
  take_protocol_header(): ProtocolHeaderResult {
    while (this.header_state === 'expected' && this.header_filled < PROTOCOL_HEADER.length) {
      const chunk = this.chunks[0];
      if (chunk === undefined) return 'incomplete';
      const byte = chunk[this.chunk_at]!;
      this.header_received[this.header_filled] = byte;
      if (byte !== PROTOCOL_HEADER[this.header_filled]) this.header_state = 'wrong';
      this.header_filled += 1;
      this.advance(1);
    }
    if (this.header_state === 'expected') this.header_state = 'ok';
    return this.header_state === 'ok' ? 'ok' : 'wrong';
  }

  /** The next whole frame, or null until more bytes are pushed; throws FRAME_ERROR on a malformed one. */
  next(): Frame | null {
    if (this.failure !== null) throw this.failure;
    if (this.header_state !== 'ok') throw new Error('frames read before take_protocol_header() returned ok');
    try {
      return this.read_frame();
    } catch (error) {
      if (error instanceof AmqpError) this.failure = error;
      throw error;
    }
  }

  private advance(bytes: number): void {
    this.chunk_at += bytes;
    if (this.chunk_at === this.chunks[0]!.length) {
      this.chunks.shift();
      this.chunk_at = 0;
    }
  }

  private read_frame(): Frame | null {
    for (let chunk = this.chunks[0]; chunk !== undefined; chunk = this.chunks[0]) {
      const at = this.chunk_at;
      const available = chunk.length - at;
      if (this.partial !== null) {
        const frame = this.partial;
        const bytes = Math.min(frame.length - this.partial_filled, available);
        chunk.copy(frame, this.partial_filled, at, at + bytes);
        this.partial_filled += bytes;
        this.advance(bytes);
        if (this.partial_filled < frame.length) continue;
        this.partial = null;
        this.partial_filled = 0;
        return this.finish(frame, 0, frame.length - FRAME_OVERHEAD_BYTES);
      }
      if (this.prefix_filled > 0 || available < PREFIX_BYTES) {
        const bytes = Math.min(PREFIX_BYTES - this.prefix_filled, available);
        chunk.copy(this.prefix, this.prefix_filled, at, at + bytes);
        this.prefix_filled += bytes;
        this.advance(bytes);
        if (this.prefix_filled < PREFIX_BYTES) continue;
        this.prefix_filled = 0;
        this.begin_partial(this.prefix, 0, PREFIX_BYTES);
        continue;
      }
      const size = this.checked_size(chunk, at);
      if (available >= size + FRAME_OVERHEAD_BYTES) {
        this.advance(size + FRAME_OVERHEAD_BYTES);
        return this.finish(chunk, at, size);
      }
      this.begin_partial(chunk, at, available);
      this.advance(available);
    }
    return null;
  }

  /** The payload size of the frame whose prefix is at `at`, once its type and size pass. */
  private checked_size(buf: Buffer, at: number): number {
    const type = buf[at]!;
    if (!is_frame_type(type)) throw new AmqpError(ReplyCode.FRAME_ERROR, `unknown frame type ${type}`);
    const size = buf.readUInt32BE(at + 3);
    if (size + FRAME_OVERHEAD_BYTES > this.frame_max_bytes) {
      throw new AmqpError(
        ReplyCode.FRAME_ERROR,
        `frame of ${size + FRAME_OVERHEAD_BYTES} bytes exceeds frame_max ${this.frame_max_bytes}`,
      );
    }
    return size;
  }

  /** Starts assembling a frame from its first `bytes` bytes (at least the prefix) at `at` of `buf`. */
  private begin_partial(buf: Buffer, at: number, bytes: number): void {
    const size = this.checked_size(buf, at);
    this.partial = Buffer.allocUnsafe(size + FRAME_OVERHEAD_BYTES);
    this.partial_filled = buf.copy(this.partial, 0, at, at + bytes);
  }

  private finish(buf: Buffer, at: number, size: number): Frame {
    const end = buf[at + PREFIX_BYTES + size]!;
    if (end !== FRAME_END) {
      throw new AmqpError(
        ReplyCode.FRAME_ERROR,
        `frame end octet is 0x${end.toString(16).padStart(2, '0')}, not 0xce (type ${buf[at]}, ${size} payload bytes)`,
      );
    }
    return {
      type: buf[at]!,
      channel: buf.readUInt16BE(at + 1),
      payload: buf.subarray(at + PREFIX_BYTES, at + PREFIX_BYTES + size),
    };
  }
}
