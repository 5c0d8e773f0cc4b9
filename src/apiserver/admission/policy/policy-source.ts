/**
 * The ValidatingAdmissionPolicies in effect (apiserver admission/plugin/
 * policy/generic/policy_source.go): every policy that has at least one
 * binding, with its bindings, kept current from a storage watch of both
 * kinds (storage delivers events synchronously with the write, so a policy
 * or binding is in effect once its create has answered; upstream refreshes
 * within a second). A binding whose policy does not exist has no effect.
 *
 * Each policy is compiled once per generation (its spec), on first use,
 * and the compiled form is kept while the policy has bindings. Hooks come
 * sorted by policy name, bindings by name (upstream's order is a map's).
 */
import type { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from 'kubernetes-types/admissionregistration/v1.js';
import type { KubeObject } from '../../../api/types.js';
import type { Storage, WatchHandle } from '../../storage/storage.js';
import type { Logger } from '../../../util/log/logger.js';
import { storagePrefix } from '../../store.js';
import type { CompiledPolicy, PolicyCompiler } from './evaluator.js';
import { parseMatchResources, type ParsedMatchResources } from './matching.js';

/** One policy with its bindings (upstream's PolicyHook, without the param informer). */
export interface PolicyHook {
  /** The stored (defaulted) policy. Shared: do not mutate. */
  readonly policy: ValidatingAdmissionPolicy;
  /** Its bindings, by name. Shared: do not mutate. */
  readonly bindings: readonly ValidatingAdmissionPolicyBinding[];
  /** The policy's matchConstraints, parsed; undefined when it has none (a configuration error). */
  readonly constraints: ParsedMatchResources | undefined;
  /** A binding's matchResources, parsed; undefined when it has none (it matches whatever the policy matches). */
  bindingMatch(binding: ValidatingAdmissionPolicyBinding): ParsedMatchResources | undefined;
  /** The compiled policy (compiled on first call per generation). */
  compiled(): CompiledPolicy;
}

export interface PolicySource {
  hooks(): readonly PolicyHook[];
  stop(): void;
}

const group = 'admissionregistration.k8s.io';

function byName(a: { metadata?: { name?: string } }, b: { metadata?: { name?: string } }): number {
  const x = a.metadata?.name ?? '';
  const y = b.metadata?.name ?? '';
  return x < y ? -1 : x > y ? 1 : 0;
}

interface CompiledEntry {
  uid: string;
  generation: number;
  compiled: CompiledPolicy;
}

export interface PolicySourceOptions {
  storage: Storage;
  logger: Logger;
  compile: PolicyCompiler;
}

/** Lists and watches ValidatingAdmissionPolicies and their bindings in storage. */
export async function startPolicySource(opts: PolicySourceOptions): Promise<PolicySource> {
  const { storage, logger } = opts;
  const policies = new Map<string, ValidatingAdmissionPolicy>();
  const bindings = new Map<string, ValidatingAdmissionPolicyBinding>();
  const compiledCache = new Map<string, CompiledEntry>();
  const parsedBindings = new WeakMap<object, ParsedMatchResources | undefined>();
  let hooks: PolicyHook[] | undefined;
  const watches: WatchHandle[] = [];
  for (const [resource, into] of [
    ['validatingadmissionpolicies', policies],
    ['validatingadmissionpolicybindings', bindings],
  ] as const) {
    const prefix = storagePrefix({ group, resource }, '');
    const list = await storage.list(prefix);
    const m = into as Map<string, KubeObject>;
    for (const it of list.items) m.set(it.object.metadata?.name ?? it.key, it.object);
    watches.push(
      storage.watch(
        prefix,
        list.revision,
        (e) => {
          const name = e.object.metadata?.name ?? e.key;
          if (e.type === 'DELETED') m.delete(name);
          else m.set(name, e.object);
          hooks = undefined;
        },
        (err) => logger.error(err, { resource }, 'admission policy watch ended'),
      ),
    );
  }

  function compiledFor(policy: ValidatingAdmissionPolicy): CompiledPolicy {
    const name = policy.metadata?.name ?? '';
    const uid = policy.metadata?.uid ?? '';
    const generation = policy.metadata?.generation ?? 0;
    const hit = compiledCache.get(name);
    if (hit && hit.uid === uid && hit.generation === generation) return hit.compiled;
    const compiled = opts.compile(policy as never);
    compiledCache.set(name, { uid, generation, compiled });
    return compiled;
  }

  function bindingMatch(b: ValidatingAdmissionPolicyBinding): ParsedMatchResources | undefined {
    if (parsedBindings.has(b)) return parsedBindings.get(b);
    const mr = b.spec?.matchResources;
    const parsed = mr ? parseMatchResources(mr) : undefined;
    parsedBindings.set(b, parsed);
    return parsed;
  }

  function calculate(): PolicyHook[] {
    const byPolicy = new Map<string, ValidatingAdmissionPolicyBinding[]>();
    for (const b of [...bindings.values()].sort(byName)) {
      const p = b.spec?.policyName ?? '';
      let l = byPolicy.get(p);
      if (!l) byPolicy.set(p, (l = []));
      l.push(b);
    }
    const out: PolicyHook[] = [];
    for (const name of [...byPolicy.keys()].sort()) {
      const policy = policies.get(name);
      if (!policy) continue;
      const mc = policy.spec?.matchConstraints;
      out.push({
        policy,
        bindings: byPolicy.get(name)!,
        constraints: mc ? parseMatchResources(mc) : undefined,
        bindingMatch,
        compiled: () => compiledFor(policy),
      });
    }
    // Forget compiled policies no longer bound.
    for (const name of [...compiledCache.keys()]) if (!byPolicy.has(name) || !policies.has(name)) compiledCache.delete(name);
    return out;
  }

  return {
    hooks() {
      return (hooks ??= calculate());
    },
    stop() {
      for (const w of watches) w.stop();
    },
  };
}
