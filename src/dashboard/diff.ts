/**
 * What a write changed, for the timeline: the paths of the fields that differ
 * between two versions of an object (down to a few levels, so a pod's status
 * shows as `status.conditions` rather than one line per condition field), and
 * a readable line with the old and new values of scalar fields.
 */
import { jsonEqual } from '../util/json/equal.js';

/** Fields every write changes, or that say nothing about what a controller did. */
const IGNORED = new Set(['metadata.resourceVersion', 'metadata.managedFields', 'metadata.generation']);
const MAX_DEPTH = 3;
const MAX_PATHS = 20;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function scalar(v: unknown): string {
  if (v === undefined) return '∅';
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
}

export interface Change {
  path: string;
  before: unknown;
  after: unknown;
}

/** The changed paths from `a` to `b`, at most MAX_PATHS. */
export function changedPaths(a: unknown, b: unknown): Change[] {
  const out: Change[] = [];
  const walk = (x: unknown, y: unknown, path: string, depth: number): void => {
    if (out.length >= MAX_PATHS || IGNORED.has(path)) return;
    if (isObject(x) && isObject(y) && depth < MAX_DEPTH) {
      for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) walk(x[k], y[k], path ? `${path}.${k}` : k, depth + 1);
      return;
    }
    if (!jsonEqual(x, y)) out.push({ path, before: x, after: y });
  };
  walk(a, b, '', 0);
  return out;
}

/** `spec.replicas 1 → 3, status.conditions changed`. */
export function describeChanges(changes: readonly Change[]): string {
  return changes
    .map((c) => {
      const simple = (v: unknown) => v === undefined || v === null || typeof v !== 'object';
      return simple(c.before) && simple(c.after) ? `${c.path} ${scalar(c.before)} → ${scalar(c.after)}` : `${c.path} changed`;
    })
    .join(', ');
}
