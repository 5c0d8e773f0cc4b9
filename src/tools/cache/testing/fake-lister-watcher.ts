/**
 * A scriptable ListerWatcher for tests of anything built on informers. It
 * holds a server-side object set with a resourceVersion counter; mutations
 * are sent to every open watch. Errors can be queued for the next list or
 * watch calls, and open watches can be ended, broken, or sent any event.
 */
import type { KubeList, KubeObject, Status, WatchEvent } from '../../../api/types.js';
import { namespacedKey } from '../../../api/types.js';
import type { ListOptions, Watch, WatchOptions } from '../../../client/interfaces.js';
import { StatusError, newStatus } from '../../../client/errors.js';
import { flushMicrotasks } from '../../../util/clock/clock.js';
import type { ListerWatcher } from '../interfaces.js';
import { RingBuffer } from '../ring-buffer.js';

/** A watch stream fed by hand. */
export interface FakeWatch<T extends KubeObject = KubeObject> extends Watch<T> {
  readonly opts: WatchOptions;
  push(ev: WatchEvent<T>): void;
  /** Ends the stream normally (as a server timeout does). */
  end(): void;
  /** Breaks the stream: the consumer's iteration throws `err`. */
  fail(err: unknown): void;
  /** True once stop() was called or the stream ended. */
  isDone(): boolean;
  /** True when the consumer called stop(). */
  isStopped(): boolean;
}

class FakeWatchImpl<T extends KubeObject> implements FakeWatch<T> {
  private readonly buf = new RingBuffer<WatchEvent<T>>();
  private done = false;
  private stopped = false;
  private error: unknown;
  private waiter: (() => void) | undefined;

  constructor(readonly opts: WatchOptions) {}

  push(ev: WatchEvent<T>): void {
    if (this.done) return;
    this.buf.push(ev);
    this.notify();
  }
  end(): void {
    this.done = true;
    this.notify();
  }
  fail(err: unknown): void {
    if (this.done) return;
    this.error = err;
    this.done = true;
    this.notify();
  }
  stop(): void {
    this.stopped = true;
    this.end();
  }
  isDone(): boolean {
    return this.done;
  }
  isStopped(): boolean {
    return this.stopped;
  }

  private notify(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    return {
      next: async (): Promise<IteratorResult<WatchEvent<T>>> => {
        for (;;) {
          if (this.stopped) return { done: true, value: undefined };
          const ev = this.buf.shift();
          if (ev !== undefined) return { done: false, value: ev };
          if (this.done) {
            if (this.error !== undefined) {
              const e = this.error;
              this.error = undefined;
              throw e;
            }
            return { done: true, value: undefined };
          }
          await new Promise<void>((resolve) => {
            this.waiter = resolve;
          });
        }
      },
      return: async (): Promise<IteratorResult<WatchEvent<T>>> => {
        this.stop();
        return { done: true, value: undefined };
      },
    };
  }
}

export function newFakeWatch<T extends KubeObject = KubeObject>(opts: WatchOptions = {}): FakeWatch<T> {
  return new FakeWatchImpl<T>(opts);
}

export interface FakeListerWatcher<T extends KubeObject = KubeObject> extends ListerWatcher<T> {
  readonly listCalls: ListOptions[];
  readonly watchCalls: WatchOptions[];
  /** Every watch handed out, oldest first. */
  readonly watches: FakeWatch<T>[];
  /** The current resourceVersion of the fake server. */
  resourceVersion(): string;
  /** Server-side objects (a copy of the set). */
  objects(): T[];
  /** Creates or replaces an object, bumps the resourceVersion, sends ADDED/MODIFIED. */
  add(obj: T): T;
  modify(obj: T): T;
  /** Deletes by object or key and sends DELETED (with the new resourceVersion). */
  remove(objOrKey: T | string): void;
  /** Changes the server state without sending anything (events missed while disconnected). */
  setSilently(objs: T[]): void;
  /** Sends a BOOKMARK at the current resourceVersion (or `rv`). */
  bookmark(rv?: string): void;
  /** Sends an ERROR event with `status` to open watches. */
  sendError(status: Status): void;
  /** Ends every open watch normally. */
  endWatches(): void;
  /** Breaks every open watch with `err`. */
  breakWatches(err: unknown): void;
  /** The next list() calls throw these, in order. */
  failLists(...errs: unknown[]): void;
  /** The next watch() calls throw these, in order. */
  failWatches(...errs: unknown[]): void;
  /** Continue tokens issued so far stop working (410 Expired). */
  expireContinueTokens(): void;
  /** The newest watch that is still open. */
  openWatch(): FakeWatch<T> | undefined;
  /** Open watches. */
  openWatchCount(): number;
  /** Lets the event loop turn until `cond` holds; throws after `maxTurns`. */
  until(cond: () => boolean, maxTurns?: number): Promise<void>;
}

