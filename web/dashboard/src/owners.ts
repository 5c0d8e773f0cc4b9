/**
 * Owners: the forest built from ownerReferences (Deployment → ReplicaSets →
 * Pods, ...). Tree nodes are keyed by uid and updated in place; an owner's
 * pods are a grid of coloured squares when there are many.
 */
import type { Health, ObjectSummary, OwnerRef } from '../../../src/dashboard/protocol.js';
import { h, num, reconcile, setAttr, setText } from './dom.js';
import { HEALTHS, store, type Changes } from './store.js';
import type { Ctx, View } from './view.js';

/** Show an owner's pods as rows up to this many, as squares above. */
const POD_ROWS_MAX = 12;

const KIND_ORDER = [
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'CronJob',
  'Job',
  'ReplicaSet',
  'Service',
  'EndpointSlice',
  'Endpoints',
  'Pod',
  'PersistentVolumeClaim',
];
const kindRank = (k: string) => {
  const i = KIND_ORDER.indexOf(k);
  return i < 0 ? KIND_ORDER.length : i;
};

const SHORT_KIND: Record<string, string> = {
  PersistentVolumeClaim: 'PVC',
  HorizontalPodAutoscaler: 'HPA',
  PodDisruptionBudget: 'PDB',
  CustomResourceDefinition: 'CRD',
};

/** A node of the forest: a real object or a placeholder for a missing owner. */
interface TNode {
  uid: string;
  obj?: ObjectSummary;
  ref?: OwnerRef;
}

type Item = { t: 'node'; n: TNode; path: string } | { t: 'pods'; owner: string; pods: ObjectSummary[]; path: string };

