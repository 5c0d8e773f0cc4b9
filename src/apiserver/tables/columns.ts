/**
 * Building blocks of the built-in printers (pkg/printers/internalversion):
 * column constructors and the formatting helpers upstream shares between
 * kinds (ages, label selectors, container names and images).
 */
import type { KubeObject } from '../../api/types.js';
import { parseTime } from '../../util/clock/clock.js';
import { ageColumn, humanDuration, nameColumn, type TableColumn } from '../table.js';

export type Cell = string | number | boolean;
// Printer cells read loosely typed objects: every field may be missing.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Loose = any;

/** A column; `priority` 1 is shown with `-o wide` only. */
export function col(name: string, type: TableColumn['type'], description: string, cell: (o: Loose, nowMs: number) => Cell, priority = 0, format = ''): TableColumn {
  return { name, type, description, priority, cell: cell as (o: KubeObject, nowMs: number) => Cell, format };
}

export { ageColumn, nameColumn };

/** translateTimestampSince: `<unknown>` for a missing time. */
export function since(ts: string | undefined | null, nowMs: number): string {
  const t = parseTime(ts ?? undefined);
  return t === undefined ? '<unknown>' : humanDuration(nowMs - t);
}

/** labels.FormatLabels: `k=v,k2=v2` (keys sorted), `<none>` when empty. */
export function formatLabels(m: Record<string, string> | undefined | null): string {
  const keys = Object.keys(m ?? {}).sort();
  return keys.length ? keys.map((k) => `${k}=${m![k]}`).join(',') : '<none>';
}

/** metav1.LabelSelectorAsSelector(...).String(): `<none>` for a nil selector, '' for an empty one. */
export function formatSelector(sel: Loose): string {
  if (!sel) return '<none>';
  const parts: string[] = [];
  const ml = (sel.matchLabels ?? {}) as Record<string, string>;
  const reqs: { key: string; text: string }[] = [];
  for (const k of Object.keys(ml)) reqs.push({ key: k, text: `${k}=${ml[k]}` });
  for (const e of (sel.matchExpressions ?? []) as { key: string; operator: string; values?: string[] }[]) {
    const vals = [...(e.values ?? [])].sort().join(',');
    switch (e.operator) {
      case 'In':
        reqs.push({ key: e.key, text: `${e.key} in (${vals})` });
        break;
      case 'NotIn':
        reqs.push({ key: e.key, text: `${e.key} notin (${vals})` });
        break;
      case 'Exists':
        reqs.push({ key: e.key, text: e.key });
        break;
      case 'DoesNotExist':
        reqs.push({ key: e.key, text: `!${e.key}` });
        break;
    }
  }
  reqs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  for (const r of reqs) parts.push(r.text);
  return parts.join(',');
}

/** Container names and images of a pod template, comma separated (layoutContainerCells). */
export function containerNames(podSpec: Loose): string {
  return ((podSpec?.containers ?? []) as { name?: string }[]).map((c) => c.name ?? '').join(',');
}

export function containerImages(podSpec: Loose): string {
  return ((podSpec?.containers ?? []) as { image?: string }[]).map((c) => c.image ?? '').join(',');
}

/** The wide CONTAINERS, IMAGES (and SELECTOR) columns of workload printers. */
export function templateColumns(spec: (o: Loose) => Loose, selector?: (o: Loose) => Loose): ReturnType<typeof col>[] {
  const cols = [
    col('Containers', 'string', 'Names of each container in the template.', (o) => containerNames(spec(o)), 1),
    col('Images', 'string', 'Images referenced by each container in the template.', (o) => containerImages(spec(o)), 1),
  ];
  if (selector) cols.push(col('Selector', 'string', 'Label selector for pods.', (o) => formatSelector(selector(o)), 1));
  return cols;
}

/** `<none>` for empty strings and missing values. */
export function orNone(v: string | undefined | null): string {
  return v ? v : '<none>';
}

export function int(v: unknown): number {
  return typeof v === 'number' ? v : 0;
}
