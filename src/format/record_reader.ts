// The records inside an uncompressed record batch v2: each is a varint length, an attributes byte,
// zigzag varints for the timestamp and offset deltas, varint-length key and value, and a varint
// count of headers (each a varint-length name and value). RecordReader walks those fields over a
// bounded range; the writers below size and write the same varints. The one varint reader and
// writer for records (Kafka's request framing has its own unsigned varints in protocol/kafka/wire.ts).
// Imports nothing; the storage time index, delay headers, the record codec and the SDK use it.

/** The bytes of a record do not follow the format. */
export class RecordFormatError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RecordFormatError';
  }
}

/** A zigzag varint is at most this long (64-bit values). */
const VARINT_BYTES_MAX = 10;

/**
 * Views of a buffer's memory, made once per key and value of every record read. Buffer.from(array
 * buffer, offset, length) and subarray check their arguments and look up the species on each call
 * (about 115 ns, against 40 for the construction itself). Node's Buffer species is the class its
 * Buffers are made of (their prototype is Buffer.prototype), so these views are Buffers in every
 * respect, deepStrictEqual included; a runtime without it gets Buffer.from.
 */
type ViewClass = new (memory: ArrayBufferLike, byte_offset: number, length: number) => Buffer;

function view_class(): ViewClass {
  const species = (Buffer as unknown as Record<symbol, unknown>)[Symbol.species];
  if (typeof species === 'function') {
    const made: unknown = new (species as ViewClass)(new ArrayBuffer(1), 0, 1);
    if (Object.getPrototypeOf(made) === Buffer.prototype) return species as ViewClass;
  }
  return function view(memory: ArrayBufferLike, byte_offset: number, length: number) {
    return Buffer.from(memory, byte_offset, length);
  } as unknown as ViewClass;
}

const BufferView = view_class();

/** A Buffer over `length` bytes of `buffer`'s memory from `start` on (as subarray gives, at a third of the cost). */
function buffer_view(buffer: Buffer, start: number, length: number): Buffer {
  return new BufferView(buffer.buffer, buffer.byteOffset + start, length);
}

/**
 * Reads record fields from `at` up to `end` (exclusive, the end of the batch's records); every read
 * stays inside the range, and inside the record once one is entered.
 */
export class RecordReader {
  /** Where reads must stop: the end of the record entered, else of the batch. */
  end: number;
  private readonly batch_end: number;

  constructor(
    readonly buffer: Buffer,
    public at: number,
    end: number,
  ) {
    this.end = end;
    this.batch_end = end;
  }

  /** A zigzag varint (exact for values within ±2^53). */
  varint(): number {
    const buffer = this.buffer;
    if (this.at < this.end) {
      const first = buffer[this.at]!;
      if ((first & 0x80) === 0) {
        this.at++;
        return (first >>> 1) ^ -(first & 1);
      }
    }
    let unsigned = 0;
    let scale = 1;
    for (let i = 0; i < VARINT_BYTES_MAX; i++) {
      if (this.at >= this.end) throw new RecordFormatError('a varint runs past the end of its record');
      const byte = buffer[this.at++]!;
      unsigned += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return unsigned % 2 === 0 ? unsigned / 2 : -(unsigned + 1) / 2;
      scale *= 128;
    }
    throw new RecordFormatError('a varint longer than 10 bytes');
  }

  /** A varint-length byte field as a view of the buffer (null for length -1). */
  bytes(): Buffer | null {
    const length = this.field_length();
    if (length < 0) return null;
    const start = this.at;
    this.at += length;
    return buffer_view(this.buffer, start, length);
  }

  /** The length of the byte field that starts here, moving past the length only (-1: null). */
  field_length(): number {
    const length = this.varint();
    if (length > 0 && this.at + length > this.end)
      throw new RecordFormatError('a field runs past the end of its record');
    return length;
  }

  /** Skips a varint-length byte field. */
  skip_bytes(): void {
    const length = this.field_length();
    if (length > 0) this.at += length;
  }

  /** One byte (a record's attributes). */
  byte(): number {
    if (this.at >= this.end) throw new RecordFormatError('a record runs past the end of its batch');
    return this.buffer[this.at++]!;
  }

  /**
   * Enters the record at the reader's position: reads its length, after which reads stay inside
   * the record. Returns where the record ends.
   */
  enter_record(): number {
    const length = this.varint();
    const record_end = this.at + length;
    if (length < 1 || record_end > this.batch_end)
      throw new RecordFormatError('a record runs past the end of its batch');
    this.end = record_end;
    return record_end;
  }

  /** Moves past the record entered last, however much of it was read. */
  leave_record(): void {
    this.at = this.end;
    this.end = this.batch_end;
  }
}

function zigzag(value: number): number {
  return value >= 0 ? value * 2 : -value * 2 - 1;
}

/** Bytes of `value` as a zigzag varint. */
export function varint_size(value: number): number {
  if (value >= -64 && value < 64) return 1; // most lengths, deltas and counts in a record
  let unsigned = zigzag(value);
  let size = 1;
  while (unsigned >= 128) {
    unsigned = Math.floor(unsigned / 128);
    size++;
  }
  return size;
}

/** Writes `value` as a zigzag varint at `position`; returns the position after it. */
export function write_varint(buffer: Buffer, position: number, value: number): number {
  if (value >= -64 && value < 64) {
    buffer[position] = value >= 0 ? value * 2 : -value * 2 - 1;
    return position + 1;
  }
  let unsigned = zigzag(value);
  while (unsigned >= 128) {
    buffer[position++] = (unsigned % 128) | 0x80;
    unsigned = Math.floor(unsigned / 128);
  }
  buffer[position++] = unsigned;
  return position;
}
