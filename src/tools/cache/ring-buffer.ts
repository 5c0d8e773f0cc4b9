/**
 * An unbounded first-in first-out buffer with O(1) push and shift (a growable
 * ring). Used where an Array's shift() would be O(n) on long queues: the
 * DeltaFIFO's key queue and each listener's pending notifications.
 */
export class RingBuffer<T> {
  private buf: (T | undefined)[];
  private head = 0;
  private size = 0;

  constructor(initialCapacity = 16) {
    let cap = 1;
    while (cap < initialCapacity) cap <<= 1;
    this.buf = new Array<T | undefined>(cap);
  }

  get length(): number {
    return this.size;
  }

  push(item: T): void {
    if (this.size === this.buf.length) this.grow();
    this.buf[(this.head + this.size) & (this.buf.length - 1)] = item;
    this.size++;
  }

  /** The oldest item, removed; undefined when empty. */
  shift(): T | undefined {
    if (this.size === 0) return undefined;
    const item = this.buf[this.head];
    this.buf[this.head] = undefined;
    this.head = (this.head + 1) & (this.buf.length - 1);
    this.size--;
    return item;
  }

  peek(): T | undefined {
    return this.size === 0 ? undefined : this.buf[this.head];
  }

  clear(): void {
    this.buf = new Array<T | undefined>(16);
    this.head = 0;
    this.size = 0;
  }

  *[Symbol.iterator](): IterableIterator<T> {
    for (let i = 0; i < this.size; i++) yield this.buf[(this.head + i) & (this.buf.length - 1)] as T;
  }

  private grow(): void {
    const old = this.buf;
    const next = new Array<T | undefined>(old.length * 2);
    for (let i = 0; i < this.size; i++) next[i] = old[(this.head + i) & (old.length - 1)];
    this.buf = next;
    this.head = 0;
  }
}
