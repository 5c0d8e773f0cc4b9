/** Timeline: what happened to an object and its dependents — writes, events and reconciles, oldest first. */
import type { TimelineEntry, TimelineResponse } from '../../../src/dashboard/protocol.js';
import { getJSON, Unauthorized } from './api.js';
import { clock, h, reconcile, setKids, setText } from './dom.js';
import { store, type Changes } from './store.js';
import type { Ctx, View } from './view.js';

type Kind = TimelineEntry['type'];
const TYPES: { t: Kind; label: string }[] = [
  { t: 'write', label: 'writes' },
  { t: 'event', label: 'events' },
  { t: 'reconcile', label: 'reconciles' },
];

function isProblem(e: TimelineEntry): boolean {
  return (e.type === 'event' && e.eventType === 'Warning') || (e.type === 'reconcile' && !!e.error);
}

export function timelineView(params: URLSearchParams, ctx: Ctx): View {
  const uid = params.get('uid');
  let descendants = params.get('descendants') !== '0';
  const shown = new Set<Kind>(['write', 'event', 'reconcile']);
  let problemsOnly = false;
  let data: TimelineResponse | null = null;
  let visible: TimelineEntry[] = [];
  let keys: string[] = [];
  let cur = -1;
  let playing: ReturnType<typeof setInterval> | null = null;
  let lastFetch = 0;
  let refetchTimer: ReturnType<typeof setTimeout> | null = null;
  let inflight: AbortController | null = null;
  let destroyed = false;
  let follow = true;

  const title = h('h2', { class: 'tl-title' });
  const status = h('span', { class: 'muted' });
  const chips = h('span', { class: 'chips' });
  const descBox = h('input', { type: 'checkbox', checked: descendants });
  const list = h('ol', { class: 'timeline' });
  const slider = h('input', { type: 'range', min: 0, max: 0, value: 0, class: 'slider' });
  const stepInfo = h('span', { class: 'stepinfo muted' });
  const playBtn = h('button', { title: 'play / pause' }, 'play');
  const btn = (label: string, t: string, f: () => void) => h('button', { title: t, onclick: f }, label);

  const el = h(
    'section',
    { class: 'timeline-view' },
    title,
    h(
      'div',
      { class: 'toolbar' },
      h('label', null, descBox, ' include dependents'),
      chips,
      h('span', { class: 'grow' }),
      status,
    ),
    h(
      'div',
      { class: 'toolbar replay' },
      h('strong', null, 'Replay'),
      btn('« first', 'first', () => step(0)),
      btn('‹ prev', 'previous', () => step(cur - 1)),
      playBtn,
      btn('next ›', 'next', () => step(cur + 1)),
      btn('last »', 'last', () => step(visible.length - 1)),
      slider,
      stepInfo,
      btn('clear', 'stop replaying', () => step(-1)),
    ),
    list,
  );

  if (!uid) {
    setKids(
      el,
      h('h2', null, 'Timeline'),
      h('p', { class: 'empty' }, 'Pick an object: open ', h('a', { href: '#/owners' }, 'Owners'), ' and choose "Timeline" in its side panel.'),
    );
    return { el, update() {} };
  }

  descBox.addEventListener('change', () => {
    descendants = descBox.checked;
    void load();
  });
  slider.addEventListener('input', () => step(Number(slider.value)));
  playBtn.addEventListener('click', () => {
    if (playing) stop();
    else {
      if (cur >= visible.length - 1) cur = -1;
      playing = setInterval(() => {
        if (cur >= visible.length - 1) stop();
        else step(cur + 1);
      }, 700);
      setText(playBtn, 'pause');
    }
  });
  list.addEventListener('click', (e) => {
    const t = e.target as Element;
    const a = t.closest<HTMLElement>('[data-uid]');
    if (a?.dataset.uid) {
      e.preventDefault();
      ctx.select(a.dataset.uid);
      return;
    }
    const li = t.closest<HTMLElement>('li[data-i]');
    if (li) step(Number(li.dataset.i));
  });
  window.addEventListener('scroll', onScroll, { passive: true });

  function onScroll(): void {
    follow = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  }

  function stop(): void {
    if (playing) clearInterval(playing);
    playing = null;
    setText(playBtn, 'play');
  }

  function step(i: number): void {
    if (!visible.length) i = -1;
    cur = Math.max(-1, Math.min(visible.length - 1, i));
    if (cur < 0) stop();
    slider.value = String(Math.max(0, cur));
    const e = visible[cur];
    setText(
      stepInfo,
      e ? `${cur + 1} / ${visible.length} · ${clock(e.time)}${cur > 0 ? ` · +${((e.time - visible[0]!.time) / 1000).toFixed(3)}s` : ''}` : `${visible.length} entries`,
    );
    for (const li of list.querySelectorAll('.cur')) li.classList.remove('cur');
    const li = list.children[cur] as HTMLElement | undefined;
    if (li) {
      li.classList.add('cur');
      li.scrollIntoView({ block: 'nearest' });
    }
    list.classList.toggle('replaying', cur >= 0);
    // Entries after the current step are "in the future".
    for (let k = 0; k < list.children.length; k++) list.children[k]!.classList.toggle('future', cur >= 0 && k > cur);
  }

  function renderChips(): void {
    const counts = new Map<Kind, number>();
    let problems = 0;
    for (const e of data?.entries ?? []) {
      counts.set(e.type, (counts.get(e.type) ?? 0) + 1);
      if (isProblem(e)) problems++;
    }
    setKids(
      chips,
      TYPES.map(({ t, label }) =>
        h(
          'button',
          {
            class: `chip chip-${t}${shown.has(t) ? ' on' : ''}`,
            onclick: () => {
              if (shown.has(t)) shown.delete(t);
              else shown.add(t);
              renderList();
            },
          },
          `${label} ${counts.get(t) ?? 0}`,
        ),
      ),
      h(
        'button',
        {
          class: `chip chip-problem${problemsOnly ? ' on' : ''}`,
          onclick: () => {
            problemsOnly = !problemsOnly;
            renderList();
          },
        },
        `warnings & errors ${problems}`,
      ),
    );
  }

  function renderTitle(): void {
    const o = store.objects.get(uid!);
    setKids(
      title,
      'Timeline of ',
      o ? h('a', { href: '#', 'data-uid': uid!, class: 'objlink' }, `${o.kind}/${o.name}`) : h('code', null, uid!),
      o?.namespace ? h('span', { class: 'muted' }, ` in ${o.namespace}`) : null,
      ' ',
      h('a', { class: 'small-link', href: `#/owners?uid=${encodeURIComponent(uid!)}` }, 'owner tree →'),
    );
    // The title link opens the panel (the list's click handler covers only the list).
    title.querySelector('[data-uid]')?.addEventListener('click', (e) => {
      e.preventDefault();
      ctx.select(uid!);
    });
  }

  function renderList(): void {
    renderChips();
    const all = data?.entries ?? [];
    visible = all.filter((e) => shown.has(e.type) && (!problemsOnly || isProblem(e)));
    // Keys: stable across re-fetches so appended entries don't rebuild the list.
    const seen = new Map<string, number>();
    keys = visible.map((e) => {
      const base = `${e.type}|${e.time}|${e.type === 'reconcile' ? `${e.queue}|${e.key}` : `${e.uid}|${e.type === 'write' ? e.resourceVersion : e.reason}`}`;
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      return `${base}#${n}`;
    });
    const idx = new Map(visible.map((e, i) => [e, i]));
    reconcile(
      list,
      visible,
      (e) => keys[idx.get(e)!]!,
      entryEl,
      (li, e) => {
        li.dataset.i = String(idx.get(e));
      },
    );
    slider.max = String(Math.max(0, visible.length - 1));
    if (!visible.length) list.append();
    step(cur >= visible.length ? visible.length - 1 : cur);
    setText(status, `${all.length} entries${data ? ` · ${data.uids.length} object${data.uids.length === 1 ? '' : 's'}` : ''}${all.length >= 2000 ? ' (the newest 2,000)' : ''}`);
    if (follow && cur < 0 && visible.length) window.scrollTo({ top: document.body.scrollHeight });
  }

  async function load(): Promise<void> {
    inflight?.abort();
    const ctl = new AbortController();
    inflight = ctl;
    lastFetch = Date.now();
    if (!data) setText(status, 'loading…');
    try {
      const r = await getJSON<TimelineResponse>(
        `/api/timeline?uid=${encodeURIComponent(uid!)}${descendants ? '&descendants=1' : ''}`,
        ctl.signal,
      );
      if (destroyed || ctl.signal.aborted) return;
      data = r;
      renderList();
    } catch (e) {
      if (ctl.signal.aborted || destroyed) return;
      setText(status, e instanceof Unauthorized ? e.message : `could not load: ${e instanceof Error ? e.message : String(e)}`);
    }
  }

  /** At most one fetch a second while deltas touch our objects. */
  function refetchSoon(): void {
    if (refetchTimer) return;
    const wait = Math.max(0, 1000 - (Date.now() - lastFetch));
    refetchTimer = setTimeout(() => {
      refetchTimer = null;
      void load();
    }, wait);
  }

  renderTitle();
  void load();

  return {
    el,
    update(ch: Changes) {
      if (ch.all || ch.objects.has(uid)) renderTitle();
      if (ch.all && data) refetchSoon();
      if (!data || !ch.touched.size) return;
      for (const u of data.uids) {
        if (ch.touched.has(u)) {
          refetchSoon();
          break;
        }
      }
    },
    destroy() {
      destroyed = true;
      stop();
      inflight?.abort();
      if (refetchTimer) clearTimeout(refetchTimer);
      window.removeEventListener('scroll', onScroll);
    },
  };
}