function cmpObj(a: ObjectSummary, b: ObjectSummary): number {
  const r = kindRank(a.kind) - kindRank(b.kind);
  if (r) return r;
  if (a.kind === 'ReplicaSet' && b.kind === 'ReplicaSet') {
    const d = Number(b.revision ?? 0) - Number(a.revision ?? 0);
    if (d) return d;
  }
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

export function ownersView(params: URLSearchParams, ctx: Ctx): View {
  const focusUid = params.get('uid');
  let ns = params.get('ns') ?? '';
  let focusDone = false;
  const collapsed = new Set<string>();

  const select = h('select', { class: 'ns', title: 'Namespace' });
  const filter = h('input', { type: 'search', placeholder: 'filter by name…', class: 'filter' });
  const summary = h('span', { class: 'muted' });
  const forest = h('div', { class: 'forest' });
  const empty = h('div', { class: 'empty', hidden: true });
  const el = h(
    'section',
    { class: 'owners' },
    h(
      'div',
      { class: 'toolbar' },
      h('label', null, 'Namespace ', select),
      filter,
      summary,
      h('span', { class: 'grow' }),
      legend(),
    ),
    h(
      'p',
      { class: 'hint' },
      "Each object is listed under its owners (metadata.ownerReferences). Controllers create the children; the garbage collector deletes them when the owner goes. A StatefulSet's claims (PVCs from its volumeClaimTemplates) are listed under it even when it does not own them (the default Retain policy).",
    ),
    empty,
    forest,
  );

  select.addEventListener('change', () => {
    location.hash = `#/owners?ns=${encodeURIComponent(select.value)}`;
  });
  let filterText = '';
  filter.addEventListener('input', () => {
    filterText = filter.value.trim().toLowerCase();
    render(true);
  });

  el.addEventListener('click', (e) => {
    const t = e.target as Element;
    const tog = t.closest('.tog');
    if (tog) {
      const path = (tog.closest('.tnode') as HTMLElement | null)?.dataset.path;
      if (path) {
        if (collapsed.has(path)) collapsed.delete(path);
        else collapsed.add(path);
        render(true);
      }
      return;
    }
    const obj = t.closest<HTMLElement>('[data-uid]');
    if (obj?.dataset.uid) ctx.select(obj.dataset.uid);
  });

  function pickNamespace(): void {
    if (focusUid) {
      const o = store.objects.get(focusUid);
      const nsOf = o?.namespace ?? findRefNamespace(focusUid);
      if (nsOf) ns = nsOf;
    }
    if (!ns || !store.namespaces.includes(ns)) {
      // The namespace with the most objects, skipping kube-* when there is another.
      const count = new Map<string, number>();
      for (const o of store.objects.values()) if (o.namespace) count.set(o.namespace, (count.get(o.namespace) ?? 0) + 1);
      const cands = store.namespaces.filter((n) => !n.startsWith('kube-'));
      const pool = cands.length ? cands : store.namespaces;
      if (!ns || (store.namespaces.length && !store.namespaces.includes(ns) && !count.has(ns)))
        ns = pool.sort((a, b) => (count.get(b) ?? 0) - (count.get(a) ?? 0))[0] ?? ns;
    }
  }

  function renderNamespaces(): void {
    const list = store.namespaces.includes(ns) || !ns ? store.namespaces : [...store.namespaces, ns];
    const cur = [...select.options].map((o) => o.value).join('\n');
    if (cur !== list.join('\n')) {
      select.textContent = '';
      for (const n of list) select.append(h('option', { value: n }, n));
    }
    select.value = ns;
  }

  /** The forest of one namespace: roots are objects without owners, and owners that are missing or elsewhere. */
  let rootsKey = '';
  let rootsCache: TNode[] = [];
  function roots(): TNode[] {
    const key = `${store.structEpoch}|${ns}`;
    if (key === rootsKey) return rootsCache.map((r) => (r.obj ? { uid: r.uid, obj: store.objects.get(r.uid) ?? r.obj } : r));
    rootsKey = key;
    rootsCache = computeRoots();
    return rootsCache;
  }

  function computeRoots(): TNode[] {
    const out: TNode[] = [];
    const extra = new Map<string, TNode>();
    for (const o of store.objects.values()) {
      if (o.namespace !== ns) continue;
      if (!o.owners.length) {
        out.push({ uid: o.uid, obj: o });
        continue;
      }
      for (const r of o.owners) {
        const owner = store.objects.get(r.uid);
        if (!owner) extra.set(r.uid, { uid: r.uid, ref: r });
        else if (owner.namespace !== ns && !owner.owners.length) extra.set(r.uid, { uid: r.uid, obj: owner });
      }
    }
    out.push(...extra.values());
    const key = (n: TNode) => n.obj ?? ({ kind: n.ref!.kind, name: n.ref!.name } as ObjectSummary);
    // Trees with children first (they are what this view is about), then lone objects.
    return out.sort((a, b) => {
      const ca = store.children.has(a.uid) ? 0 : 1;
      const cb = store.children.has(b.uid) ? 0 : 1;
      return ca - cb || cmpObj(key(a), key(b));
    });
  }

  function matches(n: TNode, depth: number): boolean {
    if (!filterText) return true;
    const name = n.obj?.name ?? n.ref?.name ?? '';
    if (name.toLowerCase().includes(filterText)) return true;
    if (depth > 6) return false;
    return store.childrenOf(n.uid).some((c) => matches({ uid: c.uid, obj: c }, depth + 1));
  }

  /** Children ordering per owner, valid while store.structEpoch stays the same. */
  let kidsEpoch = -1;
  const kidsCache = new Map<string, { pods: string[]; others: string[] }>();

  function kidsItems(n: TNode, path: string, seen: Set<string>): Item[] {
    if (kidsEpoch !== store.structEpoch) {
      kidsEpoch = store.structEpoch;
      kidsCache.clear();
    }
    let c = kidsCache.get(n.uid);
    if (!c) {
      const { pods, others } = orderKids(n);
      c = { pods: pods.map((p) => p.uid), others: others.map((o) => o.uid) };
      kidsCache.set(n.uid, c);
    }
    const items: Item[] = [];
    if (c.pods.length) {
      const pods: ObjectSummary[] = [];
      for (const u of c.pods) {
        const o = store.objects.get(u);
        if (o && !seen.has(u)) pods.push(o);
      }
      items.push({ t: 'pods', owner: n.uid, pods, path: `${path}/pods` });
    }
    for (const u of c.others) {
      const o = store.objects.get(u);
      if (o && !seen.has(u)) items.push({ t: 'node', n: { uid: u, obj: o }, path: `${path}/${u}` });
    }
    return items;
  }

  function orderKids(n: TNode): { pods: ObjectSummary[]; others: ObjectSummary[] } {
    const kids = store.childrenOf(n.uid);
    const pods: ObjectSummary[] = [];
    const others: ObjectSummary[] = [];
    for (const c of kids) (c.kind === 'Pod' && !store.children.has(c.uid) ? pods : others).push(c);
    if (pods.length > POD_ROWS_MAX) pods.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    else others.push(...pods.splice(0));
    others.sort(cmpObj);
    return { pods, others };
  }

  function createItem(it: Item): HTMLElement {
    if (it.t === 'pods') {
      return h('div', { class: 'podgroup' }, h('div', { class: 'podsum' }), h('div', { class: 'squares' }));
    }
    const row = h(
      'div',
      { class: 'obj' },
      h('span', { class: 'tog' }),
      h('span', { class: 'dot' }),
      h('span', { class: 'kind' }),
      h('span', { class: 'name' }),
      h('span', { class: 'status' }),
      h('span', { class: 'extra' }),
    );
    return h('div', { class: 'tnode' }, row, h('div', { class: 'kids' }));
  }

  function updateItem(el: HTMLElement, it: Item, seen: Set<string>): void {
    if (it.t === 'pods') {
      updatePods(el, it.pods);
      return;
    }
    const { n, path } = it;
    el.dataset.path = path;
    const row = el.firstElementChild as HTMLElement;
    const kidsEl = el.lastElementChild as HTMLElement;
    const o = n.obj;
    const kind = o?.kind ?? n.ref!.kind;
    const name = o?.name ?? n.ref!.name;
    const health: Health = o ? o.health : 'unknown';
    setAttr(row, 'data-uid', n.uid);
    setAttr(row, 'data-kind', kind);
    setAttr(row, 'data-health', health);
    setAttr(row, 'data-dangling', o ? null : 'true');
    setAttr(row, 'data-deleting', o?.deleting ? 'true' : null);
    row.classList.toggle('focus', n.uid === focusUid);
    row.classList.toggle('selected', n.uid === ctx.selected());
    const [tog, , kindEl, nameEl, statusEl, extraEl] = row.children as unknown as HTMLElement[];
    setText(kindEl!, SHORT_KIND[kind] ?? kind);
    setAttr(kindEl!, 'title', SHORT_KIND[kind] ? kind : null);
    setText(nameEl!, o ? name : `${name} (not found)`);
    setText(statusEl!, o ? o.status : 'dangling owner: referenced, but not found');
    let extra = '';
    if (o?.revision && (kind === 'ReplicaSet' || kind === 'Deployment')) extra += `rev ${o.revision}`;
    if (o?.deleting) extra += `${extra ? ' · ' : ''}deleting${o.finalizers?.length ? `, finalizers: ${o.finalizers.join(', ')}` : ''}`;
    else if (o?.finalizers?.length) extra += `${extra ? ' · ' : ''}finalizers: ${o.finalizers.join(', ')}`;
    setText(extraEl!, extra);

    const next = new Set(seen).add(n.uid);
    const items = kidsItems(n, path, next);
    const isCollapsed = collapsed.has(path);
    setText(tog!, items.length ? (isCollapsed ? '▸' : '▾') : '');
    setAttr(tog!, 'title', items.length ? (isCollapsed ? 'expand' : 'collapse') : null);
    if (isCollapsed) {
      reconcileItems(kidsEl, [], next);
      return;
    }
    reconcileItems(kidsEl, items, next);
  }

  function reconcileItems(parent: HTMLElement, items: Item[], seen: Set<string>): void {
    reconcile(
      parent,
      items,
      (it) => (it.t === 'pods' ? 'pods' : it.n.uid),
      createItem,
      (e, it) => updateItem(e, it, seen),
    );
  }

  let countKey = '';
  let nsCount = 0;
  function render(full: boolean): void {
    if (full) pickNamespace();
    renderNamespaces();
    const rs = roots().filter((r) => matches(r, 0));
    if (countKey !== `${store.structEpoch}|${ns}`) {
      countKey = `${store.structEpoch}|${ns}`;
      nsCount = 0;
      for (const o of store.objects.values()) if (o.namespace === ns) nsCount++;
    }
    const n = nsCount;
    setText(summary, store.snapshotSeen ? `${num(n)} objects` : '');
    empty.hidden = !store.snapshotSeen || rs.length > 0;
    setText(empty, filterText ? 'Nothing matches the filter.' : `No objects in namespace ${ns || '(none)'}.`);
    if (!store.snapshotSeen) {
      empty.hidden = false;
      setText(empty, 'Waiting for the first snapshot…');
    }
    reconcileItems(
      forest,
      rs.map((r) => ({ t: 'node', n: r, path: r.uid })),
      new Set(),
    );
    if (focusUid && !focusDone && store.snapshotSeen) {
      focusDone = true;
      const t = forest.querySelector<HTMLElement>(`[data-uid="${CSS.escape(focusUid)}"]`);
      if (t) {
        t.scrollIntoView({ block: 'center' });
        ctx.select(focusUid);
      }
    }
  }

  return {
    el,
    update(ch: Changes) {
      if (ch.all || ch.namespaces) return render(true);
      if (!ch.objects.size) return;
      // Only re-walk when something in this namespace (or a deleted object) changed.
      for (const uid of ch.objects) {
        const o = store.objects.get(uid);
        if (!o || o.namespace === ns || !o.namespace) return render(false);
      }
    },
  };
}

function findRefNamespace(uid: string): string | undefined {
  for (const o of store.objects.values()) if (o.owners.some((r) => r.uid === uid)) return o.namespace;
  return undefined;
}

/** A grid of squares, one per pod, plus a one-line count per health. */
function updatePods(el: HTMLElement, pods: ObjectSummary[]): void {
  const sum = el.firstElementChild as HTMLElement;
  const grid = el.lastElementChild as HTMLElement;
  const counts = new Map<string, number>();
  for (const p of pods) counts.set(p.health, (counts.get(p.health) ?? 0) + 1);
  const parts = [`${num(pods.length)} pods`];
  for (const k of HEALTHS) if (counts.get(k)) parts.push(`${num(counts.get(k)!)} ${k}`);
  setText(sum, parts.join(' · '));
  reconcile(grid, pods, (p) => p.uid, createSquare, updateSquare);
}

export function createSquare(): HTMLElement {
  const e = document.createElement('div');
  e.className = 'obj sq';
  return e;
}

/** Squares carry the same data-* as tree rows; `title` gives the name on hover. */
export function updateSquare(e: HTMLElement, p: ObjectSummary): void {
  const prev = (e as { _o?: ObjectSummary })._o;
  if (prev === p) return;
  (e as { _o?: ObjectSummary })._o = p;
  if (!prev) {
    e.dataset.uid = p.uid;
    e.dataset.kind = p.kind;
  }
  if (prev?.health !== p.health) e.dataset.health = p.health;
  if (prev?.deleting !== p.deleting) setAttr(e, 'data-deleting', p.deleting ? 'true' : null);
  const title = `${p.name}\n${p.status}${p.pod?.node ? ` on ${p.pod.node}` : ''}${p.deleting ? ' (deleting)' : ''}`;
  if (e.title !== title) e.title = title;
}

function legend(): HTMLElement {
  return h(
    'span',
    { class: 'legend' },
    (['ok', 'progressing', 'warning', 'failed', 'terminating', 'unknown'] as const).map((k) =>
      h('span', null, h('span', { class: 'dot', 'data-health': k }), ` ${k}`),
    ),
  );
}
