/**
 * SQLite storage: the embedded default backend, shaped like etcd's MVCC store.
 *
 * Table `kv` is the revision log, one row per write (etcd's key space keyed by
 * revision): mod_revision (primary key), key, create_revision, version,
 * deleted, value (JSON without resourceVersion; NULL for a tombstone). Table
 * `meta` holds `compacted` and the highest `revision` ever issued, so
 * revisions are never reused after a restart, even when compaction removed
 * every row. The key index (which revision of which key is live when) lives
 * in memory, like etcd's treeIndex. Table `index_image` holds one row: a
 * compact image of that index (index-image.ts) as of a revision, written at
 * close and by every compaction (in the compaction's transaction). Opening
 * reads the image and then only the `kv` rows after its revision; without a
 * usable image (none yet, compacted since, or its first or last revision
 * disagrees with `kv`) it scans the key and revision columns of `kv` in key
 * order. Values are never read at open. The image only speeds opening up:
 * `kv` stays the record, and after a crash (no image written at close) more
 * rows are replayed.
 *
 * Durability: WAL mode with synchronous=FULL, so a write whose promise has
 * resolved is on disk (the WAL is fsynced at commit) and survives kill -9 and
 * power loss. Group commit: every write issued before the next turn of the
 * event loop joins one transaction (one fsync); each write is checked against
 * the state left by the ones before it in the batch, and all promises settle
 * after the commit. Watch events are dispatched after the commit, before the
 * promises resolve, so a watcher has seen a write when its writer continues.
 *
 * better-sqlite3 is synchronous: a commit blocks the event loop for one fsync.
 * Values are read per request (lists in batches) and decoded on first use of
 * `object`, deep-frozen (see stored-object.ts). `listLazy` (for the watch
 * cache's initial load) reads no values at all.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { KubeObject } from '../../api/types.js';
import {
  StorageError,
  type ListOptions,
  type ListResult,
  type Preconditions,
  type Storage,
  type StorageEvent,
  type StoredObject,
  type WatchHandle,
} from './storage.js';
import { newMvccIndex, type KeyRevision, type MvccIndex } from './mvcc-index.js';
import { newWatcherHub } from './watcher-hub.js';
import { beginTextBatch, decodeObject, encodeObject, LazyStoredObject, prefetch, rememberText, withRevision, type EncodedReader, type LazyListSource } from './stored-object.js';
import { listFromIndex } from './list-index.js';
import { decodeIndexImage, encodeIndexImage, type DecodedIndexImage } from './index-image.js';
import { newLogger } from '../../util/log/logger.js';

const log = newLogger('storage-sqlite');

export interface SqliteStorageOptions {
  /** Database file name inside the directory. Default `kcm.db`. */
  fileName?: string;
  /**
   * SQLite `synchronous` setting. Default FULL (acknowledged writes survive
   * power loss). NORMAL in WAL mode survives a process kill but may lose the
   * last commits on an OS crash or power loss.
   */
  synchronous?: 'FULL' | 'NORMAL';
  /**
   * Keys whose last written objects are not kept (see SqliteStorage.latest):
   * those the watch cache does not hold (events), which would otherwise stay
   * in memory for as long as they stay in the database. Their update or
   * delete reads the previous value back from the table.
   */
  unkeptPrefixes?: readonly string[];
}

type Entry = KeyRevision<null>;

type WriteOp =
  | { kind: 'create'; key: string; object: KubeObject; done: Settle }
  | { kind: 'update'; key: string; object: KubeObject; pre?: Preconditions; done: Settle }
  | { kind: 'delete'; key: string; pre?: Preconditions; done: Settle };

interface Settle {
  resolve(v: StoredObject): void;
  reject(err: unknown): void;
}

/** A write of the batch that passed its checks and was inserted. */
interface Applied {
  op: WriteOp;
  entry: Entry;
  json: string | null;
  prev: Entry | undefined;
}

/** Format of the index_image row this code writes and reads. */
const IMAGE_FORMAT = 1;

