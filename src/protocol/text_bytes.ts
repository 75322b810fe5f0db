// The UTF-8 bytes of texts that repeat from record to record (header keys, exchange names, routing
// keys), encoded once while they keep coming. A cache is cleared whole when full, so texts that
// never repeat cost a map entry each and nothing more. The buffers are shared: never written to.
export class TextBytesCache {
  private readonly entries = new Map<string, Buffer>();

  constructor(private readonly entries_max: number) {}

  bytes(text: string): Buffer {
    let bytes = this.entries.get(text);
    if (bytes === undefined) {
      if (this.entries.size >= this.entries_max) this.entries.clear();
      bytes = Buffer.from(text, 'utf8');
      this.entries.set(text, bytes);
    }
    return bytes;
  }
}
