/**
 * LimitRanger: LimitRanges in the pod's namespace default container requests
 * and limits on create (`default`, `defaultRequest`, noted in the
 * `kubernetes.io/limit-ranger` annotation), and enforce min, max and
 * maxLimitRequestRatio per Container and per Pod, and min/max storage per
 * PersistentVolumeClaim, with upstream's messages (403 `pods "x" is
 * forbidden: minimum cpu usage per Container is 100m, but request is 50m`).
 * Several violations are listed as `[a, b]` (an error aggregate).
 */
import type { Container, LimitRange, LimitRangeItem, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import { quantityToString, toQuantity, type Quantity } from '../../api/quantity.js';
import { parseResourceList, podResourceTotals, type ResourceList } from '../../api/quota/index.js';
import { type AdmissionAttributes, type AdmissionPlugin, type ObjectLister, onlyWhen } from './admission.js';
import { forbidden } from '../status.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const limitRangerAnnotation = 'kubernetes.io/limit-ranger';

type RL = Record<string, string>;

/** SetDefaults_LimitRangeItem: Container items default `default` from max, `defaultRequest` from default then min. Returns a copy. */
export function defaultLimitRangeItem(item: LimitRangeItem): LimitRangeItem {
  const out = deepCopy(item);
  if (out.type !== 'Container') return out;
  const def: RL = { ...((out.default as RL | undefined) ?? {}) };
  const defReq: RL = { ...((out.defaultRequest as RL | undefined) ?? {}) };
  for (const [k, v] of Object.entries((out.max as RL | undefined) ?? {})) if (!(k in def)) def[k] = v;
  for (const [k, v] of Object.entries(def)) if (!(k in defReq)) defReq[k] = v;
  for (const [k, v] of Object.entries((out.min as RL | undefined) ?? {})) if (!(k in defReq)) defReq[k] = v;
  out.default = def;
  out.defaultRequest = defReq;
  return out;
}

function items(lr: LimitRange): LimitRangeItem[] {
  return (lr.spec?.limits ?? []).map(defaultLimitRangeItem);
}

/** Applies one LimitRange's Container defaults to every container; returns the annotation parts. */
function mergeDefaults(pod: Pod, lr: LimitRange): string[] {
  const reqs: RL = {};
  const lims: RL = {};
  for (const it of items(lr)) {
    if (it.type !== 'Container') continue;
    Object.assign(reqs, it.defaultRequest ?? {});
    Object.assign(lims, it.default ?? {});
  }
  const notes: string[] = [];
  const merge = (c: Container, prefix: string) => {
    const resources = (c.resources ??= {});
    const cl: RL = { ...((resources.limits as RL | undefined) ?? {}) };
    const cr: RL = { ...((resources.requests as RL | undefined) ?? {}) };
    const setL: string[] = [];
    const setR: string[] = [];
    for (const [k, v] of Object.entries(lims)) if (!(k in cl)) (cl[k] = v), setL.push(k);
    for (const [k, v] of Object.entries(reqs)) if (!(k in cr)) (cr[k] = v), setR.push(k);
    if (setL.length || Object.keys(cl).length) resources.limits = cl;
    if (setR.length || Object.keys(cr).length) resources.requests = cr;
    if (setR.length) notes.push(`${setR.sort().join(', ')} request for ${prefix} ${c.name}`);
    if (setL.length) notes.push(`${setL.sort().join(', ')} limit for ${prefix} ${c.name}`);
  };
  for (const c of pod.spec?.containers ?? []) merge(c, 'container');
  for (const c of pod.spec?.initContainers ?? []) merge(c, 'init container');
  return notes;
}

const str = (q: Quantity | string) => quantityToString(toQuantity(q));
const sign = (q: Quantity) => (q.nanos > 0n ? 1 : q.nanos < 0n ? -1 : 0);

function minConstraint(type: string, name: string, enforced: string, req: ResourceList, lim: ResourceList): string | undefined {
  const e = toQuantity(enforced);
  const r = req.get(name);
  const l = lim.get(name);
  if (!r) return `minimum ${name} usage per ${type} is ${str(e)}.  No request is specified`;
  if (e.nanos > r.nanos) return `minimum ${name} usage per ${type} is ${str(e)}, but request is ${str(r)}`;
  if (l && e.nanos > l.nanos) return `minimum ${name} usage per ${type} is ${str(e)}, but limit is ${str(l)}`;
  return undefined;
}

function maxConstraint(type: string, name: string, enforced: string, req: ResourceList, lim: ResourceList): string | undefined {
  const e = toQuantity(enforced);
  const r = req.get(name);
  const l = lim.get(name);
  if (!l) return `maximum ${name} usage per ${type} is ${str(e)}.  No limit is specified`;
  if (l.nanos > e.nanos) return `maximum ${name} usage per ${type} is ${str(e)}, but limit is ${str(l)}`;
  if (r && r.nanos > e.nanos) return `maximum ${name} usage per ${type} is ${str(e)}, but request is ${str(r)}`;
  return undefined;
}

function maxRequestConstraint(type: string, name: string, enforced: string, req: ResourceList): string | undefined {
  const e = toQuantity(enforced);
  const r = req.get(name);
  if (!r) return `maximum ${name} usage per ${type} is ${str(e)}.  No request is specified`;
  if (r.nanos > e.nanos) return `maximum ${name} usage per ${type} is ${str(e)}, but request is ${str(r)}`;
  return undefined;
}

/** limit / request to six decimals, rounding half up. */
function ratioString(l: Quantity, r: Quantity): string {
  const ln = l.nanos < 0n ? -l.nanos : l.nanos;
  const rn = r.nanos < 0n ? -r.nanos : r.nanos;
  const micro = (2n * ln * 1_000_000n + rn) / (2n * rn);
  const whole = micro / 1_000_000n;
  return `${whole}.${(micro % 1_000_000n).toString().padStart(6, '0')}`;
}

function ratioConstraint(type: string, name: string, enforced: string, req: ResourceList, lim: ResourceList): string | undefined {
  const e = toQuantity(enforced);
  const r = req.get(name);
  const l = lim.get(name);
  if (!r || sign(r) === 0) return `${name} max limit to request ratio per ${type} is ${str(e)}, but no request is specified or request is 0`;
  if (!l || sign(l) === 0) return `${name} max limit to request ratio per ${type} is ${str(e)}, but no limit is specified or limit is 0`;
  const abs = (x: bigint) => (x < 0n ? -x : x);
  // limit > request * ratio, in nano units on both sides.
  if (abs(l.nanos) * 1_000_000_000n > abs(r.nanos) * e.nanos) {
    return `${name} max limit to request ratio per ${type} is ${str(e)}, but provided ratio is ${ratioString(l, r)}`;
  }
  return undefined;
}

const sorted = (rl: unknown) => Object.entries((rl as RL | undefined) ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

function checkAll(it: LimitRangeItem, req: ResourceList, lim: ResourceList, errs: string[]): void {
  const type = it.type;
  for (const [k, v] of sorted(it.min)) push(errs, minConstraint(type, k, v, req, lim));
  for (const [k, v] of sorted(it.max)) push(errs, maxConstraint(type, k, v, req, lim));
  for (const [k, v] of sorted(it.maxLimitRequestRatio)) push(errs, ratioConstraint(type, k, v, req, lim));
}

function push(errs: string[], e: string | undefined): void {
  if (e !== undefined) errs.push(e);
}

function podErrors(lr: LimitRange, pod: Pod): string[] {
  const errs: string[] = [];
  for (const it of items(lr)) {
    if (it.type === 'Container') {
      for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
        checkAll(it, parseResourceList(c.resources?.requests as RL | undefined), parseResourceList(c.resources?.limits as RL | undefined), errs);
      }
    } else if (it.type === 'Pod') {
      checkAll(it, podResourceTotals(pod, 'requests'), podResourceTotals(pod, 'limits'), errs);
    }
  }
  return errs;
}

function pvcErrors(lr: LimitRange, pvc: PersistentVolumeClaim): string[] {
  const errs: string[] = [];
  const req = parseResourceList(pvc.spec?.resources?.requests as RL | undefined);
  for (const it of items(lr)) {
    if (it.type !== 'PersistentVolumeClaim') continue;
    for (const [k, v] of sorted(it.min)) push(errs, minConstraint(it.type, k, v, req, new Map()));
    for (const [k, v] of sorted(it.max)) push(errs, maxRequestConstraint(it.type, k, v, req));
  }
  return errs;
}

/** utilerrors.Aggregate's message: one error as is, several deduplicated inside brackets. */
export function aggregateMessage(errs: readonly string[]): string {
  const uniq = [...new Set(errs)];
  return uniq.length === 1 ? uniq[0]! : `[${uniq.join(', ')}]`;
}

function isPod(a: AdmissionAttributes): boolean {
  return a.resource.group === '' && a.resource.resource === 'pods';
}

function isPvc(a: AdmissionAttributes): boolean {
  return a.resource.group === '' && a.resource.resource === 'persistentvolumeclaims';
}

/** SupportsAttributes: pod creates, PVC creates and updates; no subresources; objects being deleted are left alone. */
function supports(a: AdmissionAttributes): boolean {
  if (a.subresource !== '' || !a.object || !a.namespace) return false;
  if (a.oldObject?.metadata?.deletionTimestamp) return false;
  if (isPod(a)) return a.operation === 'CREATE';
  return isPvc(a) && (a.operation === 'CREATE' || a.operation === 'UPDATE');
}

export function newLimitRanger(lister: ObjectLister): AdmissionPlugin {
  const ranges = async (ns: string) => ((await lister.list('', 'limitranges', ns)) ?? []) as LimitRange[];
  return {
    name: 'LimitRanger',
    admit: onlyWhen((a) => supports(a) && isPod(a), async (a) => {
      const pod = a.object as Pod;
      const notes: string[] = [];
      for (const lr of await ranges(a.namespace)) notes.push(...mergeDefaults(pod, lr));
      if (notes.length) {
        const m = (pod.metadata ??= {});
        m.annotations = { ...(m.annotations ?? {}), [limitRangerAnnotation]: `LimitRanger plugin set: ${notes.join('; ')}` };
      }
    }),
    validate: onlyWhen(supports, async (a) => {
      for (const lr of await ranges(a.namespace)) {
        const errs = isPod(a) ? podErrors(lr, a.object as Pod) : pvcErrors(lr, a.object as PersistentVolumeClaim);
        if (errs.length) throw forbidden(a.resource, a.name, aggregateMessage(errs));
      }
    }),
  };
}
