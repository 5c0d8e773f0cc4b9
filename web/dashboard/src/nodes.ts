/** Nodes: capacity versus what the scheduler has placed, and why pods are Pending. */
import type { ObjectSummary, SchedulingDecision } from '../../../src/dashboard/protocol.js';
import { age, bytes, clock, cpu, h, num, reconcile, setAttr, setKids, setText } from './dom.js';
import { createSquare, updateSquare } from './owners.js';
import { store, type Changes } from './store.js';
import type { Ctx, View } from './view.js';

/** Conditions whose healthy status is "False" (pressure and the like); Ready is the exception. */
function conditionOk(c: { type: string; status: string }): boolean {
  return c.type === 'Ready' ? c.status === 'True' : c.status !== 'True';
}

interface NodeUse {
  node: ObjectSummary;
  pods: ObjectSummary[];
  cpu: number;
  memory: number;
  /** Pods counted against allocatable.pods (not Succeeded/Failed). */
  active: number;
}

export function nodesView(_params: URLSearchParams, ctx: Ctx): View {
  const summary = h('span', { class: 'muted' });
  const grid = h('div', { class: 'nodes' });
  const pendingEl = h('div', { class: 'scroll-x' });
  const schedEl = h('div', { class: 'scroll-x' });
  const el = h(
    'section',
    { class: 'nodes-view' },
    h('div', { class: 'toolbar' }, h('h2', null, 'Nodes'), summary),
    h(
      'p',
      { class: 'hint' },
      'Requested = the sum of the requests of the pods bound to the node (not Succeeded or Failed): what the scheduler compares with allocatable.',
    ),
    grid,
    h('h2', null, 'Pending pods'),
    pendingEl,
    h('h2', null, 'Scheduler decisions ', h('span', { class: 'muted small' }, 'newest first')),
    schedEl,
  );
  el.addEventListener('click', (e) => {
    const t = (e.target as Element).closest<HTMLElement>('[data-uid]');
    if (t?.dataset.uid) {
      e.preventDefault();
      ctx.select(t.dataset.uid);
    }
  });

  function renderNodes(): void {
    const use = new Map<string, NodeUse>();
    const nodes: ObjectSummary[] = [];
    for (const o of store.objects.values()) if (o.kind === 'Node') nodes.push(o);
    nodes.sort((a, b) => a.name.localeCompare(b.name, 'en', { numeric: true }));
    for (const n of nodes) use.set(n.name, { node: n, pods: [], cpu: 0, memory: 0, active: 0 });
    const pending: ObjectSummary[] = [];
    for (const o of store.objects.values()) {
      const p = o.pod;
      if (!p) continue;
      if (!p.node) {
        if (p.unschedulable || p.phase === 'Pending') pending.push(o);
        continue;
      }
      const u = use.get(p.node);
      if (!u) continue;
      u.pods.push(o);
      if (p.phase !== 'Succeeded' && p.phase !== 'Failed') {
        u.cpu += p.requests.cpu;
        u.memory += p.requests.memory;
        u.active++;
      }
    }
    let ready = 0;
    for (const n of nodes) if (n.node?.ready) ready++;
    setText(summary, `${nodes.length} nodes, ${ready} ready · ${num(pending.length)} pods not on a node`);
    reconcile(grid, [...use.values()], (u) => u.node.uid, createCard, updateCard);
    if (!nodes.length) setKids(grid, h('div', { class: 'empty' }, store.snapshotSeen ? 'No nodes.' : 'Waiting for the first snapshot…'));
    renderPending(pending);
  }

  function renderPending(pending: ObjectSummary[]): void {
    const unsched = pending.filter((p) => p.pod?.unschedulable);
    const waiting = pending.length - unsched.length;
    unsched.sort((a, b) => (a.created < b.created ? -1 : 1));
    const sig = unsched.map((p) => `${p.uid}:${p.resourceVersion}`).join(',') + `|${waiting}`;
    if (pendingEl.dataset.sig === sig) return;
    pendingEl.dataset.sig = sig;
    setKids(
      pendingEl,
      unsched.length
        ? h(
            'table',
            { class: 'grid' },
            h('thead', null, h('tr', null, h('th', null, 'Pod'), h('th', null, 'Reason'), h('th', null, 'Why (the scheduler’s filters)'), h('th', null, 'Age'))),
            h(
              'tbody',
              null,
              unsched.slice(0, 300).map((p) =>
                h(
                  'tr',
                  null,
                  h('td', null, h('a', { href: '#', 'data-uid': p.uid, 'data-kind': 'Pod', 'data-health': p.health }, `${p.namespace}/${p.name}`)),
                  h('td', { class: 'warn' }, p.pod!.unschedulable!.reason),
                  h('td', { class: 'msg' }, p.pod!.unschedulable!.message),
                  h('td', null, age(store.now() - Date.parse(p.created))),
                ),
              ),
            ),
          )
        : h('p', { class: 'muted' }, 'No unschedulable pods.'),
      unsched.length > 300 ? h('p', { class: 'muted' }, `…and ${num(unsched.length - 300)} more.`) : null,
      waiting ? h('p', { class: 'muted' }, `${num(waiting)} more pending pods are not scheduled yet (no PodScheduled=False).`) : null,
    );
  }

  let showAll = false;
  const schedBody = h('tbody');
  const schedMore = h('p', { class: 'muted' });
  const schedTable = h(
    'table',
    { class: 'grid sched' },
    h('thead', null, h('tr', null, h('th', null, 'Time'), h('th', null, 'Pod'), h('th', null, 'Reason'), h('th', null, 'Node / message'))),
    schedBody,
  );
  schedEl.append(schedTable, schedMore);

  function renderScheduling(): void {
    const all = store.scheduling;
    const n = showAll ? all.length : Math.min(100, all.length);
    const list = all.slice(all.length - n).reverse();
    const seen = new Map<string, number>();
    const key = (d: SchedulingDecision) => {
      const k = `${d.time}|${d.namespace}/${d.pod}|${d.reason}`;
      const c = seen.get(k) ?? 0;
      seen.set(k, c + 1);
      return `${k}#${c}`;
    };
    schedTable.hidden = !list.length;
    reconcile(schedBody, list, key, schedRow, () => {});
    setKids(
      schedMore,
      !all.length ? 'No decisions seen yet.' : null,
      all.length > 100
        ? h(
            'button',
            {
              class: 'small',
              onclick: () => {
                showAll = !showAll;
                renderScheduling();
              },
            },
            showAll ? 'show the newest 100' : `show all ${all.length}`,
          )
        : null,
    );
  }

  return {
    el,
    update(ch: Changes) {
      if (ch.all || ch.scheduling) renderScheduling();
      if (ch.all || ch.objects.size) renderNodes();
    },
  };
}

