/** The page's copy of the cluster, fed by the server-sent events. */
import type {
  ControllersState,
  Delta,
  ObjectSummary,
  SchedulingDecision,
  Snapshot,
} from '../../../src/dashboard/protocol.js';

export type Conn = 'connecting' | 'live' | 'reconnecting' | 'unauthorized';

/** What changed since the last frame; views use it to skip work. */
export interface Changes {
  /** A snapshot replaced everything (or the view is new). */
  all: boolean;
  /** uids upserted or deleted. */
  objects: Set<string>;
  /** uids whose timelines gained entries. */
  touched: Set<string>;
  namespaces: boolean;
  controllers: boolean;
  scheduling: boolean;
  /** Upserts + deletes applied (for the performance log). */
  count: number;
}

export function noChanges(): Changes {
  return {
    all: false,
    objects: new Set(),
    touched: new Set(),
    namespaces: false,
    controllers: false,
    scheduling: false,
    count: 0,
  };
}

export function allChanged(): Changes {
  return { ...noChanges(), all: true, namespaces: true, controllers: true, scheduling: true };
}

const MAX_SCHEDULING = 500;
const SPARK_POINTS = 60;

export class Store {
  cluster = '';
  /** Server time minus local time, so ages use the server's clock. */
  skew = 0;
  objects = new Map<string, ObjectSummary>();
  /** Owner uid → uids of objects naming it in ownerReferences (whether or not the owner exists). */
  children = new Map<string, Set<string>>();
  namespaces: string[] = [];
  controllers: ControllersState | null = null;
  /** Queue name → its depth at the last 60 controller updates. */
  depthHistory = new Map<string, number[]>();
  scheduling: SchedulingDecision[] = [];
  conn: Conn = 'connecting';
  snapshotSeen = false;

  /**
   * Bumped when the forest's shape may have changed: an object appeared or went,
   * its owners or its revision changed. Views cache orderings on it.
   */
  structEpoch = 0;

  pending: Changes = noChanges();
  onChange: () => void = () => {};

  now(): number {
    return Date.now() + this.skew;
  }

  applySnapshot(s: Snapshot): void {
    this.cluster = s.cluster;
    this.skew = s.time - Date.now();
    this.objects.clear();
    this.children.clear();
    this.structEpoch++;
    for (const o of s.objects) this.put(o);
    this.namespaces = [...s.namespaces].sort();
    this.setControllers(s.controllers);
    this.scheduling = s.scheduling.slice(-MAX_SCHEDULING);
    this.snapshotSeen = true;
    this.pending = allChanged();
    this.pending.count = s.objects.length;
    this.onChange();
  }

  applyDelta(d: Delta): void {
    this.skew = d.time - Date.now();
    const p = this.pending;
    for (const uid of d.deletes) {
      this.remove(uid);
      p.objects.add(uid);
    }
    for (const o of d.upserts) {
      this.put(o);
      p.objects.add(o.uid);
    }
    for (const u of d.touched) p.touched.add(u);
    if (d.namespaces) {
      this.namespaces = [...d.namespaces].sort();
      p.namespaces = true;
    }
    p.count += d.upserts.length + d.deletes.length;
    this.onChange();
  }

  applyControllers(c: ControllersState): void {
    this.setControllers(c);
    this.pending.controllers = true;
    this.onChange();
  }

  applyScheduling(list: SchedulingDecision[]): void {
    if (!list.length) return;
    this.scheduling.push(...list);
    if (this.scheduling.length > MAX_SCHEDULING) this.scheduling.splice(0, this.scheduling.length - MAX_SCHEDULING);
    this.pending.scheduling = true;
    this.onChange();
  }

  setConn(c: Conn): void {
    if (this.conn === c) return;
    this.conn = c;
    this.onChange();
  }

  /** Take the accumulated changes (the render loop calls this once a frame). */
  take(): Changes {
    const p = this.pending;
    this.pending = noChanges();
    return p;
  }

  childrenOf(uid: string): ObjectSummary[] {
    const set = this.children.get(uid);
    if (!set) return [];
    const out: ObjectSummary[] = [];
    for (const c of set) {
      const o = this.objects.get(c);
      if (o) out.push(o);
    }
    return out;
  }

  private setControllers(c: ControllersState | null): void {
    this.controllers = c;
    if (!c) return;
    const seen = new Set<string>();
    for (const q of c.queues) {
      seen.add(q.name);
      let hist = this.depthHistory.get(q.name);
      if (!hist) this.depthHistory.set(q.name, (hist = []));
      hist.push(q.depth);
      if (hist.length > SPARK_POINTS) hist.shift();
    }
    for (const k of this.depthHistory.keys()) if (!seen.has(k)) this.depthHistory.delete(k);
  }

  private put(o: ObjectSummary): void {
    const old = this.objects.get(o.uid);
    if (old && sameShape(old, o)) {
      this.objects.set(o.uid, o);
      return;
    }
    this.structEpoch++;
    if (old) this.unlink(old);
    this.objects.set(o.uid, o);
    for (const ref of o.owners) {
      let set = this.children.get(ref.uid);
      if (!set) this.children.set(ref.uid, (set = new Set()));
      set.add(o.uid);
    }
  }

  private remove(uid: string): void {
    const old = this.objects.get(uid);
    if (!old) return;
    this.structEpoch++;
    this.unlink(old);
    this.objects.delete(uid);
  }

  private unlink(o: ObjectSummary): void {
    for (const ref of o.owners) {
      const set = this.children.get(ref.uid);
      if (!set) continue;
      set.delete(o.uid);
      if (!set.size) this.children.delete(ref.uid);
    }
  }
}

function sameShape(a: ObjectSummary, b: ObjectSummary): boolean {
  if (a.namespace !== b.namespace || a.name !== b.name || a.kind !== b.kind || a.revision !== b.revision) return false;
  if (a.owners.length !== b.owners.length) return false;
  for (let i = 0; i < a.owners.length; i++) if (a.owners[i]!.uid !== b.owners[i]!.uid) return false;
  return true;
}

export const store = new Store();

/** Health order for sorting and summaries. */
export const HEALTHS = ['failed', 'warning', 'progressing', 'terminating', 'unknown', 'ok'] as const;
