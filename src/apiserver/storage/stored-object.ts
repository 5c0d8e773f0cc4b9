/**
 * Encoding of stored objects, shared by the backends.
 *
 * Objects are handed out deep-frozen with `metadata.resourceVersion` set to
 * the revision of their write, so one decoded object can be shared by every
 * reader and watcher and nobody can change stored state through it. The
 * SQLite backend keeps each value as that object's JSON, resourceVersion
 * included (values written before kept none: decoding sets it either way),
 * so the text of a write is also its response and its watch events' object.
 *
 * Decoding is the dominant cost of loading a large store, so values read in
 * bulk (the watch cache's initial load) are decoded lazily, on first read, by
 * LazyStoredObject.
 */
import type { KubeObject } from '../../api/types.js';
import { StorageError, type ListResult, type StoredObject } from './storage.js';

/**
 * JSON text of `obj` without metadata.resourceVersion; with `revision`, with
 * metadata.resourceVersion set to it as the last field of metadata: exactly
 * the text of what decodeObject(text, revision) returns (see storedText).
 */
export function encodeObject(obj: KubeObject, revision?: number): string {
  const meta = obj.metadata as Record<string, unknown> | null | undefined;
  if (revision === undefined && (meta == null || meta.resourceVersion === undefined)) return JSON.stringify(obj);
  // The copies {...obj, metadata: {...rest, resourceVersion}} would make, by loops (a quarter of the cost saved).
  const m: Record<string, unknown> = {};
  if (meta != null) for (const k of Object.keys(meta)) if (k !== 'resourceVersion') m[k] = meta[k];
  if (revision !== undefined) m.resourceVersion = String(revision);
  const o: Record<string, unknown> = {};
  let placed = false;
  for (const k of Object.keys(obj)) {
    if (k === 'metadata') {
      o.metadata = m;
      placed = true;
    } else o[k] = (obj as Record<string, unknown>)[k];
  }
  if (!placed) o.metadata = m;
  return JSON.stringify(o);
}

/**
 * The JSON texts of the objects a backend decoded in its latest write batch
 * (the text each was decoded from, resourceVersion included): the write's
 * response and its watch events are that text, so the API server writes it
 * rather than encoding the object again. Replaced by every batch, so only
 * one batch's texts are kept: responses and events of a write go out in the
 * same turn of the event loop as the batch (later ones encode as before).
 */
let batchTexts = new WeakMap<object, string>();

/** Starts a new batch of remembered texts (dropping the previous one's). */
export function beginTextBatch(): void {
  batchTexts = new WeakMap();
}

/** Remembers `text` as the exact JSON of the frozen stored object `obj` for this batch. */
export function rememberText(obj: KubeObject, text: string): void {
  batchTexts.set(obj, text);
}

/** The exact JSON text of the stored object `obj`, when its batch is the latest; else undefined. */
export function storedText(obj: KubeObject): string | undefined {
  return batchTexts.get(obj);
}

/** Views (shallow copies served at a version) of stored objects, by view. */
const viewSources = new WeakMap<object, KubeObject>();

/** Records that `view` was made from the stored object `stored` (its JSON may then be storedText's; see jsonTextOf). */
export function rememberView(view: KubeObject, stored: KubeObject): void {
  viewSources.set(view, stored);
}

/**
 * The exact JSON text of `value` when it is a stored object of the latest
 * batch or a view of one whose fields are still the stored object's, in the
 * same order (the same values: a view only re-sets apiVersion and kind);
 * undefined otherwise.
 */
export function jsonTextOf(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const direct = batchTexts.get(value);
  if (direct !== undefined) return direct;
  const stored = viewSources.get(value);
  if (stored === undefined) return undefined;
  const text = batchTexts.get(stored);
  if (text === undefined) return undefined;
  const a = Object.keys(value);
  const b = Object.keys(stored);
  if (a.length !== b.length) return undefined;
  for (let i = 0; i < a.length; i++) {
    const k = a[i]!;
    if (k !== b[i] || (value as Record<string, unknown>)[k] !== (stored as Record<string, unknown>)[k]) return undefined;
  }
  return text;
}

