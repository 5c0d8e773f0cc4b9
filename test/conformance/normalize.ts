/**
 * Normalising and diffing what two controller managers left behind, for the
 * conformance report (run.ts): the same scenario runs once under the real
 * kube-controller-manager and once under `kcm controller-manager`, on the
 * same kind of real API server, and the objects are compared after removing
 * what legitimately differs between two runs (uids, resource versions,
 * timestamps, random name suffixes, hash values, IPs, node choices).
 */

export interface Snapshot {
  /** Normalised objects by `Kind/name` (names normalised too). */
  objects: Record<string, unknown>;
  /** Normalised events: `type reason kind: message (source)`, sorted, duplicates counted once. */
  events: string[];
}

const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const ipv4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Fields whose values differ between any two runs. */
const volatile = new Set(['uid', 'resourceVersion', 'creationTimestamp', 'managedFields', 'selfLink', 'generateName']);
/** Labels whose values are template or revision hashes. */
const hashKeys = new Set(['pod-template-hash', 'controller-revision-hash', 'controller.kubernetes.io/hash']);
const uuid = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g;
const pem = /-----BEGIN ([A-Z ]+)-----[\s\S]*?-----END \1-----\n?/g;

/**
 * Names: `<base>-<10 hex/alnum hash>-<5 random>` (ReplicaSet pods),
 * `<base>-<hash>` (ReplicaSets, ControllerRevisions), `<base>-<5 random>`
 * (DaemonSet and Job pods), `<base>-<8 digits>` (CronJob jobs: the
 * scheduled time), so that two runs name the same things alike.
 */
export function normalizeName(name: string, hashes: ReadonlySet<string> = new Set()): string {
  let n = name;
  for (const h of hashes) if (h && n.includes(h)) n = n.split(h).join('<hash>');
  return n
    .replace(/-[0-9a-z]{5}$/, '-<rand>')
    .replace(/-\d{8,10}(?=$|-)/, '-<time>')
    .replace(/-(?=[0-9a-z]*\d)[0-9a-z]{6,10}(?=$|-<rand>)/, '-<hash>');
}

/** Replaces what differs between runs; keeps structure, so a missing or extra field shows. */
export function normalizeValue(v: unknown, hashes: ReadonlySet<string>, key = ''): unknown {
  if (Array.isArray(v)) return v.map((x) => normalizeValue(x, hashes, key));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      if (volatile.has(k)) continue;
      out[k] = normalizeValue((v as Record<string, unknown>)[k], hashes, k);
    }
    return out;
  }
  if (typeof v !== 'string') return v;
  if (rfc3339.test(v)) return '<time>';
  if (ipv4.test(v)) return '<ip>';
  if (/^\d+(\.\d+){3}\/\d+$/.test(v)) return '<cidr>';
  if (key === 'nodeName' || key === 'hostname' || key === 'kubernetes.io/hostname') return '<node>';
  if (key === 'containerID' || key === 'imageID') return '<container>';
  if (hashKeys.has(key) || key === 'currentRevision' || key === 'updateRevision') return '<hash>';
  if (key === 'name' || key === 'generateName' || key === 'statefulset.kubernetes.io/pod-name') return normalizeName(v, hashes);
  let s = v;
  for (const h of hashes) if (h && s.includes(h)) s = s.split(h).join('<hash>');
  return s
    .replace(pem, '<pem>')
    .replace(uuid, '<uuid>')
    .replace(/\bkcm-node-\d+\b/g, '<node>')
    .replace(/-(?=[0-9a-z]*\d)[0-9a-z]{8,10}\b(?=-|$|\s|:|")/g, '-<hash>')
    .replace(/-[bcdfghjklmnpqrstvwxz2456789]{5}\b/g, '-<rand>')
    .replace(/\b\d+(\.\d+){3}\b/g, '<ip>').replace(/\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(\.\d+)?( ?[+-]\d{4} UTC| UTC|Z)?/g, '<time>');
}

/** Hash values found in labels (pod-template-hash, controller-revision-hash), to normalise names that embed them. */
export function collectHashes(objects: unknown[]): Set<string> {
  const out = new Set<string>();
  const walk = (v: unknown) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      for (const [k, x] of Object.entries(v)) {
        if (hashKeys.has(k) && typeof x === 'string') {
          out.add(x);
          const dash = x.lastIndexOf('-');
          if (dash > 0) out.add(x.slice(dash + 1)); // controller-revision-hash is <name>-<hash> on pods
        } else walk(x);
      }
    }
  };
  walk(objects);
  return out;
}

