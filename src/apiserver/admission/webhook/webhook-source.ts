/**
 * The webhooks the admission plugins call: every Mutating- and
 * ValidatingWebhookConfiguration, kept current from a storage watch (the
 * informer of upstream's configuration manager; storage delivers events
 * synchronously with the write, so a configuration is in effect once its
 * create has answered). Webhooks come sorted as upstream sorts them: by
 * configuration name, then in their order within the configuration.
 */
import type { MutatingWebhook, ValidatingWebhook } from 'kubernetes-types/admissionregistration/v1.js';
import type { KubeObject } from '../../../api/types.js';
import { selectorFromLabelSelector, type LabelSelectorValue } from '../../../api/labels.js';
import type { Storage, WatchHandle } from '../../storage/storage.js';
import type { Logger } from '../../../util/log/logger.js';
import { storagePrefix } from '../../store.js';
import { compileMatchConditions, type CompiledMatchConditions } from './match-conditions.js';

/** One webhook of a configuration, with what is derived from it once. */
export interface WebhookAccessor {
  /** `<configuration>/<webhook>/<index>`, unique across configurations (upstream's accessor UID). */
  readonly uid: string;
  readonly configurationName: string;
  readonly name: string;
  readonly mutating: boolean;
  /** The stored (defaulted) webhook. Shared: do not mutate. */
  readonly hook: MutatingWebhook & ValidatingWebhook;
  /** The parsed selectors, or the error parsing them (an invalid stored selector fails requests it could match). */
  namespaceSelector(): LabelSelectorValue | Error;
  objectSelector(): LabelSelectorValue | Error;
  /** Compiled matchConditions (only called when there are some). */
  matchConditions(): CompiledMatchConditions;
}

export interface WebhookSource {
  mutating(): readonly WebhookAccessor[];
  validating(): readonly WebhookAccessor[];
  stop(): void;
}

function lazy<T>(fn: () => T): () => T {
  let done = false;
  let v: T;
  return () => {
    if (!done) {
      v = fn();
      done = true;
    }
    return v;
  };
}

function parseSelector(sel: unknown): LabelSelectorValue | Error {
  try {
    return selectorFromLabelSelector((sel ?? {}) as never);
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** The accessors of one configuration object. */
export function accessorsOf(config: KubeObject, mutating: boolean): WebhookAccessor[] {
  const name = config.metadata?.name ?? '';
  const hooks = ((config as { webhooks?: unknown }).webhooks ?? []) as (MutatingWebhook & ValidatingWebhook)[];
  return hooks.map((hook, i) => ({
    uid: `${name}/${hook.name}/${i}`,
    configurationName: name,
    name: hook.name,
    mutating,
    hook,
    namespaceSelector: lazy(() => parseSelector(hook.namespaceSelector)),
    objectSelector: lazy(() => parseSelector(hook.objectSelector)),
    matchConditions: lazy(() => compileMatchConditions(hook.matchConditions ?? [])),
  }));
}

const group = 'admissionregistration.k8s.io';

/** Lists and watches both configuration kinds in `storage`. */
export async function startWebhookSource(storage: Storage, logger: Logger): Promise<WebhookSource> {
  const kinds = [
    { resource: 'mutatingwebhookconfigurations', mutating: true },
    { resource: 'validatingwebhookconfigurations', mutating: false },
  ];
  const configs = [new Map<string, KubeObject>(), new Map<string, KubeObject>()];
  const sorted: (WebhookAccessor[] | undefined)[] = [undefined, undefined];
  const watches: WatchHandle[] = [];
  for (const [i, k] of kinds.entries()) {
    const prefix = storagePrefix({ group, resource: k.resource }, '');
    const list = await storage.list(prefix);
    for (const it of list.items) configs[i]!.set(it.key, it.object);
    watches.push(
      storage.watch(
        prefix,
        list.revision,
        (e) => {
          if (e.type === 'DELETED') configs[i]!.delete(e.key);
          else configs[i]!.set(e.key, e.object);
          sorted[i] = undefined;
        },
        (err) => logger.error(err, { resource: k.resource }, 'webhook configuration watch ended'),
      ),
    );
  }
  const get = (i: number): readonly WebhookAccessor[] => {
    let s = sorted[i];
    if (!s) {
      const objs = [...configs[i]!.values()].sort((a, b) => {
        const x = a.metadata?.name ?? '';
        const y = b.metadata?.name ?? '';
        return x < y ? -1 : x > y ? 1 : 0;
      });
      s = objs.flatMap((o) => accessorsOf(o, kinds[i]!.mutating));
      sorted[i] = s;
    }
    return s;
  };
  return {
    mutating: () => get(0),
    validating: () => get(1),
    stop() {
      for (const w of watches) w.stop();
    },
  };
}
