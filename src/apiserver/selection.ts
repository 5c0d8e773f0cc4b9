/**
 * Label and field selectors of list, watch and deletecollection requests.
 * Field selectors may only name the resource's selectable fields
 * (400 `field label not supported: x` otherwise).
 */
import type { KubeObject } from '../api/types.js';
import { parseSelector } from '../api/labels.js';
import { parseFieldSelector, type FieldSelector } from '../api/fields.js';
import type { Selector } from '../api/labels-selector.js';
import type { ServedResource } from './resources.js';
import { badRequest } from './status.js';

export interface Selection {
  /** True when both selectors select everything. */
  everything: boolean;
  matches(obj: KubeObject): boolean;
}

export function selectionFrom(r: ServedResource, q: URLSearchParams, extraName?: string): Selection {
  let labels: Selector | undefined;
  let fields: FieldSelector | undefined;
  const ls = q.get('labelSelector');
  if (ls) {
    try {
      labels = parseSelector(ls);
    } catch (err) {
      throw Object.assign(badRequest(`unable to parse requirement: ${(err as Error).message}`), { cause: err });
    }
    if (labels.empty()) labels = undefined;
  }
  let fs = q.get('fieldSelector') ?? '';
  if (extraName) fs = fs ? `${fs},metadata.name=${extraName}` : `metadata.name=${extraName}`;
  if (fs) {
    try {
      fields = parseFieldSelector(fs);
    } catch (err) {
      throw Object.assign(badRequest((err as Error).message), { cause: err });
    }
    const supported = new Set(r.strategy.selectableFields);
    for (const req of fields.requirements()) {
      if (!supported.has(req.field)) throw badRequest(`field label not supported: ${req.field}`);
    }
    if (fields.empty()) fields = undefined;
  }
  const l = labels;
  const f = fields;
  return {
    everything: !l && !f,
    matches(obj) {
      if (l && !l.matches(obj.metadata?.labels)) return false;
      if (f && !f.matches(r.strategy.fields(obj))) return false;
      return true;
    },
  };
}
