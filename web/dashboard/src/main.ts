/** Entry: top bar, hash router, the event stream and the render loop. */
import type { ControllersState, Delta, SchedulingDecision, Snapshot } from '../../../src/dashboard/protocol.js';
import { probeAuth, setUnauthorizedHandler } from './api.js';
import { controllersView } from './controllers.js';
import { h, num, setAttr, setText } from './dom.js';
import { nodesView } from './nodes.js';
import { ownersView } from './owners.js';
import { Panel } from './panel.js';
import { allChanged, store, type Changes, type Conn } from './store.js';
import { timelineView } from './timeline.js';
import type { Ctx, View, ViewFactory } from './view.js';

const ROUTES: Record<string, { title: string; make: ViewFactory }> = {
  controllers: { title: 'Controllers', make: controllersView },
  owners: { title: 'Owners', make: ownersView },
  timeline: { title: 'Timeline', make: timelineView },
  nodes: { title: 'Nodes', make: nodesView },
};

// ---- layout ---------------------------------------------------------------

const connEl = h('span', { class: 'conn', 'data-state': 'connecting' }, 'connecting');
const clusterEl = h('span', { class: 'cluster', title: 'API server' });
const countsEl = h('span', { class: 'counts' });
const nav = h(
  'nav',
  null,
  Object.entries(ROUTES).map(([k, r]) => h('a', { href: `#/${k}`, 'data-route': k }, r.title)),
);
const banner = h('div', { class: 'banner', hidden: true });
const main = h('main');
const panel = new Panel();

document.body.append(
  h('header', { class: 'top' }, h('span', { class: 'brand' }, 'kcm'), nav, h('span', { class: 'grow' }), countsEl, clusterEl, connEl),
  banner,
  h('div', { class: 'body' }, main, panel.el),
);

function showBanner(text: string | null): void {
  banner.hidden = text === null;
  if (text !== null) setText(banner, text);
}
// Links inside the side panel (owners) open another object.
document.addEventListener('click', (e) => {
  const a = (e.target as Element).closest<HTMLElement>('[data-select]');
  if (a?.dataset.select) {
    e.preventDefault();
    panel.open(a.dataset.select);
  }
});
setUnauthorizedHandler(() => {
  store.setConn('unauthorized');
});

// ---- routing --------------------------------------------------------------

let view: View | null = null;
let viewName = '';

const ctx: Ctx = {
  select(uid) {
    panel.open(uid);
  },
  selected: () => panel.uid,
};

function route(): void {
  const raw = location.hash.replace(/^#\/?/, '');
  const [path, query] = raw.split('?', 2) as [string, string | undefined];
  const name = ROUTES[path] ? path : 'controllers';
  const params = new URLSearchParams(query ?? '');
  view?.destroy?.();
  viewName = name;
  view = ROUTES[name]!.make(params, ctx);
  main.textContent = '';
  main.append(view.el);
  for (const a of nav.querySelectorAll('a')) a.classList.toggle('active', a.dataset.route === name);
  document.title = `kcm · ${ROUTES[name]!.title}`;
  renderView(allChanged());
}
window.addEventListener('hashchange', route);

// ---- render loop ----------------------------------------------------------

/** Render timings, newest last (read by tests and by `localStorage.kcmPerf = 1`). */
interface PerfEntry {
  view: string;
  changes: number;
  ms: number;
  layoutMs: number;
}
const perf: PerfEntry[] = [];
(window as unknown as { __kcmPerf: PerfEntry[] }).__kcmPerf = perf;
const perfLog = (() => {
  try {
    return localStorage.getItem('kcmPerf') === '1';
  } catch {
    return false;
  }
})();

function record(e: PerfEntry): void {
  perf.push(e);
  if (perf.length > 500) perf.shift();
}

function renderView(ch: Changes): void {
  if (!view) return;
  const t0 = performance.now();
  view.update(ch);
  panel.update(ch);
  const t1 = performance.now();
  // Force style and layout now so the log shows what the browser pays for it too.
  if (perfLog) void document.body.offsetHeight;
  const t2 = performance.now();
  const entry = { view: viewName, changes: ch.count, ms: +(t1 - t0).toFixed(2), layoutMs: +(t2 - t1).toFixed(2) };
  record(entry);
  if (perfLog) console.log(`[kcm] render ${entry.view}: ${entry.ms} ms (+${entry.layoutMs} ms layout), ${entry.changes} changes`);
}

let frame = 0;
function schedule(): void {
  if (!frame) frame = requestAnimationFrame(flush);
}
function flush(): void {
  frame = 0;
  renderChrome();
  renderView(store.take());
}
store.onChange = schedule;

const CONN_TEXT: Record<Conn, string> = {
  connecting: 'connecting…',
  live: 'live',
  reconnecting: 'reconnecting…',
  unauthorized: 'not signed in',
};
let podCountEpoch = -1;
let podCount = 0;
function renderChrome(): void {
  setAttr(connEl, 'data-state', store.conn);
  setText(connEl, CONN_TEXT[store.conn]);
  setText(clusterEl, store.cluster);
  if (podCountEpoch !== store.structEpoch) {
    podCountEpoch = store.structEpoch;
    podCount = 0;
    for (const o of store.objects.values()) if (o.kind === 'Pod') podCount++;
  }
  const pods = podCount;
  setText(countsEl, store.snapshotSeen ? `${num(store.objects.size)} objects · ${num(pods)} pods` : '');
  showBanner(
    store.conn === 'unauthorized' ? 'Not signed in: open the dashboard URL that kcm printed (it carries a login token)' : null,
  );
}

// ---- event stream ---------------------------------------------------------

let es: EventSource | null = null;
let retry = 0;

function connect(): void {
  es?.close();
  const src = new EventSource('/api/stream');
  es = src;
  const parse = <T>(ev: Event): T | undefined => {
    try {
      return JSON.parse((ev as MessageEvent<string>).data) as T;
    } catch (e) {
      console.error('[kcm] bad event', ev.type, e);
      return undefined;
    }
  };
  src.addEventListener('open', () => {
    retry = 0;
  });
  src.addEventListener('snapshot', (ev) => {
    const s = parse<Snapshot>(ev);
    if (!s) return;
    store.setConn('live');
    store.applySnapshot(s);
  });
  src.addEventListener('delta', (ev) => {
    const t0 = performance.now();
    const d = parse<Delta>(ev);
    if (!d) return;
    store.applyDelta(d);
    record({ view: 'apply-delta', changes: d.upserts.length + d.deletes.length, ms: +(performance.now() - t0).toFixed(2), layoutMs: 0 });
  });
  src.addEventListener('controllers', (ev) => {
    const c = parse<ControllersState>(ev);
    if (c) store.applyControllers(c);
  });
  src.addEventListener('scheduling', (ev) => {
    const s = parse<SchedulingDecision[]>(ev);
    if (s) store.applyScheduling(s);
  });
  src.addEventListener('error', () => {
    if (src !== es) return;
    if (src.readyState === EventSource.CONNECTING) {
      // The browser retries by itself.
      if (store.conn !== 'unauthorized') store.setConn(store.snapshotSeen ? 'reconnecting' : 'connecting');
      return;
    }
    // CLOSED: the server answered with an error status (401?) — find out, then retry ourselves.
    store.setConn('reconnecting');
    void probeAuth().then((r) => {
      if (src !== es) return;
      if (r === 'unauthorized') store.setConn('unauthorized');
      const delay = Math.min(30_000, 1000 * 2 ** retry++);
      setTimeout(() => {
        if (src === es) connect();
      }, delay);
    });
  });
}

route();
connect();
renderChrome();
