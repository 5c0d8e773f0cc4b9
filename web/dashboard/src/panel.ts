/** The side panel: one object's summary, its full JSON, links to its tree and timeline. */
import type { ObjectSummary } from '../../../src/dashboard/protocol.js';
import { getJSON } from './api.js';
import { age, bytes, cpu, h, setKids, type Kid } from './dom.js';
import { store, type Changes } from './store.js';

export class Panel {
  el = h('aside', { class: 'panel', hidden: true });
  uid: string | null = null;
  private summary = h('div', { class: 'summary' });
  private json = h('div', { class: 'json' });
  private ctl: AbortController | null = null;

  constructor() {
    this.el.append(
      h(
        'div',
        { class: 'panel-head' },
        h('span', { class: 'grow' }),
        h('button', { class: 'icon', title: 'Close (Esc)', onclick: () => this.close() }, '×'),
      ),
      this.summary,
      h(
        'div',
        { class: 'json-head' },
        h('h4', null, 'Object'),
        h('button', { class: 'small', onclick: () => this.loadJSON() }, 'reload'),
      ),
      this.json,
    );
    document.addEventListener('keydown', (e) => {
      if (e.key === 'Escape' && this.uid) this.close();
    });
  }

  open(uid: string): void {
    const same = this.uid === uid;
    this.uid = uid;
    this.el.hidden = false;
    document.body.classList.add('with-panel');
    for (const el of document.querySelectorAll('.selected')) el.classList.remove('selected');
    for (const el of document.querySelectorAll(`[data-uid="${CSS.escape(uid)}"]`)) el.classList.add('selected');
    this.renderSummary();
    if (!same) this.loadJSON();
  }

  close(): void {
    this.uid = null;
    this.ctl?.abort();
    this.el.hidden = true;
    document.body.classList.remove('with-panel');
    for (const el of document.querySelectorAll('.selected')) el.classList.remove('selected');
  }

  update(ch: Changes): void {
    if (!this.uid) return;
    if (ch.all || ch.objects.has(this.uid)) this.renderSummary();
    // Views may have re-created the selected node.
    const sel = document.querySelectorAll(`[data-uid="${CSS.escape(this.uid)}"]:not(.selected)`);
    for (const el of sel) el.classList.add('selected');
  }

  private renderSummary(): void {
    const uid = this.uid;
    if (!uid) return;
    const o = store.objects.get(uid);
    if (!o) {
      // A dangling owner, or deleted.
      const ref = [...store.objects.values()].flatMap((x) => x.owners).find((r) => r.uid === uid);
      setKids(
        this.summary,
        h('h3', null, ref ? `${ref.kind}/${ref.name}` : uid),
        h(
          'p',
          { class: 'muted' },
          ref
            ? 'Not found: objects name it as their owner, but it does not exist (deleted, or not watched). The garbage collector deletes dependents whose owner is gone.'
            : 'This object is gone.',
        ),
        h('p', null, h('code', null, uid)),
        links(uid),
      );
      return;
    }
    setKids(
      this.summary,
      h(
        'h3',
        null,
        h('span', { class: 'dot', 'data-health': o.health }),
        h('span', { class: 'break' }, `${o.kind}/${o.name}`),
      ),
      h('div', { class: 'status-line', 'data-health': o.health }, o.status, o.deleting ? ' · deleting' : ''),
      links(uid),
      h('dl', { class: 'kv' }, fields(o, store.now())),
    );
  }

  private loadJSON(): void {
    const uid = this.uid;
    if (!uid) return;
    this.ctl?.abort();
    const ctl = new AbortController();
    this.ctl = ctl;
    setKids(this.json, h('span', { class: 'muted' }, 'loading…'));
    getJSON<unknown>(`/api/object?uid=${encodeURIComponent(uid)}`, ctl.signal).then(
      (obj) => {
        if (this.uid === uid) setKids(this.json, jsonTree(obj, 0, ''));
      },
      (e: unknown) => {
        if (ctl.signal.aborted || this.uid !== uid) return;
        const msg = e instanceof Error ? e.message : String(e);
        setKids(this.json, h('span', { class: 'muted' }, msg.startsWith('404') ? 'Not found on the server.' : msg));
      },
    );
  }
}

