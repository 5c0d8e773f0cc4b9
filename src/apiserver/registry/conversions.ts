/**
 * Built-in kinds served in a version other than the one they are stored in,
 * converted as kube-apiserver converts them (through its internal version):
 *
 * - events.k8s.io/v1 Events are core v1 Events in storage
 *   (pkg/apis/events/v1/conversion.go): one object, visible through both
 *   APIs, so `kubectl describe` shows the events that client-go's
 *   events.k8s.io recorder (kube-scheduler's) writes, and the other way round.
 * - autoscaling/v1 HorizontalPodAutoscalers are autoscaling/v2 in storage
 *   (pkg/apis/autoscaling/v1/conversion.go, in hpa-conversion.ts).
 *
 * A conversion rewrites an object in place between the served shape and the
 * stored one; each direction converts only an object in its source version,
 * so calling it on an object already converted changes nothing.
 */
import type { KubeObject } from '../../api/types.js';
import { normalizeAsGo } from '../go-json.js';
import { hpaV1ToV2, hpaV2ToV1 } from './hpa-conversion.js';

export interface Conversion {
  /** Where objects of this resource are stored, when not under their own group/resource. */
  storedAs?: { group: string; resource: string };
  /** Served shape -> stored shape, in place. */
  encode(obj: KubeObject): void;
  /** Stored shape -> served shape, in place. */
  decode(obj: KubeObject): void;
}

type Obj = Record<string, unknown>;

/** Replaces every property of `obj` by those of `next`, keeping `obj`'s identity. */
function replace(obj: KubeObject, next: Obj): void {
  for (const k of Object.keys(obj)) delete (obj as Obj)[k];
  Object.assign(obj, next);
}

/** Moves `from[a]` to `to[b]` when present. */
function move(from: Obj, a: string, to: Obj, b: string): void {
  if (from[a] !== undefined) to[b] = from[a];
}

/** events.k8s.io/v1 Event -> core v1 Event (Convert_v1_Event_To_core_Event). */
export function eventV1ToCore(e: Obj): Obj {
  const out: Obj = { apiVersion: 'v1', kind: 'Event' };
  move(e, 'metadata', out, 'metadata');
  move(e, 'regarding', out, 'involvedObject');
  move(e, 'reason', out, 'reason');
  move(e, 'note', out, 'message');
  move(e, 'deprecatedSource', out, 'source');
  move(e, 'deprecatedFirstTimestamp', out, 'firstTimestamp');
  move(e, 'deprecatedLastTimestamp', out, 'lastTimestamp');
  move(e, 'deprecatedCount', out, 'count');
  move(e, 'type', out, 'type');
  move(e, 'eventTime', out, 'eventTime');
  move(e, 'series', out, 'series');
  move(e, 'action', out, 'action');
  move(e, 'related', out, 'related');
  move(e, 'reportingController', out, 'reportingComponent');
  move(e, 'reportingInstance', out, 'reportingInstance');
  return out;
}

/** core v1 Event -> events.k8s.io/v1 Event (Convert_core_Event_To_v1_Event). */
export function coreEventToV1(e: Obj): Obj {
  const out: Obj = { apiVersion: 'events.k8s.io/v1', kind: 'Event' };
  move(e, 'metadata', out, 'metadata');
  move(e, 'eventTime', out, 'eventTime');
  move(e, 'series', out, 'series');
  move(e, 'reportingComponent', out, 'reportingController');
  move(e, 'reportingInstance', out, 'reportingInstance');
  move(e, 'action', out, 'action');
  move(e, 'reason', out, 'reason');
  move(e, 'involvedObject', out, 'regarding');
  move(e, 'related', out, 'related');
  move(e, 'message', out, 'note');
  move(e, 'type', out, 'type');
  move(e, 'source', out, 'deprecatedSource');
  move(e, 'firstTimestamp', out, 'deprecatedFirstTimestamp');
  move(e, 'lastTimestamp', out, 'deprecatedLastTimestamp');
  move(e, 'count', out, 'deprecatedCount');
  return out;
}

/** Converts with `fn` when `obj` is in `from`, then writes the result as Go's JSON round trip would. */
function converting(from: string, fn: (o: Obj) => Obj): (obj: KubeObject) => void {
  return (obj) => {
    if (obj.apiVersion !== from) return;
    const next = fn(obj as Obj) as KubeObject;
    normalizeAsGo(next);
    replace(obj, next as Obj);
  };
}

const conversions: Record<string, Conversion> = {
  'events.k8s.io/v1/events': {
    storedAs: { group: '', resource: 'events' },
    encode: converting('events.k8s.io/v1', eventV1ToCore),
    decode: converting('v1', coreEventToV1),
  },
  'autoscaling/v1/horizontalpodautoscalers': {
    encode: converting('autoscaling/v1', hpaV1ToV2),
    decode: converting('autoscaling/v2', hpaV2ToV1),
  },
};

/** The conversion of a built-in group/version/resource served in a shape other than its storage's, if any. */
export function conversionFor(group: string, version: string, resource: string): Conversion | undefined {
  return conversions[`${group}/${version}/${resource}`];
}
