/**
 * MutatingAdmissionWebhook (apiserver admission/plugin/webhook/mutating):
 * the webhooks are called one after another in order; a JSONPatch answer
 * is applied to the object (at the webhook's version, then converted back),
 * defaulted and, for built-in kinds, decoded as its Go type would be
 * (unknown fields dropped, wrong types refused). `reinvocationPolicy:
 * IfNeeded` webhooks are called once more when a later webhook (or a
 * reinvoked built-in plugin) changed the object.
 */
import type { KubeObject } from '../../../api/types.js';
import { canonicalJson } from '../../store.js';
import type { SwaggerDocument } from '../../openapi/openapi-data.js';
import { rootSchemaOf, unknownFields } from '../../handlers/field-validation.js';
import { checkTypes } from '../../handlers/type-check.js';
import { decodeJsonPatch, applyJsonPatch } from '../../patch/json-patch.js';
import { internalError, StatusError } from '../../status.js';
import type { AdmissionAttributes } from '../admission.js';
import { CallingWebhookError } from './errors.js';
import { callWebhook, invocationFor, matchConditionsAllow, requestView, versionedObjects, versionedTypeMeta, type DispatchDeps, type Invocation } from './dispatch.js';
import type { WebhookAccessor } from './webhook-source.js';
import { convertObject, replaceInPlace } from './versions.js';

export const mutatingPluginName = 'MutatingAdmissionWebhook';

/** webhookReinvokeContext: which webhooks run again in the reinvocation round. */
interface ReinvokeState {
  lastOutput?: string;
  previouslyInvoked: Set<string>;
  reinvoke: Set<string>;
}

function requireReinvoking(st: ReinvokeState): void {
  for (const uid of st.previouslyInvoked) st.reinvoke.add(uid);
  st.previouslyInvoked = new Set();
}

export interface MutatingDeps extends DispatchDeps {
  swagger(): SwaggerDocument;
}

/** Runs the mutating webhooks on `a` (a.object is changed in place). */
export async function dispatchMutating(deps: MutatingDeps, hooks: readonly WebhookAccessor[], a: AdmissionAttributes): Promise<void> {
  if (hooks.length === 0) return;
  const ctx = a.reinvocation ?? { isReinvoke: false, shouldReinvoke: false, values: new Map<string, unknown>() };
  let st = ctx.values.get(mutatingPluginName) as ReinvokeState | undefined;
  if (!st) {
    st = { previouslyInvoked: new Set(), reinvoke: new Set() };
    ctx.values.set(mutatingPluginName, st);
  }
  const output = () => (a.object ? canonicalJson(a.object) : '');
  // Built-in plugins changed the object since the webhooks last ran: every reinvocable webhook runs again.
  if (ctx.isReinvoke && st.lastOutput !== output()) requireReinvoking(st);
  try {
    const v = requestView(a);
    for (const w of hooks) {
      const inv = await invocationFor(deps, w, v);
      if (!inv) continue;
      if (ctx.isReinvoke && !st.reinvoke.has(w.uid)) continue;
      const objs = await versionedObjects(v, inv);
      if (!(await matchConditionsAllow(v, inv, objs))) continue;
      let changed = false;
      try {
        const result = await callWebhook(deps, v, inv, objs, true);
        if (result.patch && result.patch.length > 0) changed = await applyWebhookPatch(deps, a, inv, objs.object, result.patch, result.patchType);
      } catch (err) {
        if (w.hook.reinvocationPolicy === 'IfNeeded') st.previouslyInvoked.add(w.uid);
        if (err instanceof CallingWebhookError) {
          if (w.hook.failurePolicy === 'Ignore') {
            deps.logger.warn({ webhook: w.name, err: err.message }, 'Failed calling webhook, failing open');
            continue;
          }
          deps.logger.warn({ webhook: w.name, err: err.message }, 'Failed calling webhook, failing closed');
          throw err.toStatusError();
        }
        throw err;
      }
      if (changed) {
        requireReinvoking(st);
        ctx.shouldReinvoke = true;
      }
      if (w.hook.reinvocationPolicy === 'IfNeeded') st.previouslyInvoked.add(w.uid);
    }
  } finally {
    st.lastOutput = output();
  }
}

/** Go's "did the patch change it" after decoding: changed is compared on the decoded object. */
async function applyWebhookPatch(deps: MutatingDeps, a: AdmissionAttributes, inv: Invocation, versioned: KubeObject | undefined, patch: Buffer, patchType: string | undefined): Promise<boolean> {
  const name = inv.webhook.name;
  if (patchType !== 'JSONPatch') throw new CallingWebhookError(name, `unsupported patch type ${JSON.stringify(patchType ?? '')}`);
  let ops;
  try {
    ops = decodeJsonPatch(JSON.parse(patch.toString('utf8')));
  } catch (err) {
    throw new CallingWebhookError(name, `received undecodable patch in webhook response: ${(err as Error).message}`);
  }
  if (ops.length === 0) return false;
  if (!versioned) throw internalError(new Error(`admission webhook ${JSON.stringify(name)} attempted to modify the object, which is not supported for this operation`));
  let patched: KubeObject;
  try {
    patched = applyJsonPatch(versioned, ops) as KubeObject;
  } catch (err) {
    throw internalError(err);
  }
  if (!patched || typeof patched !== 'object' || Array.isArray(patched)) throw internalError(new Error('json: cannot unmarshal into Go value of an object'));
  // Decoded into the webhook version's type: apiVersion/kind stay, built-in kinds drop unknown fields.
  Object.assign(patched, versionedTypeMeta(inv));
  if (!inv.resource.customResource) {
    const doc = deps.swagger();
    const root = rootSchemaOf(doc, inv.kind);
    if (root) {
      try {
        checkTypes(doc, root, inv.kind, patched);
      } catch (err) {
        throw internalError(err instanceof StatusError ? new Error(err.status.message ?? err.message) : err);
      }
      unknownFields(doc, root, patched, true);
    }
  }
  const changed = canonicalJson(patched) !== canonicalJson(versioned);
  if (a.subresource === 'scale' && a.resource.strategy.scale) {
    const replicas = (patched as { spec?: { replicas?: number } }).spec?.replicas ?? 0;
    a.resource.strategy.scale.set(a.object!, replicas);
    return changed;
  }
  inv.resource.strategy.defaults(patched);
  const back = inv.resource === a.resource ? patched : await convertObject(inv.resource, a.resource, patched);
  replaceInPlace(a.object!, back);
  return changed;
}