interface Obj {
  kind?: string;
  metadata?: { name?: string; namespace?: string; [k: string]: unknown };
  [k: string]: unknown;
}
interface Ev {
  type?: string;
  reason?: string;
  message?: string;
  involvedObject?: { kind?: string };
  source?: { component?: string };
}

/**
 * An EndpointSlice's generation counts the controller's writes, which follow
 * the timing of pod updates in each run; it is left out.
 */
function withoutWriteCounts(o: Obj): Obj {
  if (o.kind !== 'EndpointSlice') return o;
  const c = structuredClone(o);
  delete (c.metadata as Record<string, unknown> | undefined)?.generation;
  return c;
}

/** A snapshot of objects (any kinds) and events, normalised. */
export function snapshot(objects: Obj[], events: Ev[]): Snapshot {
  const hashes = collectHashes(objects);
  const groups = new Map<string, unknown[]>();
  for (const o of objects) {
    const key = `${o.kind}/${normalizeName(o.metadata?.name ?? '', hashes)}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key)!.push(normalizeValue(withoutWriteCounts(o), hashes));
  }
  // Objects whose names normalise alike (a ReplicaSet's pods) are ordered by content, so two runs line up.
  const out: Record<string, unknown> = {};
  for (const key of [...groups.keys()].sort()) {
    const vs = groups.get(key)!.map((v) => ({ v, j: JSON.stringify(v) })).sort((a, b) => (a.j < b.j ? -1 : a.j > b.j ? 1 : 0));
    vs.forEach(({ v }, i) => (out[i === 0 ? key : `${key}#${i + 1}`] = v));
  }
  const evs = new Set(
    events.map((e) => `${e.type} ${e.reason} ${e.involvedObject?.kind}: ${normalizeValue(e.message ?? '', hashes)} (${e.source?.component ?? ''})`),
  );
  return { objects: out, events: [...evs].sort() };
}

export interface Difference {
  path: string;
  real: unknown;
  kcm: unknown;
}

/** Differences between two normalised values, by path (`Pod/web-<hash>-<rand>.status.phase`). */
export function diffValues(real: unknown, kcm: unknown, path = ''): Difference[] {
  if (JSON.stringify(real) === JSON.stringify(kcm)) return [];
  const bothObjects = real && kcm && typeof real === 'object' && typeof kcm === 'object' && Array.isArray(real) === Array.isArray(kcm);
  if (!bothObjects) return [{ path, real, kcm }];
  if (Array.isArray(real) && Array.isArray(kcm) && real.length !== kcm.length) return [{ path, real, kcm }];
  const keys = new Set([...Object.keys(real as object), ...Object.keys(kcm as object)]);
  const out: Difference[] = [];
  for (const k of [...keys].sort()) {
    const p = Array.isArray(real) ? `${path}[${k}]` : path ? `${path}.${k}` : k;
    out.push(...diffValues((real as Record<string, unknown>)[k], (kcm as Record<string, unknown>)[k], p));
  }
  return out;
}

/** Object and event differences between two snapshots of one scenario. */
export function diffSnapshots(real: Snapshot, kcm: Snapshot): { objects: Difference[]; eventsOnlyReal: string[]; eventsOnlyKcm: string[] } {
  const kcmEvents = new Set(kcm.events);
  const realEvents = new Set(real.events);
  return {
    objects: diffValues(real.objects, kcm.objects),
    eventsOnlyReal: real.events.filter((e) => !kcmEvents.has(e)),
    eventsOnlyKcm: kcm.events.filter((e) => !realEvents.has(e)),
  };
}