function links(uid: string): HTMLElement {
  const u = encodeURIComponent(uid);
  return h(
    'div',
    { class: 'links' },
    h('a', { href: `#/timeline?uid=${u}` }, 'Timeline →'),
    h('a', { href: `#/owners?uid=${u}` }, 'Owner tree →'),
  );
}

function fields(o: ObjectSummary, now: number): Kid[] {
  const out: Kid[] = [];
  const kv = (k: string, v: Kid | Kid[]) => out.push(h('dt', null, k), h('dd', null, v));
  if (o.namespace) kv('namespace', o.namespace);
  kv('apiVersion', o.apiVersion);
  kv('uid', h('code', null, o.uid));
  kv('created', `${age(now - Date.parse(o.created))} ago`);
  kv('resourceVersion', o.resourceVersion);
  if (o.revision) kv('revision', o.revision);
  if (o.owners.length)
    kv(
      'owners',
      o.owners.map((r) =>
        h(
          'div',
          null,
          h('a', { href: '#', 'data-select': r.uid }, `${r.kind}/${r.name}`),
          r.controller ? h('span', { class: 'tag' }, 'controller') : null,
          store.objects.has(r.uid) ? null : h('span', { class: 'tag danger' }, 'not found'),
        ),
      ),
    );
  const kids = store.children.get(o.uid);
  if (kids?.size) kv('dependents', String(kids.size));
  if (o.deleting) kv('deleting', 'deletionTimestamp is set');
  if (o.finalizers?.length) kv('finalizers', o.finalizers.map((f) => h('div', null, h('code', null, f))));
  if (o.replicas) {
    const r = o.replicas;
    kv(
      'replicas',
      `${r.ready}/${r.desired} ready` +
        (r.available !== undefined ? `, ${r.available} available` : '') +
        (r.updated !== undefined ? `, ${r.updated} updated` : ''),
    );
  }
  if (o.pod) {
    const p = o.pod;
    kv('phase', `${p.phase}${p.ready ? ' (ready)' : ''}`);
    if (p.node) kv('node', p.node);
    kv('containers', `${p.readyContainers}/${p.containers} ready, ${p.restarts} restarts`);
    kv('requests', `cpu ${cpu(p.requests.cpu)}, memory ${bytes(p.requests.memory)}`);
    if (p.unschedulable) kv('unschedulable', `${p.unschedulable.reason}: ${p.unschedulable.message}`);
  }
  if (o.node) {
    const n = o.node;
    kv('ready', String(n.ready));
    if (n.unschedulable) kv('unschedulable', 'cordoned');
    if (n.zone) kv('zone', n.zone);
    kv('allocatable', `cpu ${cpu(n.allocatable.cpu)}, memory ${bytes(n.allocatable.memory)}, pods ${n.allocatable.pods}`);
    if (n.taints.length) kv('taints', n.taints.map((t) => h('div', null, `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`)));
  }
  if (o.lease) {
    const l = o.lease;
    kv('holder', l.holder ?? '–');
    if (l.renewTime) kv('renewed', `${age(now - Date.parse(l.renewTime))} ago`);
    if (l.transitions !== undefined) kv('transitions', String(l.transitions));
  }
  return out;
}

/** Collapsible JSON: objects and arrays are <details>, open near the top; managedFields closed. */
function jsonTree(v: unknown, depth: number, key: string): Node {
  if (v === null || typeof v !== 'object') {
    const cls = v === null ? 'null' : typeof v;
    return h('span', { class: `j-${cls}` }, JSON.stringify(v));
  }
  const isArr = Array.isArray(v);
  const entries: [string, unknown][] = isArr ? (v as unknown[]).map((x, i) => [String(i), x]) : Object.entries(v);
  if (!entries.length) return h('span', { class: 'j-empty' }, isArr ? '[]' : '{}');
  const open = depth < 3 && key !== 'managedFields' && !(isArr && entries.length > 20);
  const d = h('details', { open });
  d.append(
    h('summary', null, isArr ? `[${entries.length}]` : `{${entries.length}}`),
    h(
      'div',
      { class: 'j-body' },
      entries.map(([k, x]) =>
        h('div', { class: 'j-row' }, h('span', { class: 'j-key' }, isArr ? `${k}:` : `${k}:`), ' ', jsonTree(x, depth + 1, k)),
      ),
    ),
  );
  return d;
}
