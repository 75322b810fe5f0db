// Kafka primitive types on the wire: a bounds-checked reader and a chunked writer. The writer keeps
// large byte fields (record batches) as references instead of copying them, so a fetch response
// goes to the socket as the stored buffers themselves.

export class ProtocolDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtocolDecodeError';
  }
}

const TWO_POW_32 = 0x1_0000_0000;
const INT64_MAX_AS_NUMBER = 2 ** 63;

export class Reader {
  position: number;

  constructor(
    readonly buffer: Buffer,
    position = 0,
    readonly end = buffer.length,
  ) {
    this.position = position;
  }

  get remaining(): number {
    return this.end - this.position;
  }

  private need(bytes: number): number {
    const at = this.position;
    if (bytes < 0 || at + bytes > this.end) {
      throw new ProtocolDecodeError(`need ${bytes} bytes at ${at}, only ${this.end - at} remain`);
    }
    this.position = at + bytes;
    return at;
  }

  int8(): number {
    return this.buffer.readInt8(this.need(1));
  }
  uint8(): number {
    return this.buffer[this.need(1)]!;
  }
  int16(): number {
    return this.buffer.readInt16BE(this.need(2));
  }
  uint16(): number {
    return this.buffer.readUInt16BE(this.need(2));
  }
  int32(): number {
    return this.buffer.readInt32BE(this.need(4));
  }
  uint32(): number {
    return this.buffer.readUInt32BE(this.need(4));
  }
  int64(): number {
    const at = this.need(8);
    return this.buffer.readInt32BE(at) * TWO_POW_32 + this.buffer.readUInt32BE(at + 4);
  }
  float64(): number {
    return this.buffer.readDoubleBE(this.need(8));
  }
  bool(): boolean {
    return this.buffer[this.need(1)] !== 0;
  }

  /** Unsigned LEB128, at most 5 bytes (fits an int32 length or count). */
  uvarint(): number {
    let value = 0;
    let scale = 1;
    for (let i = 0; i < 5; i++) {
      const byte = this.buffer[this.need(1)]!;
      value += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) return value;
      scale *= 128;
    }
    throw new ProtocolDecodeError('unsigned varint longer than 5 bytes');
  }

  bytes_slice(length: number): Buffer {
    const at = this.need(length);
    return this.buffer.subarray(at, at + length);
  }

  uuid(): string {
    return this.bytes_slice(16).toString('base64url');
  }

  /** A length checked against the bytes left, so a hostile length cannot make us allocate. */
  checked_length(length: number, element_bytes_min: number, what: string): number {
    if (length < 0 || length * element_bytes_min > this.remaining) {
      throw new ProtocolDecodeError(`${what} length ${length} exceeds the ${this.remaining} bytes left`);
    }
    return length;
  }
}

/** Byte fields at least this large are kept by reference instead of being copied. */
const REFERENCE_BYTES_MIN = 1024;
/** First scratch size; it doubles as a message grows (most responses are small). */
const SCRATCH_BYTES_INITIAL = 512;
const SCRATCH_BYTES_MAX = 64 * 1024;

export class Writer {
  private readonly chunks: Buffer[] = [];
  private scratch: Buffer = Buffer.allocUnsafe(SCRATCH_BYTES_INITIAL);
  private scratch_size = SCRATCH_BYTES_INITIAL;
  private at = 0;
  private flushed = 0;

  get length(): number {
    return this.flushed + this.at;
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.scratch.length) return;
    this.flush_scratch();
    this.scratch_size = Math.min(SCRATCH_BYTES_MAX, this.scratch_size * 2);
    if (this.scratch.length < Math.max(bytes, 64))
      this.scratch = Buffer.allocUnsafe(Math.max(bytes, this.scratch_size));
  }

  private flush_scratch(): void {
    if (this.at === 0) return;
    this.chunks.push(this.scratch.subarray(0, this.at));
    this.flushed += this.at;
    this.scratch =
      this.scratch.length - this.at >= 64 ? this.scratch.subarray(this.at) : Buffer.allocUnsafe(this.scratch_size);
    this.at = 0;
  }

  int8(value: number): void {
    this.room(1);
    this.scratch.writeInt8(value, this.at);
    this.at += 1;
  }
  uint8(value: number): void {
    this.room(1);
    this.scratch[this.at++] = value;
  }
  int16(value: number): void {
    this.room(2);
    this.scratch.writeInt16BE(value, this.at);
    this.at += 2;
  }
  uint16(value: number): void {
    this.room(2);
    this.scratch.writeUInt16BE(value, this.at);
    this.at += 2;
  }
  int32(value: number): void {
    this.room(4);
    this.scratch.writeInt32BE(value, this.at);
    this.at += 4;
  }
  uint32(value: number): void {
    this.room(4);
    this.scratch.writeUInt32BE(value >>> 0, this.at);
    this.at += 4;
  }
  int64(value: number): void {
    this.room(8);
    if (value >= INT64_MAX_AS_NUMBER) {
      // Long.MAX_VALUE has no exact double; 2^63 is what decoding it gives, so write it back as such.
      this.scratch.writeBigInt64BE(0x7fffffffffffffffn, this.at);
      this.at += 8;
      return;
    }
    const high = Math.floor(value / TWO_POW_32);
    this.scratch.writeInt32BE(high, this.at);
    this.scratch.writeUInt32BE(value - high * TWO_POW_32, this.at + 4);
    this.at += 8;
  }
  float64(value: number): void {
    this.room(8);
    this.scratch.writeDoubleBE(value, this.at);
    this.at += 8;
  }
  bool(value: boolean): void {
    this.uint8(value ? 1 : 0);
  }
  uvarint(value: number): void {
    this.room(5);
    let rest = value;
    while (rest >= 0x80) {
      this.scratch[this.at++] = (rest & 0x7f) | 0x80;
      rest = Math.floor(rest / 128);
    }
    this.scratch[this.at++] = rest;
  }
  uuid(value: string): void {
    const bytes = Buffer.from(value, 'base64url');
    if (bytes.length !== 16) throw new RangeError(`not a 16-byte UUID: ${value}`);
    this.raw(bytes);
  }

  /** Appends bytes; large ones by reference (the caller must not change them afterwards). */
  raw(bytes: Buffer): void {
    if (bytes.length >= REFERENCE_BYTES_MIN) {
      this.flush_scratch();
      this.chunks.push(bytes);
      this.flushed += bytes.length;
      return;
    }
    this.room(bytes.length);
    bytes.copy(this.scratch, this.at);
    this.at += bytes.length;
  }

  /** Reserves an int32 to fill in later (frame sizes); returns a setter. */
  reserve_int32(): (value: number) => void {
    this.room(4);
    const buffer = this.scratch;
    const at = this.at;
    this.at += 4;
    return (value: number) => buffer.writeInt32BE(value, at);
  }

  finish(): Buffer[] {
    this.flush_scratch();
    return this.chunks;
  }

  /** One contiguous buffer (copies; for tests and small messages). */
  to_buffer(): Buffer {
    const chunks = this.finish();
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  }
}
