/** The binder's view of volumes and claims: the informer cache overlaid with its own writes. */

function rv(obj: { metadata?: { resourceVersion?: string } } | undefined): number {
  const n = Number(obj?.metadata?.resourceVersion ?? '');
  return Number.isFinite(n) ? n : -1;
}

/**
 * The informer cache overlaid with what we wrote (upstream's storeObjectUpdate):
 * between our write and its watch event, the newer object wins, so the next
 * sync does not redo (and conflict on) a step already saved.
 */
export class NewestCache<T extends { metadata?: { resourceVersion?: string } }> {
  private readonly written = new Map<string, T>();
  constructor(private readonly fromInformer: (key: string) => T | undefined) {}
  get(key: string): T | undefined {
    const cached = this.fromInformer(key);
    const mine = this.written.get(key);
    if (!mine) return cached;
    if (!cached) return mine;
    if (rv(cached) >= rv(mine)) {
      this.written.delete(key);
      return cached;
    }
    return mine;
  }
  store(key: string, obj: T): void {
    this.written.set(key, obj);
  }
  forget(key: string): void {
    this.written.delete(key);
  }
}