/** Revisions read per statement by EncodedReader.readMany. */
const READ_BATCH = 256;

interface Row {
  mod_revision: number;
  key: string;
  create_revision: number;
  version: number;
  deleted: number;
  value: string | null;
}

function internal(key: string, message: string, cause: unknown): StorageError {
  const err = new StorageError('Internal', key, `${message}: ${cause instanceof Error ? cause.message : String(cause)}`);
  err.cause = cause;
  return err;
}

/** encodeObject, failing only this write (as Internal) when the object is not JSON. */
function encodeFor(key: string, obj: KubeObject, revision: number): string {
  try {
    return encodeObject(obj, revision);
  } catch (err) {
    throw internal(key, 'object cannot be encoded as JSON', err);
  }
}

class SqliteStorage implements Storage, LazyListSource {
  private rev = 0;
  private compacted = 0;
  private closed = false;
  private index: MvccIndex<null> = newMvccIndex<null>();
  private readonly hub = newWatcherHub();
  private queue: WriteOp[] = [];
  private flushScheduled = false;
  /**
   * The value of each key as this backend last wrote it (decoded, frozen,
   * the very object its watchers got): the previous object of the next
   * update or delete, without reading and decoding the row again. Keys not
   * written since start are read from the table. Costs no object memory: the
   * watch cache keeps the same objects (keys it does not cache are not kept:
   * SqliteStorageOptions.unkeptPrefixes).
   */
  private latest = new Map<string, { revision: number; object: KubeObject }>();
  /** Revision and compaction of the stored index image (-1: none). */
  private imageAt = { revision: -1, compacted: -1 };

  private readonly stmtValue: Database.Statement<[number], string | null>;
  private readonly stmtInsert: Database.Statement<[number, string, number, number, number, string | null]>;
  private readonly stmtDeleteRev: Database.Statement<[number]>;
  private readonly stmtSetMeta: Database.Statement<[string, number]>;
  private readonly stmtEventsAfter: Database.Statement<[number], Row>;
  private readonly stmtValues: Database.Statement<number[], [number, string | null]>;
  /** Reads values for lazily decoded objects; throws Closed after close(). */
  private readonly reader: EncodedReader;

  constructor(
    private readonly db: Database.Database,
    private readonly unkeptPrefixes: readonly string[] = [],
  ) {
    db.exec(`
      CREATE TABLE IF NOT EXISTS kv (
        mod_revision INTEGER PRIMARY KEY,
        key TEXT NOT NULL,
        create_revision INTEGER NOT NULL,
        version INTEGER NOT NULL,
        deleted INTEGER NOT NULL,
        value TEXT
      );
      CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
      CREATE TABLE IF NOT EXISTS index_image (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        format INTEGER NOT NULL,
        revision INTEGER NOT NULL,
        compacted INTEGER NOT NULL,
        entries INTEGER NOT NULL,
        keys TEXT NOT NULL,
        numbers BLOB NOT NULL
      );
    `);
    this.stmtValue = db.prepare<[number], string | null>('SELECT value FROM kv WHERE mod_revision = ?').pluck();
    this.stmtInsert = db.prepare('INSERT INTO kv (mod_revision, key, create_revision, version, deleted, value) VALUES (?, ?, ?, ?, ?, ?)');
    this.stmtDeleteRev = db.prepare('DELETE FROM kv WHERE mod_revision = ?');
    this.stmtSetMeta = db.prepare('INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET value = excluded.value');
    this.stmtEventsAfter = db.prepare<[number], Row>('SELECT * FROM kv WHERE mod_revision > ? ORDER BY mod_revision');
    this.stmtValues = db
      .prepare<number[], [number, string | null]>(`SELECT mod_revision, value FROM kv WHERE mod_revision IN (${new Array(READ_BATCH).fill('?').join(',')})`)
      .raw();
    this.reader = {
      read: (revision) => {
        this.checkOpen('');
        return this.stmtValue.get(revision) ?? undefined;
      },
      readMany: (revisions) => {
        this.checkOpen('');
        const out = new Map<number, string>();
        const args: number[] = new Array(READ_BATCH);
        for (let i = 0; i < revisions.length; i += READ_BATCH) {
          // revision 0 is never written: it pads the last batch
          for (let j = 0; j < READ_BATCH; j++) args[j] = revisions[i + j] ?? 0;
          for (const [rev, value] of this.stmtValues.iterate(...args)) if (value !== null) out.set(rev, value);
        }
        return out;
      },
    };
    this.load();
  }

