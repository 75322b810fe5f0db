// The `message-id` header the producer gives every message without one: a random (version 4)
// UUID as randomUUID() writes it, formatted by the record encoder straight into the batch it
// encodes (no string or Buffer per message), from random bytes drawn 1,024 ids at a time.
import { randomFillSync } from 'node:crypto';
import type { GeneratedHeader } from '../protocol/record_batch.ts';

export const MESSAGE_ID_HEADER = 'message-id';
/** Ids formatted per draw of random bytes. */
const MESSAGE_IDS_PER_DRAW = 1024;
const MESSAGE_ID_BYTES = 36;
const UUID_RANDOM_BYTES = 16;
const HEX_DIGITS = Buffer.from('0123456789abcdef', 'latin1');

export class MessageIds implements GeneratedHeader {
  readonly key = MESSAGE_ID_HEADER;
  readonly value_bytes = MESSAGE_ID_BYTES;
  private readonly random = Buffer.allocUnsafeSlow(MESSAGE_IDS_PER_DRAW * UUID_RANDOM_BYTES);
  private used = MESSAGE_IDS_PER_DRAW;

  /** Writes the next id, 36 bytes, at `position`. */
  write(buffer: Buffer, position: number): void {
    if (this.used === MESSAGE_IDS_PER_DRAW) {
      randomFillSync(this.random);
      this.used = 0;
    }
    const random = this.random;
    const r = this.used++ * UUID_RANDOM_BYTES;
    random[r + 6] = (random[r + 6]! & 0x0f) | 0x40; // version 4
    random[r + 8] = (random[r + 8]! & 0x3f) | 0x80; // variant 10
    let at = position;
    for (let b = 0; b < UUID_RANDOM_BYTES; b++) {
      if (b === 4 || b === 6 || b === 8 || b === 10) buffer[at++] = 0x2d; // '-'
      const byte = random[r + b]!;
      buffer[at++] = HEX_DIGITS[byte >> 4]!;
      buffer[at++] = HEX_DIGITS[byte & 0x0f]!;
    }
  }
}