/** Decodes `json`, sets metadata.resourceVersion to `revision`, and deep-freezes the result. */
export function decodeObject(json: string, revision: number): KubeObject {
  const obj = JSON.parse(json) as KubeObject;
  const meta = obj.metadata as Record<string, unknown> | undefined;
  // the parsed object is ours: set the field in place (it comes last, as the value has none)
  if (typeof meta === 'object' && meta !== null && !Array.isArray(meta)) meta.resourceVersion = String(revision);
  else obj.metadata = { ...(meta ?? {}), resourceVersion: String(revision) };
  return deepFreeze(obj);
}

/** A frozen copy of `obj` sharing its (frozen) parts, with metadata.resourceVersion = `revision`. */
export function withRevision(obj: KubeObject, revision: number): KubeObject {
  const copy: KubeObject = { ...obj, metadata: Object.freeze({ ...(obj.metadata ?? {}), resourceVersion: String(revision) }) };
  return Object.freeze(copy);
}

/** Freezes `v` and everything reachable from it; returns `v`. For acyclic plain JSON values. */
export function deepFreeze<T>(v: T): T {
  if (typeof v === 'object' && v !== null) freezeObject(v);
  return v;
}

function freezeObject(v: object): void {
  Object.freeze(v);
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const x: unknown = v[i];
      if (typeof x === 'object' && x !== null) freezeObject(x);
    }
  } else {
    for (const k in v) {
      const x = (v as Record<string, unknown>)[k];
      if (typeof x === 'object' && x !== null) freezeObject(x);
    }
  }
}

/**
 * Synchronous reads of encoded values by revision: a backend's value table,
 * for objects decoded on first read. Throws StorageError 'Closed' once the
 * backend is closed.
 */
export interface EncodedReader {
  /** The encoded value written at `revision`; undefined when none is stored there (tombstone, compacted). */
  read(revision: number): string | undefined;
  /** The encoded values written at `revisions`, by revision; revisions without a value are absent. */
  readMany(revisions: readonly number[]): Map<number, string>;
}

/**
 * A StoredObject whose value is decoded (parsed, given its resourceVersion,
 * deep-frozen) on the first read of `object`, and then kept: every reader
 * shares that one decoded object. Until then it holds the encoded JSON, or
 * only its revision and a reader that fetches the JSON from the backend
 * (with the other members of its read group, see `readTogether`).
 *
 * `object` is a getter on the prototype: read it, never copy the StoredObject
 * with spread or structuredClone. Decoding errors (a corrupt row) and reads
 * after the backend closed throw from the getter as StorageError.
 *
 * invariant: exactly one of obj, json, reader is set.
 */
export class LazyStoredObject implements StoredObject {
  private obj: KubeObject | undefined;
  private json: string | undefined;
  private reader: EncodedReader | undefined;
  /** Objects whose values are read in one batch with this one's (set by readTogether). */
  private group: LazyStoredObject[] | undefined;

  constructor(
    readonly key: string,
    readonly revision: number,
    source: string | EncodedReader,
  ) {
    if (typeof source === 'string') this.json = source;
    else this.reader = source;
  }

  get object(): KubeObject {
    if (this.obj === undefined) {
      if (this.reader !== undefined) this.readValue();
      try {
        this.obj = decodeObject(this.json!, this.revision);
      } catch (err) {
        const e = new StorageError('Internal', this.key, `cannot decode the value at revision ${this.revision}: ${err instanceof Error ? err.message : String(err)}`);
        e.cause = err;
        throw e;
      }
      this.json = undefined;
    }
    return this.obj;
  }

  /** The reader `object` would fetch the value from; undefined once the value is in hand. */
  pendingReader(): EncodedReader | undefined {
    return this.reader;
  }

