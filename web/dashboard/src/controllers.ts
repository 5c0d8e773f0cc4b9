/** Controllers: each control loop's work queues, its leader election and the Leases. */
import type { ObjectSummary, QueueState } from '../../../src/dashboard/protocol.js';
import { age, h, num, seconds, setKids, sparkline, type Kid } from './dom.js';
import { store, type Changes } from './store.js';
import type { Ctx, View } from './view.js';

type SortKey = 'depth' | 'adds' | 'name';

export function controllersView(_params: URLSearchParams, ctx: Ctx): View {
  let sort: SortKey = 'depth';
  const expanded = new Set<string>();
  const head = h('div', { class: 'ctl-head' });
  const list = h('div', { class: 'ctl-list' });
  const leases = h('div', { class: 'scroll-x' });
  const sortSel = h(
    'select',
    null,
    h('option', { value: 'depth' }, 'depth, then adds/s'),
    h('option', { value: 'adds' }, 'adds/s'),
    h('option', { value: 'name' }, 'name'),
  );
  sortSel.addEventListener('change', () => {
    sort = sortSel.value as SortKey;
    render();
  });
  const el = h(
    'section',
    { class: 'controllers' },
    head,
    h(
      'p',
      { class: 'hint' },
      'A controller watches objects, puts their keys (namespace/name) on its work queue and syncs them one at a time: ',
      h('em', null, 'depth'),
      ' is how many keys wait, ',
      h('em', null, 'retries'),
      ' counts keys re-queued after an error (with backoff).',
    ),
    h('div', { class: 'toolbar' }, h('h2', null, 'Controllers'), h('span', { class: 'grow' }), h('label', null, 'sort by ', sortSel)),
    list,
    h('h2', null, 'Leases'),
    leases,
  );
  el.addEventListener('click', (e) => {
    const t = e.target as Element;
    const q = t.closest<HTMLElement>('[data-queue]');
    if (q && t.closest('.expander')) {
      const name = q.dataset.queue!;
      if (expanded.has(name)) expanded.delete(name);
      else expanded.add(name);
      render();
      return;
    }
    const o = t.closest<HTMLElement>('[data-uid]');
    if (o?.dataset.uid) {
      e.preventDefault();
      ctx.select(o.dataset.uid);
    }
  });

  function queueScore(q: QueueState): [number, number] {
    return [q.depth, q.addsPerSecond];
  }

  function render(): void {
    const c = store.controllers;
    const now = store.now();
    if (!c) {
      setKids(
        head,
        h('div', { class: 'notice' }, store.snapshotSeen ? 'The server has not read the controller manager yet (no controller state).' : 'Waiting for the first snapshot…'),
      );
      setKids(list);
    } else {
      const le = c.leaderElection;
      setKids(
        head,
        h(
          'div',
          { class: 'facts' },
          h('span', null, 'Source ', h('code', null, c.source)),
          h('span', null, `read ${age(now - c.fetchedAt)} ago`),
          le
            ? h(
                'span',
                null,
                'Leader election: ',
                h('code', null, le.lease),
                ` · this instance `,
                h('code', null, le.identity),
                ' ',
                le.leading ? h('span', { class: 'tag ok' }, 'leading') : h('span', { class: 'tag warn' }, 'standby (not leading: its controllers wait)'),
              )
            : null,
        ),
        c.ok ? null : h('div', { class: 'notice error' }, h('strong', null, 'Cannot read the controller manager: '), c.error ?? 'unknown error'),
        c.mode === 'metrics'
          ? h(
              'div',
              { class: 'notice info' },
              'Only Prometheus metrics are available (',
              h('code', null, '/metrics'),
              ': a real kube-controller-manager): queue depths, rates and durations, but no keys and no errors.',
            )
          : null,
      );
      renderControllers(now);
    }
    renderLeases(now);
  }

  function renderControllers(now: number): void {
    const c = store.controllers!;
    const byName = new Map(c.queues.map((q) => [q.name, q]));
    const used = new Set<string>();
    const groups = c.controllers.map((ctl) => {
      const qs = [...new Set([...ctl.queues, ...c.queues.filter((q) => q.controller === ctl.name).map((q) => q.name)])]
        .map((n) => byName.get(n))
        .filter((q): q is QueueState => !!q);
      for (const q of qs) used.add(q.name);
      return { name: ctl.name, healthy: ctl.healthy as boolean | undefined, qs };
    });
    const orphans = c.queues.filter((q) => !used.has(q.name));
    if (orphans.length) groups.push({ name: c.controllers.length ? 'other queues' : 'queues', healthy: undefined, qs: orphans });
    const cmpQ = (a: QueueState, b: QueueState) => {
      if (sort === 'name') return a.name.localeCompare(b.name);
      const [da, ra] = queueScore(a);
      const [db, rb] = queueScore(b);
      return sort === 'adds' ? rb - ra || db - da : db - da || rb - ra;
    };
    for (const g of groups) g.qs.sort(cmpQ);
    groups.sort((a, b) => {
      if (sort === 'name') return a.name.localeCompare(b.name);
      // Unhealthy first, then the busiest queue.
      const ha = a.healthy === false ? 0 : 1;
      const hb = b.healthy === false ? 0 : 1;
      if (ha !== hb) return ha - hb;
      const qa = a.qs[0];
      const qb = b.qs[0];
      const r = qa && qb ? cmpQ(qa, qb) : qa ? -1 : qb ? 1 : 0;
      return r || a.name.localeCompare(b.name);
    });
    const metrics = c.mode === 'metrics';
    if (!groups.length) {
      setKids(list, h('p', { class: 'muted' }, 'No controllers reported.'));
      return;
    }
    setKids(
      list,
      h(
        'table',
        { class: 'grid queues' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ['Controller / queue', 'Depth', 'last 60', 'Adds/s', 'Adds', 'Retries', 'Longest running', 'p50', 'p90', 'p99', metrics ? null : 'Last error'].map((t) =>
              t === null ? null : h('th', null, t),
            ),
          ),
        ),
        groups.map((g) =>
          h(
            'tbody',
            { class: 'ctl', 'data-controller': g.name },
            h(
              'tr',
              { class: 'ctl-row' },
              h(
                'th',
                { colspan: metrics ? 10 : 11 },
                g.healthy === undefined ? null : h('span', { class: 'dot', 'data-health': g.healthy ? 'ok' : 'failed', title: g.healthy ? 'healthy' : 'unhealthy' }),
                ' ',
                g.name,
                g.healthy === false ? h('span', { class: 'tag danger' }, 'unhealthy') : null,
                g.qs.length ? null : h('span', { class: 'muted' }, ' (no queue)'),
              ),
            ),
            g.qs.flatMap((q) => queueRows(q, now, metrics)),
          ),
        ),
      ),
    );
  }

  function queueRows(q: QueueState, now: number, metrics: boolean): HTMLElement[] {
    const open = expanded.has(q.name);
    const last = q.lastErrors?.[q.lastErrors.length - 1];
    const canExpand = !metrics || q.processing.length > 0;
    const level = q.depth >= 100 ? 'high' : q.depth >= 10 ? 'mid' : q.depth > 0 ? 'low' : 'zero';
    const rows: HTMLElement[] = [
      h(
        'tr',
        { class: `q${open ? ' open' : ''}`, 'data-queue': q.name, 'data-depth': q.depth },
        h(
          'td',
          { class: 'qname' },
          canExpand ? h('button', { class: 'expander', title: open ? 'hide keys' : 'show keys and errors' }, open ? '▾' : '▸') : null,
          ' ',
          q.name,
        ),
        h('td', { class: `num depth depth-${level}` }, num(q.depth)),
        h('td', null, sparkline(store.depthHistory.get(q.name) ?? [])),
        h('td', { class: 'num' }, q.addsPerSecond.toFixed(q.addsPerSecond < 10 ? 1 : 0)),
        h('td', { class: 'num muted' }, num(q.adds)),
        h('td', { class: `num${q.retries ? ' warn' : ''}` }, num(q.retries)),
        h(
          'td',
          { class: 'longest' },
          q.longestRunningSeconds > 0 ? seconds(q.longestRunningSeconds) : '–',
          q.processing[0] ? h('code', { class: 'key', title: q.processing[0].key }, q.processing[0].key) : null,
        ),
        h('td', { class: 'num' }, seconds(q.duration.p50)),
        h('td', { class: 'num' }, seconds(q.duration.p90)),
        h('td', { class: 'num' }, seconds(q.duration.p99)),
        metrics
          ? null
          : h(
              'td',
              { class: 'lasterr' },
              last
                ? h('span', { class: 'err', title: last.message }, h('code', null, last.key), ` ${last.message} `, h('span', { class: 'muted' }, `${age(now - last.time)} ago`))
                : h('span', { class: 'muted' }, '–'),
            ),
      ),
    ];
    if (open) rows.push(h('tr', { class: 'qdetail' }, h('td', { colspan: metrics ? 10 : 11 }, queueDetail(q, now))));
    return rows;
  }

  function queueDetail(q: QueueState, now: number): Kid[] {
    const col = (title: string, body: Kid | Kid[]) => h('div', { class: 'col' }, h('h4', null, title), body);
    return [
      h(
        'div',
        { class: 'cols' },
        col(
          `Syncing now (${q.processing.length})`,
          q.processing.length
            ? h('ul', { class: 'keys' }, q.processing.map((p) => h('li', null, h('code', null, p.key), h('span', { class: 'muted' }, ` ${seconds(p.seconds)}`))))
            : h('p', { class: 'muted' }, 'idle'),
        ),
        q.waiting
          ? col(
              `Waiting (${num(q.depth)}${q.depth > q.waiting.length ? `, first ${q.waiting.length}` : ''})`,
              q.waiting.length ? h('ul', { class: 'keys' }, q.waiting.map((k) => h('li', null, h('code', null, k)))) : h('p', { class: 'muted' }, 'empty'),
            )
          : null,
        q.lastErrors
          ? col(
              `Last errors (${q.lastErrors.length})`,
              q.lastErrors.length
                ? h(
                    'ul',
                    { class: 'errors' },
                    q.lastErrors
                      .slice()
                      .reverse()
                      .map((e) => h('li', null, h('code', null, e.key), h('span', { class: 'muted' }, ` ${age(now - e.time)} ago`), h('div', { class: 'err' }, e.message))),
                  )
                : h('p', { class: 'muted' }, 'none'),
            )
          : null,
        col('Sync durations', h('p', null, `${num(q.duration.count)} syncs · p50 ${seconds(q.duration.p50)} · p90 ${seconds(q.duration.p90)} · p99 ${seconds(q.duration.p99)}`)),
      ),
    ];
  }

  function renderLeases(now: number): void {
    const ls: ObjectSummary[] = [];
    for (const o of store.objects.values()) if (o.kind === 'Lease') ls.push(o);
    const le = store.controllers?.leaderElection;
    const isOurs = (o: ObjectSummary) =>
      !!le && (le.lease === o.name || le.lease === `${o.namespace}/${o.name}` || le.lease.endsWith(`/${o.namespace}/${o.name}`));
    // The controller manager's own lease first, node heartbeats (kube-node-lease) last.
    ls.sort((a, b) => {
      const r = Number(isOurs(b)) - Number(isOurs(a)) || Number(a.namespace === 'kube-node-lease') - Number(b.namespace === 'kube-node-lease');
      return r || `${a.namespace}/${a.name}`.localeCompare(`${b.namespace}/${b.name}`);
    });
    const nodeLeases = ls.filter((l) => l.namespace === 'kube-node-lease');
    const others = ls.filter((l) => l.namespace !== 'kube-node-lease');
    const row = (o: ObjectSummary) => {
      const l = o.lease ?? {};
      const renewed = l.renewTime ? now - Date.parse(l.renewTime) : undefined;
      const stale = renewed !== undefined && l.durationSeconds !== undefined && renewed > l.durationSeconds * 1000;
      return h(
        'tr',
        { class: isOurs(o) ? 'ours' : '' },
        h('td', null, h('a', { href: '#', 'data-uid': o.uid, 'data-kind': 'Lease' }, `${o.namespace}/${o.name}`), isOurs(o) ? h('span', { class: 'tag' }, 'controller manager') : null),
        h('td', null, l.holder ? h('code', null, l.holder) : h('span', { class: 'muted' }, 'none')),
        h('td', { class: stale ? 'warn' : '' }, renewed === undefined ? '–' : `${age(renewed)} ago${stale ? ' (expired)' : ''}`),
        h('td', { class: 'num' }, l.durationSeconds !== undefined ? `${l.durationSeconds}s` : '–'),
        h('td', { class: 'num' }, l.transitions ?? '–'),
      );
    };
    setKids(
      leases,
      others.length || nodeLeases.length
        ? h(
            'table',
            { class: 'grid leases' },
            h('thead', null, h('tr', null, ['Lease', 'Holder', 'Renewed', 'Duration', 'Transitions'].map((t) => h('th', null, t)))),
            h('tbody', null, others.map(row)),
            nodeLeases.length
              ? h(
                  'tbody',
                  null,
                  h('tr', null, h('th', { colspan: 5, class: 'sub' }, `Node heartbeats (kube-node-lease): ${nodeLeases.length}`)),
                  nodeLeases.slice(0, 20).map(row),
                )
              : null,
          )
        : h('p', { class: 'muted' }, 'No Lease objects.'),
    );
  }

  let leaseSig = '';
  return {
    el,
    update(ch: Changes) {
      if (ch.all || ch.controllers) return render();
      if (!ch.objects.size) return;
      // Leases changed?
      let sig = '';
      for (const o of store.objects.values()) if (o.kind === 'Lease') sig += o.resourceVersion + ',';
      if (sig !== leaseSig) {
        leaseSig = sig;
        renderLeases(store.now());
      }
    },
  };
}
