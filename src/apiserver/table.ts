/**
 * Server-side printing: `meta.k8s.io/v1` Tables for kubectl. Columns are
 * pluggable per resource (`registerTableColumns`); every resource has at
 * least Name and Age, like the default table convertor plus kubectl's age.
 */
import type { KubeObject } from '../api/types.js';
import { parseTime } from '../util/clock/clock.js';
import type { RequestScope } from './context.js';
import { negotiateResponse } from './output.js';
import { deepCopy } from '../util/json/deep-copy.js';

export interface TableColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  /** 0: always shown; 1: shown with -o wide. */
  priority: number;
  cell(obj: KubeObject, nowMs: number): string | number | boolean;
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

const registry = new Map<string, TableColumn[]>();

export const nameColumn: TableColumn = {
  name: 'Name',
  type: 'string',
  format: 'name',
  description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names',
  priority: 0,
  cell: (o) => o.metadata?.name ?? '',
};

export const ageColumn: TableColumn = {
  name: 'Age',
  type: 'string',
  description: 'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata',
  priority: 0,
  cell: (o, now) => {
    const t = parseTime(o.metadata?.creationTimestamp);
    return t === undefined ? '<unknown>' : humanDuration(now - t);
  },
};

const exactColumns = new Set<string>();

/**
 * Sets the columns of `group/resource` (Name first and Age last are added
 * when missing; with `exact`, Age is not added: custom resources with
 * additionalPrinterColumns).
 */
export function registerTableColumns(group: string, resource: string, columns: TableColumn[], opts: { exact?: boolean } = {}): void {
  registry.set(`${group}/${resource}`, columns);
  if (opts.exact) exactColumns.add(`${group}/${resource}`);
  else exactColumns.delete(`${group}/${resource}`);
}

/** Forgets the columns of `group/resource` (a deleted custom resource). */
export function unregisterTableColumns(group: string, resource: string): void {
  registry.delete(`${group}/${resource}`);
  exactColumns.delete(`${group}/${resource}`);
}

export function tableColumns(group: string, resource: string): TableColumn[] {
  const cols = registry.get(`${group}/${resource}`) ?? [];
  const out = cols.some((c) => c.name === 'Name') ? [...cols] : [nameColumn, ...cols];
  if (!exactColumns.has(`${group}/${resource}`) && !out.some((c) => c.name === 'Age')) out.push(ageColumn);
  return out;
}

/** apimachinery duration.HumanDuration: 45s, 5m10s, 3h, 2d5h, 400d, 3y120d. */
export function humanDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < -1) return '<invalid>';
  if (s < 0) return '0s';
  if (s < 60 * 2) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) {
    const rs = s % 60;
    return rs === 0 ? `${m}m` : `${m}m${rs}s`;
  }
  if (m < 60 * 3) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 8) {
    const rm = m % 60;
    return rm === 0 ? `${h}h` : `${h}h${rm}m`;
  }
  if (h < 48) return `${h}h`;
  if (h < 24 * 8) {
    const rh = h % 24;
    return rh === 0 ? `${Math.floor(h / 24)}d` : `${Math.floor(h / 24)}d${rh}h`;
  }
  if (h < 24 * 365 * 2) return `${Math.floor(h / 24)}d`;
  if (h < 24 * 365 * 8) {
    const dy = Math.floor(h / 24) % 365;
    return dy === 0 ? `${Math.floor(h / 24 / 365)}y` : `${Math.floor(h / 24 / 365)}y${dy}d`;
  }
  return `${Math.floor(h / 24 / 365)}y`;
}

export function partialObjectMetadata(obj: KubeObject): KubeObject {
  return { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: deepCopy(obj.metadata ?? {}) };
}

/** A Table of `objects`; `listMeta` carries resourceVersion/continue/remainingItemCount. */
export function toTable(group: string, resource: string, objects: KubeObject[], include: IncludeObject, nowMs: number, listMeta: Record<string, unknown> = {}): KubeObject {
  const cols = tableColumns(group, resource);
  return {
    kind: 'Table',
    apiVersion: 'meta.k8s.io/v1',
    metadata: listMeta,
    columnDefinitions: cols.map((c) => {
      const d: Record<string, unknown> = { name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority };
      return d;
    }),
    rows: objects.map((o) => {
      const row: Record<string, unknown> = { cells: cols.map((c) => c.cell(o, nowMs)) };
      if (include === 'Metadata') row.object = partialObjectMetadata(o);
      else if (include === 'Object') row.object = o;
      return row;
    }),
  };
}

/**
 * Output negotiation for the endpoints kube-apiserver serves without a table
 * convertor (the create-only reviews, bindings, evictions, token requests,
 * pod logs): a Table is not acceptable, so a request that accepts only
 * Tables gets 406 NotAcceptable `only the following media types are
 * accepted: application/json, application/yaml,
 * application/vnd.kubernetes.protobuf`. Call before reading the body, as
 * upstream negotiates first (kube-apiserver's RequestScope.AllowsMediaTypeTransform
 * refuses `as=Table` there, so those clauses drop out and the next acceptable
 * one wins); later writes of the request reuse this choice.
 */
export function negotiateWithoutTable(s: RequestScope): void {
  negotiateResponse(s, false, true);
}