function schedRow(d: SchedulingDecision): HTMLElement {
  const ok = d.reason === 'Scheduled';
  return h(
    'tr',
    { class: ok ? '' : 'warn-row' },
    h('td', { class: 'mono' }, clock(d.time)),
    h('td', null, d.podUid ? h('a', { href: '#', 'data-uid': d.podUid }, `${d.namespace}/${d.pod}`) : `${d.namespace}/${d.pod}`),
    h('td', { class: ok ? 'okc' : 'warn' }, d.reason),
    h('td', { class: 'msg' }, d.node ? `→ ${d.node}${ok ? '' : ` · ${d.message}`}` : d.message),
  );
}

function createCard(): HTMLElement {
  const bar = (label: string) =>
    h('div', { class: 'bar' }, h('span', { class: 'bar-label' }, label), h('span', { class: 'bar-track' }, h('span', { class: 'bar-fill' })), h('span', { class: 'bar-text' }));
  return h(
    'div',
    { class: 'card node' },
    h('div', { class: 'card-head' }, h('span', { class: 'dot' }), h('strong', { class: 'name' }), h('span', { class: 'badges' })),
    h('div', { class: 'taints' }),
    h('div', { class: 'conds' }),
    bar('cpu'),
    bar('memory'),
    bar('pods'),
    h('div', { class: 'squares' }),
  );
}