  /**
   * Rebuilds the key index and revisions from the database: the index image
   * and the rows after it, or else every row. Rows of a full scan come in key
   * order (SQLite sorts), so the index appends each key (see MvccIndex.put).
   * Values are not read.
   */
  private load(): void {
    this.latest.clear();
    const meta = new Map(
      (this.db.prepare('SELECT name, value FROM meta').all() as { name: string; value: number }[]).map((r) => [r.name, r.value]),
    );
    const compacted = meta.get('compacted') ?? 0;
    const image = this.readImage(compacted);
    const index = image?.index ?? newMvccIndex<null>();
    let max = image?.revision ?? 0;
    const rows = (
      image
        ? this.db.prepare('SELECT key, mod_revision, create_revision, version, deleted FROM kv WHERE mod_revision > ? ORDER BY mod_revision').raw().iterate(image.revision)
        : this.db.prepare('SELECT key, mod_revision, create_revision, version, deleted FROM kv ORDER BY key, mod_revision').raw().iterate()
    ) as IterableIterator<[string, number, number, number, number]>;
    let read = 0;
    for (const r of rows) {
      const rev = r[1];
      index.put(r[0], { revision: rev, createRevision: r[2], version: r[3], deleted: r[4] === 1, value: null });
      if (rev > max) max = rev;
      read++;
    }
    this.index = index;
    this.rev = Math.max(max, meta.get('revision') ?? 0);
    this.compacted = compacted;
    this.imageAt = image ? { revision: image.revision, compacted } : { revision: -1, compacted: -1 };
    log.v(2).info({ keys: index.size, entries: index.entries, image: image?.revision ?? 'none', rowsRead: read }, 'loaded key index');
  }

  /**
   * The stored index image, when it can stand for the rows up to its
   * revision: written in this format, at the current compaction, and
   * starting and ending with the same revisions as `kv` up to its revision.
   */
  private readImage(compacted: number): { index: MvccIndex<null>; revision: number } | undefined {
    const row = this.db.prepare('SELECT format, revision, compacted, entries, keys, numbers FROM index_image WHERE id = 1').get() as
      | { format: number; revision: number; compacted: number; entries: number; keys: string; numbers: Buffer }
      | undefined;
    if (!row) return undefined;
    if (row.format !== IMAGE_FORMAT || row.compacted !== compacted) {
      log.v(2).info({ format: row.format, imageCompacted: row.compacted, compacted }, 'index image is stale; scanning the revision log');
      return undefined;
    }
    let image: DecodedIndexImage;
    try {
      image = decodeIndexImage(row);
    } catch (err) {
      log.warn({ error: (err as Error).message }, 'index image is unreadable; scanning the revision log');
      return undefined;
    }
    // Cheap checks that the log still holds the image's first and last rows
    // (counting the rows would read the whole table).
    const first = this.db.prepare('SELECT min(mod_revision) FROM kv').pluck().get() as number | null;
    const last = this.db.prepare('SELECT max(mod_revision) FROM kv WHERE mod_revision <= ?').pluck().get(row.revision) as number | null;
    if (image.index.entries > 0 ? first !== image.first || last !== image.last : last !== null) {
      log.warn({ imageFirst: image.first, imageLast: image.last, first, last, revision: row.revision }, 'index image does not match the revision log; scanning it');
      return undefined;
    }
    return { index: image.index, revision: row.revision };
  }

