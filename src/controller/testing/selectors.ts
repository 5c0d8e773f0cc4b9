/**
 * Label and field selector strings as the fake client evaluates them
 * (list and watch `labelSelector` / `fieldSelector` options). Label
 * selectors: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x,y)`, `a`, `!a`,
 * `a>1`, `a<1`. Field selectors: `path=value`, `path==value`, `path!=value`
 * over dotted paths (`metadata.name`, `spec.nodeName`, `status.phase`).
 */
import { StatusError, newStatus } from '../../client/errors.js';
import type { KubeObject } from '../../api/types.js';

export type ObjectPredicate = (obj: KubeObject) => boolean;

function splitTopLevel(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  parts.push(cur);
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}

function invalid(message: string): StatusError {
  return new StatusError(newStatus(400, 'BadRequest', message));
}

type LabelTest = (labels: Record<string, string>) => boolean;

function parseRequirement(req: string): LabelTest {
  let m = /^([^\s!=<>(),]+)\s+(in|notin)\s+\(([^)]*)\)$/.exec(req);
  if (m) {
    const key = m[1]!;
    const values = new Set(m[3]!.split(',').map((v) => v.trim()).filter((v) => v !== ''));
    return m[2] === 'in' ? (l) => key in l && values.has(l[key]!) : (l) => !(key in l) || !values.has(l[key]!);
  }
  m = /^([^\s!=<>(),]+)\s*(==|=|!=|>|<)\s*([^\s!=<>(),]*)$/.exec(req);
  if (m) {
    const [, key, op, value] = m as unknown as [string, string, string, string];
    switch (op) {
      case '=':
      case '==':
        return (l) => l[key] === value;
      case '!=':
        return (l) => l[key] !== value;
      case '>':
        return (l) => key in l && Number(l[key]) > Number(value);
      case '<':
        return (l) => key in l && Number(l[key]) < Number(value);
    }
  }
  m = /^!\s*([^\s!=<>(),]+)$/.exec(req);
  if (m) {
    const key = m[1]!;
    return (l) => !(key in l);
  }
  m = /^([^\s!=<>(),]+)$/.exec(req);
  if (m) {
    const key = m[1]!;
    return (l) => key in l;
  }
  throw invalid(`unable to parse requirement: ${JSON.stringify(req)}`);
}

/** A predicate for a label selector string; everything matches the empty string. */
export function parseLabelSelector(selector: string | undefined): ObjectPredicate {
  if (!selector) return () => true;
  const tests = splitTopLevel(selector).map(parseRequirement);
  return (obj) => {
    const labels = obj.metadata?.labels ?? {};
    return tests.every((t) => t(labels));
  };
}

function fieldValue(obj: KubeObject, path: string): string {
  let cur: unknown = obj;
  for (const part of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[part];
  }
  if (cur === undefined || cur === null) return '';
  return String(cur);
}

/** A predicate for a field selector string; everything matches the empty string. */
export function parseFieldSelector(selector: string | undefined): ObjectPredicate {
  if (!selector) return () => true;
  const tests = splitTopLevel(selector).map((req): ObjectPredicate => {
    const m = /^([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*)$/.exec(req);
    if (!m) throw invalid(`invalid field selector: ${JSON.stringify(req)}`);
    const [, path, op, value] = m as unknown as [string, string, string, string];
    return op === '!=' ? (o) => fieldValue(o, path) !== value : (o) => fieldValue(o, path) === value;
  });
  return (obj) => tests.every((t) => t(obj));
}
