// A first-in first-out queue over an array and a head index: taking from the front costs no copy,
// and the array is dropped once everything in it was taken (the append path's queues empty often).

export class Fifo<T> {
  private items: T[] = [];
  private head = 0;

  get size(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The item `index` places from the front, undefined past the end. */
  at(index: number): T | undefined {
    return index < this.size ? this.items[this.head + index] : undefined;
  }

  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.items[this.head++];
    this.drop_taken();
    return item;
  }

  /** Removes `count` items from the front. */
  discard(count: number): void {
    this.head = Math.min(this.items.length, this.head + count);
    this.drop_taken();
  }

  /** Empties the queue, returning what it held, oldest first. */
  take_all(): T[] {
    const rest = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return rest;
  }

  private drop_taken(): void {
    if (this.head < this.items.length) return;
    this.items = [];
    this.head = 0;
  }
}