  /** Stores the image of the index as of the current revision (inside the caller's transaction, if any). */
  private writeImage(compacted: number): void {
    const image = encodeIndexImage(this.index);
    if (!image) {
      this.db.prepare('DELETE FROM index_image').run();
      this.imageAt = { revision: -1, compacted: -1 };
      return;
    }
    this.db
      .prepare('INSERT OR REPLACE INTO index_image (id, format, revision, compacted, entries, keys, numbers) VALUES (1, ?, ?, ?, ?, ?, ?)')
      .run(IMAGE_FORMAT, this.rev, compacted, image.entries, image.keys, image.numbers);
    this.imageAt = { revision: this.rev, compacted };
  }

  currentRevision(): number {
    return this.rev;
  }

  compactedRevision(): number {
    return this.compacted;
  }

  async get(key: string): Promise<StoredObject | undefined> {
    this.checkOpen(key);
    const e = this.index.liveAt(key, this.rev);
    return e ? this.stored(key, e) : undefined;
  }

  async list(prefix: string, opts: ListOptions = {}): Promise<ListResult> {
    this.checkOpen(prefix);
    const at = this.readRevision(prefix, opts.revision);
    const result = listFromIndex(this.index, prefix, at, opts, (key, e) => new LazyStoredObject(key, e.revision, this.reader));
    // Read every value now (in batches): compaction may remove a past revision's row before the caller reads it.
    prefetch(result.items);
    return result;
  }

  listLazy(prefix: string): ListResult {
    this.checkOpen(prefix);
    const items: StoredObject[] = [];
    // every entry is at or before this.rev: a key is live when its last entry is not a tombstone
    this.index.forEachLast((key, revision, deleted) => {
      if (!deleted) items.push(new LazyStoredObject(key, revision, this.reader));
    }, prefix);
    return { items, revision: this.rev, more: false };
  }

  lazyObject(key: string, revision: number): StoredObject {
    return new LazyStoredObject(key, revision, this.reader);
  }

  create(key: string, object: KubeObject): Promise<StoredObject> {
    return this.enqueue((done) => ({ kind: 'create', key, object, done }));
  }

  update(key: string, object: KubeObject, pre?: Preconditions): Promise<StoredObject> {
    return this.enqueue((done) => ({ kind: 'update', key, object, pre, done }));
  }

  delete(key: string, pre?: Preconditions): Promise<StoredObject> {
    return this.enqueue((done) => ({ kind: 'delete', key, pre, done }));
  }

  watch(prefix: string, fromRevision: number, onEvent: (e: StorageEvent) => void, onError?: (err: Error) => void): WatchHandle {
    this.checkOpen(prefix);
    if (fromRevision < this.compacted) {
      throw new StorageError('Compacted', prefix, `revision ${fromRevision} has been compacted (oldest readable: ${this.compacted})`);
    }
    const replay: StorageEvent[] = [];
    if (fromRevision < this.rev) {
      for (const r of this.stmtEventsAfter.iterate(fromRevision)) {
        if (r.key.startsWith(prefix)) replay.push(this.eventOf(r));
      }
    }
    return this.hub.add(prefix, fromRevision, replay, onEvent, onError);
  }

  async compact(revision: number): Promise<void> {
    this.checkOpen('');
    if (revision > this.rev) throw new StorageError('Internal', '', `cannot compact to future revision ${revision} (current ${this.rev})`);
    if (revision <= this.compacted) return;
    const drop: number[] = [];
    this.index.compact(revision, (_key, e) => drop.push(e.revision));
    try {
      this.db.transaction(() => {
        for (const r of drop) this.stmtDeleteRev.run(r);
        this.stmtSetMeta.run('compacted', revision);
        this.stmtSetMeta.run('revision', this.rev);
        this.writeImage(revision);
      })();
    } catch (err) {
      log.error(err, { revision }, 'compaction failed; reloading the key index');
      this.load();
      throw internal('', `compaction to ${revision} failed`, err);
    }
    this.compacted = revision;
    log.v(2).info({ revision, dropped: drop.length }, 'compacted');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    if (this.queue.length > 0) this.flush();
    if (this.imageAt.revision !== this.rev || this.imageAt.compacted !== this.compacted) {
      try {
        this.db.transaction(() => this.writeImage(this.compacted))();
      } catch (err) {
        log.error(err, { revision: this.rev }, 'cannot store the index image; the next start scans the revision log');
      }
    }
    this.closed = true;
    this.hub.closeAll(new StorageError('Closed', '', 'storage closed'));
    this.db.close();
  }

