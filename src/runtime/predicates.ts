/**
 * Event filters (controller-runtime's predicates): a predicate sees each
 * change a watch delivers and says whether it should enqueue a reconcile.
 *
 *   controller(mgr).for(Widget, { predicates: [generationChanged()] })   // ignore status-only writes
 *   .withEventFilter(or(labelsChanged(), annotationsChanged()))         // every watch of the controller
 */
import type { RuntimeObject } from './kinds.js';

/** One change seen by a watch. `stateUnknown`: the deletion was inferred from a relist and `object` may be stale. */
export type ObjectEvent<T extends RuntimeObject = RuntimeObject> =
  | { type: 'create'; object: T }
  | { type: 'update'; oldObject: T; object: T }
  | { type: 'delete'; object: T; stateUnknown: boolean };

/** True lets the event through. */
export type Predicate<T extends RuntimeObject = RuntimeObject> = (event: ObjectEvent<T>) => boolean;

/** Lets through every create and delete, and updates whose metadata.generation changed (spec changes, not status). */
export function generationChanged<T extends RuntimeObject = RuntimeObject>(): Predicate<T> {
  return (e) => e.type !== 'update' || e.oldObject.metadata?.generation !== e.object.metadata?.generation;
}

/** Lets through every create and delete, and updates whose labels changed. */
export function labelsChanged<T extends RuntimeObject = RuntimeObject>(): Predicate<T> {
  return (e) => e.type !== 'update' || !sameStringMap(e.oldObject.metadata?.labels, e.object.metadata?.labels);
}

/** Lets through every create and delete, and updates whose annotations changed. */
export function annotationsChanged<T extends RuntimeObject = RuntimeObject>(): Predicate<T> {
  return (e) => e.type !== 'update' || !sameStringMap(e.oldObject.metadata?.annotations, e.object.metadata?.annotations);
}

/** Lets through every create and delete, and updates whose resourceVersion changed: drops periodic resyncs. */
export function resourceVersionChanged<T extends RuntimeObject = RuntimeObject>(): Predicate<T> {
  return (e) => e.type !== 'update' || e.oldObject.metadata?.resourceVersion !== e.object.metadata?.resourceVersion;
}

/** A predicate from a test on the object (the new object of an update): controller-runtime's NewPredicateFuncs. */
export function objectMatches<T extends RuntimeObject = RuntimeObject>(test: (obj: T) => boolean): Predicate<T> {
  return (e) => test(e.object);
}

/** Lets an event through when every predicate does (true when empty). */
export function and<T extends RuntimeObject = RuntimeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  return (e) => predicates.every((p) => p(e));
}

/** Lets an event through when any predicate does (false when empty). */
export function or<T extends RuntimeObject = RuntimeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  return (e) => predicates.some((p) => p(e));
}

export function not<T extends RuntimeObject = RuntimeObject>(predicate: Predicate<T>): Predicate<T> {
  return (e) => !predicate(e);
}

function sameStringMap(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  const kb = Object.keys(b ?? {});
  if (ka.length !== kb.length) return false;
  return ka.every((k) => b !== undefined && Object.prototype.hasOwnProperty.call(b, k) && b[k] === a![k]);
}