  /**
   * Called when a newer write replaced this revision: takes `prev` (the
   * replaced value, as the write's event carries it), or else reads the value
   * now, so that holders of this object never need the backend row, which
   * compaction may remove.
   */
  superseded(prev: KubeObject | undefined): void {
    if (this.reader === undefined) return;
    if (prev !== undefined && prev.metadata?.resourceVersion === String(this.revision)) {
      this.obj = prev;
      this.reader = undefined;
      this.group = undefined;
      return;
    }
    this.readValue();
  }

  private readValue(): void {
    const group = this.group;
    if (group !== undefined) LazyStoredObject.readAll(group);
    if (this.reader === undefined) return;
    const json = this.reader.read(this.revision);
    if (json === undefined) throw new StorageError('Internal', this.key, `no value stored at revision ${this.revision}`);
    this.fill(json);
  }

  private fill(json: string): void {
    this.json = json;
    this.reader = undefined;
    this.group = undefined;
  }

  /** Reads the values of the members of `batch` that still need one, in one batch per reader. */
  static readAll(batch: readonly LazyStoredObject[]): void {
    const byReader = new Map<EncodedReader, LazyStoredObject[]>();
    for (const o of batch) {
      if (o.reader === undefined) continue;
      let list = byReader.get(o.reader);
      if (!list) byReader.set(o.reader, (list = []));
      list.push(o);
    }
    for (const [reader, list] of byReader) {
      if (list.length === 1) {
        const json = reader.read(list[0]!.revision);
        if (json !== undefined) list[0]!.fill(json);
        continue;
      }
      const values = reader.readMany(list.map((o) => o.revision));
      for (const o of list) {
        const json = values.get(o.revision);
        if (json !== undefined) o.fill(json);
      }
    }
  }

  /** Makes `group` the read group of each of its members. */
  static join(group: LazyStoredObject[]): void {
    for (const o of group) o.group = group;
  }
}

/**
 * Reads now, in batches, the values of the lazy objects among `items` that
 * have not been read yet, so that none of them depends on the backend any
 * more (a list at a past revision, whose rows compaction may remove).
 */
export function prefetch(items: readonly StoredObject[]): void {
  const lazy = items.filter((i): i is LazyStoredObject => i instanceof LazyStoredObject && i.pendingReader() !== undefined);
  if (lazy.length > 0) LazyStoredObject.readAll(lazy);
}

/**
 * Puts the not-yet-read lazy objects among `items` (a list about to be
 * served) into read groups of up to `size`: the first read of one object
 * reads the values of its whole group in one batch. Nothing is read now, so a
 * list whose objects are never read (counting keys) costs no reads.
 */
export function readTogether(items: readonly StoredObject[], size = 1024): void {
  let group: LazyStoredObject[] = [];
  for (const it of items) {
    if (!(it instanceof LazyStoredObject) || it.pendingReader() === undefined) continue;
    group.push(it);
    if (group.length === size) {
      LazyStoredObject.join(group);
      group = [];
    }
  }
  if (group.length > 1) LazyStoredObject.join(group);
}

/**
 * Optional capability of a backend, for a cache in front of it
 * (watch-cache.ts): the latest state without reading or decoding values.
 */
export interface LazyListSource {
  /**
   * The live keys under `prefix` at the current revision, in key order, as
   * objects that read and decode their values on first use. Until read, such
   * an object depends on its backend row: it stays readable while its
   * revision is the key's latest, and after `superseded` (the holder passes
   * the replaced value from the event of the write that replaced it).
   */
  listLazy(prefix: string): ListResult;
  /** The object at `key`'s latest revision `revision`, unread (as listLazy's). */
  lazyObject(key: string, revision: number): StoredObject;
}

export function hasLazyList(s: object): s is LazyListSource {
  return typeof (s as Partial<LazyListSource>).listLazy === 'function';
}
