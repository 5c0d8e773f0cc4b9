/**
 * `kcm up`'s status: what is up so far (API server ready, controller-manager
 * caches synced, scheduler, nodes Ready n/N). On a terminal it is one line
 * redrawn in place until everything is ready; otherwise one plain line per
 * change, so logs and CI output stay readable.
 */

export interface UpStatus {
  apiServerReadyMs?: number;
  cachesSyncedMs?: number;
  controllers?: { started: number; skipped: number };
  schedulerStarted?: boolean;
  nodesReady: number;
  nodesWanted: number;
  readyMs?: number;
  restarts: number;
}

export interface StatusView {
  update(change: Partial<UpStatus>): void;
  current(): Readonly<UpStatus>;
  /** Ends the live line (a newline on a terminal). */
  finish(): void;
}

export function isAllReady(s: UpStatus, wantScheduler: boolean): boolean {
  return s.apiServerReadyMs !== undefined && s.cachesSyncedMs !== undefined && (!wantScheduler || !!s.schedulerStarted) && s.nodesReady >= s.nodesWanted;
}

export function renderStatusLine(s: UpStatus): string {
  const mark = (ok: boolean) => (ok ? '✔' : '…');
  const parts = [
    `${mark(s.apiServerReadyMs !== undefined)} API server ready`,
    `${mark(s.cachesSyncedMs !== undefined)} caches synced${s.controllers ? ` (${s.controllers.started} controllers)` : ''}`,
    `${mark(s.nodesReady >= s.nodesWanted)} nodes Ready ${s.nodesReady}/${s.nodesWanted}`,
  ];
  if (s.restarts > 0) parts.push(`restarts ${s.restarts}`);
  return parts.join('  ');
}

export function newStatusView(out: NodeJS.WritableStream & { isTTY?: boolean }, nodesWanted: number): StatusView {
  const s: UpStatus = { nodesReady: 0, nodesWanted, restarts: 0 };
  const tty = !!out.isTTY;
  let live = tty;
  const say = (line: string) => out.write(`kcm up: ${line}\n`);
  return {
    current: () => s,
    update(change) {
      const before = { ...s };
      Object.assign(s, change);
      if (live) {
        out.write(`\r\x1b[2K${renderStatusLine(s)}`);
        return;
      }
      if (tty) return;
      if (before.apiServerReadyMs === undefined && s.apiServerReadyMs !== undefined) say(`API server ready (${s.apiServerReadyMs} ms)`);
      if (before.cachesSyncedMs === undefined && s.cachesSyncedMs !== undefined) {
        say(`controller-manager caches synced (${s.cachesSyncedMs} ms)${s.controllers ? `, ${s.controllers.started} controllers running` : ''}`);
      }
      if (before.nodesReady !== s.nodesReady) say(`nodes Ready ${s.nodesReady}/${s.nodesWanted}`);
      if (before.restarts !== s.restarts) say(`controller side restarted (${s.restarts})`);
    },
    finish() {
      if (live) out.write('\n');
      live = false;
    },
  };
}

export interface NodeLike {
  spec?: { taints?: { key?: string }[] };
  status?: { conditions?: { type?: string; status?: string }[] };
}

/** Taints a new node carries until a controller clears them: pods cannot be scheduled there meanwhile. */
const STARTUP_TAINTS = new Set(['node.cloudprovider.kubernetes.io/uninitialized', 'node.kubernetes.io/not-ready']);

const isReady = (n: NodeLike) => !!n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');

/** Ready nodes (what `kcm up: ready` waits for). */
export function countReady(items: NodeLike[]): number {
  return items.filter(isReady).length;
}

/**
 * Ready nodes that take pods: the cloud-node and node-lifecycle controllers have cleared their start-up
 * taints (a few hundred ms after Ready on an idle machine; minutes for 100 nodes under load). What a
 * benchmark waits for before it creates pods.
 */
export function countSchedulable(items: NodeLike[]): number {
  return items.filter((n) => isReady(n) && !n.spec?.taints?.some((t) => STARTUP_TAINTS.has(t.key ?? ''))).length;
}