function setBar(bar: Element, used: number, total: number, text: string): void {
  const fill = bar.querySelector('.bar-fill') as HTMLElement;
  const pct = total > 0 ? Math.min(100, (used / total) * 100) : 0;
  const w = `${pct.toFixed(1)}%`;
  if (fill.style.width !== w) fill.style.width = w;
  setAttr(fill, 'data-level', used > total ? 'over' : pct >= 90 ? 'high' : pct >= 70 ? 'mid' : 'low');
  setText(bar.querySelector('.bar-text')!, text);
}

function updateCard(el: HTMLElement, u: NodeUse): void {
  // Skip cards whose node and pods are all unchanged (objects are replaced on every update).
  let sig = u.node.resourceVersion;
  for (const p of u.pods) sig += `,${p.resourceVersion}`;
  if ((el as { _sig?: string })._sig === sig) return;
  (el as { _sig?: string })._sig = sig;
  const n = u.node;
  const info = n.node;
  setAttr(el, 'data-uid', n.uid);
  setAttr(el, 'data-kind', 'Node');
  setAttr(el, 'data-health', n.health);
  const [head, taints, conds, cpuBar, memBar, podBar, squares] = el.children as unknown as HTMLElement[];
  setAttr(head!.querySelector('.dot')!, 'data-health', n.health);
  setText(head!.querySelector('.name')!, n.name);
  const badgeSig = `${info?.ready}|${info?.unschedulable}|${info?.zone}|${n.deleting}`;
  const badges = head!.querySelector<HTMLElement>('.badges')!;
  if (badges.dataset.sig !== badgeSig) {
    badges.dataset.sig = badgeSig;
    setKids(
      badges,
      info?.ready ? h('span', { class: 'tag ok' }, 'Ready') : h('span', { class: 'tag danger' }, 'NotReady'),
      info?.unschedulable ? h('span', { class: 'tag warn' }, 'cordoned') : null,
      n.deleting ? h('span', { class: 'tag' }, 'deleting') : null,
      info?.zone ? h('span', { class: 'tag muted' }, info.zone) : null,
    );
  }
  const taintSig = JSON.stringify(info?.taints ?? []);
  if (taints!.dataset.sig !== taintSig) {
    taints!.dataset.sig = taintSig;
    setKids(
      taints!,
      (info?.taints ?? []).map((t) => h('span', { class: 'taint', title: 'taint' }, `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`)),
    );
  }
  const condSig = JSON.stringify(info?.conditions ?? []);
  if (conds!.dataset.sig !== condSig) {
    conds!.dataset.sig = condSig;
    const list = info?.conditions ?? [];
    const good = list.filter(conditionOk);
    setKids(
      conds!,
      list.filter((c) => !conditionOk(c)).map((c) =>
        h('span', { class: 'cond bad', title: c.message ?? '' }, `${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ''}`),
      ),
      good.length
        ? h('span', { class: 'cond ok', title: good.map((c) => `${c.type}=${c.status}`).join('\n') }, `${good.length} condition${good.length === 1 ? '' : 's'} ok`)
        : null,
    );
  }
  const a = info?.allocatable ?? { cpu: 0, memory: 0, pods: 0 };
  setBar(cpuBar!, u.cpu, a.cpu, `${cpu(u.cpu)} / ${cpu(a.cpu)}`);
  setBar(memBar!, u.memory, a.memory, `${bytes(u.memory)} / ${bytes(a.memory)}`);
  setBar(podBar!, u.active, a.pods, `${u.active} / ${a.pods}`);
  u.pods.sort((x, y) => (x.name < y.name ? -1 : 1));
  reconcile(squares!, u.pods, (p) => p.uid, createSquare, updateSquare);
}
