// Writing the short strings (names, tags, routing keys) that fill most frames on the hot path.
// Buffer#write costs several times a plain loop for strings this short, and nearly all of them
// are ASCII, so those are copied char by char and only the rest go through the UTF-8 encoder.

/** Writes `text` at `at` of `buf` as UTF-8 and returns its byte count; the caller sized `buf`. */
export function write_utf8(buf: Buffer, text: string, at: number): number {
  const length = text.length;
  if (length > 64) return buf.write(text, at, 'utf8');
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code > 0x7f) return buf.write(text, at, 'utf8');
    buf[at + i] = code;
  }
  return length;
}
