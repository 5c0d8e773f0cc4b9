/** A fixed-size ring that keeps the newest `capacity` items; iteration and toArray() give the oldest first. */
export class Ring<T> {
  private readonly items: T[] = [];
  private next = 0;

  constructor(private readonly capacity: number) {}

  push(item: T): void {
    if (this.items.length < this.capacity) this.items.push(item);
    else this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
  }

  get length(): number {
    return this.items.length;
  }

  toArray(): T[] {
    if (this.items.length < this.capacity) return this.items.slice();
    return [...this.items.slice(this.next), ...this.items.slice(0, this.next)];
  }

  *[Symbol.iterator](): Iterator<T> {
    const n = this.items.length;
    const start = n < this.capacity ? 0 : this.next;
    for (let i = 0; i < n; i++) yield this.items[(start + i) % n]!;
  }
}