  private enqueue(make: (done: Settle) => WriteOp): Promise<StoredObject> {
    return new Promise<StoredObject>((resolve, reject) => {
      if (this.closed) {
        reject(new StorageError('Closed', '', 'storage closed'));
        return;
      }
      this.queue.push(make({ resolve, reject }));
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits every queued write in one transaction, then publishes and settles them. */
  private flush(): void {
    this.flushScheduled = false;
    const ops = this.queue;
    this.queue = [];
    if (ops.length === 0 || this.closed) {
      for (const op of ops) op.done.reject(new StorageError('Closed', op.key, 'storage closed'));
      return;
    }
    const applied: Applied[] = [];
    const failed: { op: WriteOp; err: unknown }[] = [];
    const overlay = new Map<string, Entry>();
    let next = this.rev;
    try {
      this.db.transaction(() => {
        for (const op of ops) {
          try {
            const cur = overlay.get(op.key) ?? this.index.last(op.key);
            const live = cur && !cur.deleted ? cur : undefined;
            let entry: Entry;
            let json: string | null;
            switch (op.kind) {
              case 'create':
                if (live) throw new StorageError('KeyExists', op.key);
                json = encodeFor(op.key, op.object, next + 1);
                entry = { revision: next + 1, createRevision: next + 1, version: 1, deleted: false, value: null };
                break;
              case 'update':
                this.checkPre(op.key, live, op.pre);
                json = encodeFor(op.key, op.object, next + 1);
                entry = { revision: next + 1, createRevision: live!.createRevision, version: live!.version + 1, deleted: false, value: null };
                break;
              case 'delete':
                this.checkPre(op.key, live, op.pre);
                json = null;
                entry = { revision: next + 1, createRevision: 0, version: 0, deleted: true, value: null };
                break;
            }
            this.stmtInsert.run(entry.revision, op.key, entry.createRevision, entry.version, entry.deleted ? 1 : 0, json);
            next = entry.revision;
            overlay.set(op.key, entry);
            applied.push({ op, entry, json, prev: live });
          } catch (err) {
            if (!(err instanceof StorageError)) throw err;
            failed.push({ op, err });
          }
        }
      })();
    } catch (err) {
      log.error(err, { writes: ops.length }, 'write transaction failed');
      for (const op of ops) op.done.reject(internal(op.key, 'write failed', err));
      return;
    }
    // Committed: publish in revision order, then settle. Each value's text is its object's exact JSON (see storedText).
    beginTextBatch();
    const decoded = new Map<number, KubeObject>();
    const results: { op: WriteOp; value: StoredObject }[] = [];
    for (const a of applied) {
      this.index.put(a.op.key, a.entry);
      this.rev = a.entry.revision;
      const rev = a.entry.revision;
      const prevObject = a.prev ? decoded.get(a.prev.revision) ?? this.lastWritten(a.op.key, a.prev.revision) ?? this.objectAt(a.op.key, a.prev.revision) : undefined;
      let event: StorageEvent;
      if (a.json !== null) {
        const object = decodeObject(a.json, rev);
        rememberText(object, a.json);
        decoded.set(rev, object);
        if (this.keepsLatest(a.op.key)) this.latest.set(a.op.key, { revision: rev, object });
        event = prevObject ? { type: 'MODIFIED', key: a.op.key, object, prevObject, revision: rev } : { type: 'ADDED', key: a.op.key, object, revision: rev };
      } else {
        const object = withRevision(prevObject!, rev);
        this.latest.delete(a.op.key);
        event = { type: 'DELETED', key: a.op.key, object, prevObject: prevObject!, revision: rev };
      }
      this.hub.dispatch(event);
      results.push({ op: a.op, value: { key: a.op.key, object: event.object, revision: rev } });
    }
    for (const r of results) r.op.done.resolve(r.value);
    for (const f of failed) f.op.done.reject(f.err);
  }

  private checkPre(key: string, live: Entry | undefined, pre: Preconditions | undefined): void {
    if (!live) throw new StorageError('NotFound', key);
    if (pre?.revision !== undefined && pre.revision !== live.revision) {
      throw new StorageError('Conflict', key, `revision precondition failed: want ${pre.revision}, current ${live.revision}`, this.stored(key, live));
    }
  }

  private keepsLatest(key: string): boolean {
    for (const p of this.unkeptPrefixes) if (key.startsWith(p)) return false;
    return true;
  }

  private lastWritten(key: string, revision: number): KubeObject | undefined {
    const l = this.latest.get(key);
    return l?.revision === revision ? l.object : undefined;
  }

  private objectAt(key: string, revision: number): KubeObject {
    const json = this.stmtValue.get(revision);
    if (json === undefined || json === null) throw new StorageError('Internal', key, `no value stored at revision ${revision}`);
    return decodeObject(json, revision);
  }

  /** The value at entry `e`, read now and decoded on first use. */
  private stored(key: string, e: Entry): StoredObject {
    const json = this.stmtValue.get(e.revision);
    if (json === undefined || json === null) throw new StorageError('Internal', key, `no value stored at revision ${e.revision}`);
    return new LazyStoredObject(key, e.revision, json);
  }

  private eventOf(r: Row): StorageEvent {
    const rev = r.mod_revision;
    if (r.deleted === 1) {
      const prev = this.index.before(r.key, rev);
      if (!prev || prev.deleted) throw new StorageError('Internal', r.key, `no state before delete at revision ${rev}`);
      const prevObject = this.objectAt(r.key, prev.revision);
      return { type: 'DELETED', key: r.key, object: withRevision(prevObject, rev), prevObject, revision: rev };
    }
    const object = decodeObject(r.value ?? 'null', rev);
    if (r.version === 1) return { type: 'ADDED', key: r.key, object, revision: rev };
    const prev = this.index.before(r.key, rev);
    if (!prev || prev.deleted) throw new StorageError('Internal', r.key, `no state before update at revision ${rev}`);
    return { type: 'MODIFIED', key: r.key, object, prevObject: this.objectAt(r.key, prev.revision), revision: rev };
  }

  private readRevision(key: string, revision: number | undefined): number {
    if (revision === undefined || revision === 0) return this.rev;
    if (revision < this.compacted) {
      throw new StorageError('Compacted', key, `revision ${revision} has been compacted (oldest readable: ${this.compacted})`);
    }
    if (revision > this.rev) throw new StorageError('Internal', key, `revision ${revision} is in the future (current ${this.rev})`);
    return revision;
  }

  private checkOpen(key: string): void {
    if (this.closed) throw new StorageError('Closed', key, 'storage closed');
  }
}

/**
 * Opens (creating if needed) the storage in directory `dir`. Throws when the
 * database cannot be opened or is not in WAL mode.
 */
export function openSqliteStorage(dir: string, opts: SqliteStorageOptions = {}): Storage {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, opts.fileName ?? 'kcm.db');
  const db = new Database(path);
  try {
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (String(mode).toLowerCase() !== 'wal') throw new Error(`cannot use WAL journal mode (got ${String(mode)})`);
    db.pragma(`synchronous = ${opts.synchronous ?? 'FULL'}`);
    return new SqliteStorage(db, opts.unkeptPrefixes);
  } catch (err) {
    db.close();
    throw internal(path, 'cannot open sqlite storage', err);
  }
}