function objLink(uid: string, kind: string, name: string): HTMLElement {
  return h('a', { href: '#', class: 'objlink', 'data-uid': uid }, `${kind}/${name}`);
}

function entryEl(e: TimelineEntry): HTMLElement {
  const time = h('time', null, clock(e.time));
  switch (e.type) {
    case 'write':
      return h(
        'li',
        { class: `tl tl-write op-${e.op.toLowerCase()}`, 'data-type': 'write' },
        time,
        h('span', { class: 'badge' }, e.op === 'ADDED' ? 'created' : e.op === 'DELETED' ? 'deleted' : 'updated'),
        h(
          'div',
          { class: 'tl-body' },
          h(
            'div',
            null,
            objLink(e.uid, e.kind, e.name),
            e.manager ? h('span', { class: 'who' }, ` by ${e.manager}`) : h('span', { class: 'who muted' }, ' (writer unknown)'),
            h('span', { class: 'muted' }, ` rv ${e.resourceVersion}`),
          ),
          e.text ? h('div', { class: 'text' }, e.text) : null,
          e.changed.length ? h('div', { class: 'paths' }, e.changed.map((p) => h('code', null, p))) : null,
        ),
      );
    case 'event':
      return h(
        'li',
        { class: `tl tl-event${e.eventType === 'Warning' ? ' warning' : ''}`, 'data-type': 'event' },
        time,
        h('span', { class: 'badge' }, e.eventType === 'Warning' ? 'warning' : 'event'),
        h(
          'div',
          { class: 'tl-body' },
          h(
            'div',
            null,
            objLink(e.uid, e.kind, e.name),
            ' ',
            h('strong', null, e.reason),
            h('span', { class: 'who' }, ` from ${e.source}`),
            e.count > 1 ? h('span', { class: 'muted' }, ` ×${e.count}`) : null,
          ),
          h('div', { class: 'text' }, e.message),
        ),
      );
    case 'reconcile':
      return h(
        'li',
        { class: `tl tl-reconcile${e.error ? ' error' : ''}`, 'data-type': 'reconcile' },
        time,
        h('span', { class: 'badge' }, 'reconcile'),
        h(
          'div',
          { class: 'tl-body' },
          h(
            'div',
            null,
            h('strong', null, e.controller),
            e.queue && e.queue !== e.controller ? h('span', { class: 'muted' }, ` (queue ${e.queue})`) : null,
            ' synced ',
            h('code', null, e.key),
            h('span', { class: 'muted' }, ` in ${e.durationMs < 10 ? e.durationMs.toFixed(1) : Math.round(e.durationMs)} ms`),
          ),
          e.error ? h('div', { class: 'text err' }, `error: ${e.error}`) : null,
        ),
      );
  }
}
