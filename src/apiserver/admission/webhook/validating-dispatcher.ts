/**
 * ValidatingAdmissionWebhook (apiserver admission/plugin/webhook/validating):
 * every matching webhook is called at once; the request fails with the
 * first error (in webhook order) of those that refused it or could not be
 * called under failurePolicy Fail.
 */
import type { AdmissionAttributes } from '../admission.js';
import { CallingWebhookError } from './errors.js';
import { callWebhook, invocationFor, matchConditionsAllow, requestView, versionedObjects, type DispatchDeps, type Invocation, type VersionedObjects } from './dispatch.js';
import type { WebhookAccessor } from './webhook-source.js';

export const validatingPluginName = 'ValidatingAdmissionWebhook';

export async function dispatchValidating(deps: DispatchDeps, hooks: readonly WebhookAccessor[], a: AdmissionAttributes): Promise<void> {
  if (hooks.length === 0) return;
  const v = requestView(a);
  const relevant: { inv: Invocation; objs: VersionedObjects }[] = [];
  // Converted objects are shared by the webhooks of one version.
  const byVersion = new Map<string, Promise<VersionedObjects>>();
  for (const w of hooks) {
    const inv = await invocationFor(deps, w, v);
    if (!inv) continue;
    const key = `${inv.kind.group}/${inv.kind.version}/${inv.kind.kind}`;
    let objs = byVersion.get(key);
    if (!objs) byVersion.set(key, (objs = versionedObjects(v, inv)));
    const o = await objs;
    if (!(await matchConditionsAllow(v, inv, o))) continue;
    relevant.push({ inv, objs: o });
  }
  if (relevant.length === 0) return;
  const errors = await Promise.all(
    relevant.map(async ({ inv, objs }): Promise<Error | undefined> => {
      const w = inv.webhook;
      try {
        await callWebhook(deps, v, inv, objs, false);
        return undefined;
      } catch (err) {
        if (err instanceof CallingWebhookError) {
          if (w.hook.failurePolicy === 'Ignore') {
            deps.logger.warn({ webhook: w.name, err: err.message }, 'Failed calling webhook, failing open');
            return undefined;
          }
          deps.logger.warn({ webhook: w.name, err: err.message }, 'Failed calling webhook, failing closed');
          return err.toStatusError();
        }
        deps.logger.v(2).info({ webhook: w.name, err: (err as Error).message }, 'rejected by webhook');
        return err as Error;
      }
    }),
  );
  const first = errors.find((e) => e !== undefined);
  if (first) throw first;
}