/** A 410 Expired error as kube-apiserver returns for an old resourceVersion. */
export function expiredError(message = 'too old resource version: 1 (2)'): StatusError {
  return new StatusError(newStatus(410, 'Expired', message));
}

/** The Status of a 410 watch ERROR event. */
export function goneStatus(message = 'too old resource version: 1 (2)'): Status {
  return newStatus(410, 'Gone', message);
}

class FakeListerWatcherImpl<T extends KubeObject> implements FakeListerWatcher<T> {
  readonly listCalls: ListOptions[] = [];
  readonly watchCalls: WatchOptions[] = [];
  readonly watches: FakeWatch<T>[] = [];
  private rv = 100;
  private readonly store = new Map<string, T>();
  private readonly listErrors: unknown[] = [];
  private readonly watchErrors: unknown[] = [];
  private tokenEpoch = 0;

  constructor(initial: T[]) {
    for (const o of initial) this.put(o);
  }

  resourceVersion(): string {
    return String(this.rv);
  }

  objects(): T[] {
    return Array.from(this.store.values());
  }

  async list(opts: ListOptions): Promise<KubeList<T>> {
    this.listCalls.push({ ...opts });
    if (this.listErrors.length > 0) throw this.listErrors.shift();
    const all = Array.from(this.store.values()).sort((a, b) => namespacedKey(a).localeCompare(namespacedKey(b)));
    let offset = 0;
    let listRV = String(this.rv);
    if (opts.continue) {
      const [epoch, rv, off] = opts.continue.split(':');
      if (Number(epoch) !== this.tokenEpoch) throw expiredError('The provided continue parameter is too old');
      listRV = rv!;
      offset = Number(off);
    }
    const limit = opts.limit && opts.limit > 0 ? opts.limit : all.length;
    const items = all.slice(offset, offset + limit);
    const next = offset + limit < all.length ? `${this.tokenEpoch}:${listRV}:${offset + limit}` : undefined;
    return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: listRV, ...(next ? { continue: next } : {}) }, items };
  }

  async watch(opts: WatchOptions, signal: AbortSignal): Promise<Watch<T>> {
    this.watchCalls.push({ ...opts });
    if (this.watchErrors.length > 0) throw this.watchErrors.shift();
    const w = newFakeWatch<T>(opts);
    this.watches.push(w);
    signal.addEventListener('abort', () => w.stop(), { once: true });
    if (signal.aborted) w.stop();
    return w;
  }

  add(obj: T): T {
    const existed = this.store.has(namespacedKey(obj));
    const stored = this.put(obj);
    this.send({ type: existed ? 'MODIFIED' : 'ADDED', object: stored });
    return stored;
  }

  modify(obj: T): T {
    return this.add(obj);
  }

  remove(objOrKey: T | string): void {
    const key = typeof objOrKey === 'string' ? objOrKey : namespacedKey(objOrKey);
    const old = this.store.get(key);
    if (!old) return;
    this.store.delete(key);
    this.rv++;
    this.send({ type: 'DELETED', object: { ...old, metadata: { ...old.metadata, resourceVersion: String(this.rv) } } });
  }

  setSilently(objs: T[]): void {
    this.store.clear();
    for (const o of objs) this.put(o);
  }

  bookmark(rv?: string): void {
    this.send({ type: 'BOOKMARK', object: { metadata: { resourceVersion: rv ?? String(this.rv) } } });
  }

  sendError(status: Status): void {
    this.send({ type: 'ERROR', object: status });
  }

  endWatches(): void {
    for (const w of this.watches) w.end();
  }

  breakWatches(err: unknown): void {
    for (const w of this.watches) w.fail(err);
  }

  failLists(...errs: unknown[]): void {
    this.listErrors.push(...errs);
  }

  failWatches(...errs: unknown[]): void {
    this.watchErrors.push(...errs);
  }

  expireContinueTokens(): void {
    this.tokenEpoch++;
  }

  openWatch(): FakeWatch<T> | undefined {
    for (let i = this.watches.length - 1; i >= 0; i--) if (!this.watches[i]!.isDone()) return this.watches[i];
    return undefined;
  }

  openWatchCount(): number {
    return this.watches.filter((w) => !w.isDone()).length;
  }

  async until(cond: () => boolean, maxTurns = 200): Promise<void> {
    for (let i = 0; i < maxTurns; i++) {
      if (cond()) return;
      await flushMicrotasks();
    }
    if (!cond()) throw new Error('FakeListerWatcher.until: condition not met');
  }

  private put(obj: T): T {
    this.rv++;
    const stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: String(this.rv) } } as T;
    this.store.set(namespacedKey(stored), stored);
    return stored;
  }

  private send(ev: WatchEvent<T>): void {
    for (const w of this.watches) if (!w.isDone()) w.push(ev);
  }
}

export function newFakeListerWatcher<T extends KubeObject = KubeObject>(initial: T[] = []): FakeListerWatcher<T> {
  return new FakeListerWatcherImpl<T>(initial);
}
