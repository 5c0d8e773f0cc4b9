import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../api/types.js';
import { newMemoryStorage } from '../../storage/memory.js';
import { storageKey } from '../../store.js';
import { newLogger, setLogOutput } from '../../../util/log/logger.js';
import type { CompiledPolicy } from './evaluator.js';
import { startPolicySource } from './policy-source.js';

const group = 'admissionregistration.k8s.io';
const policyKey = (name: string) => storageKey({ group, resource: 'validatingadmissionpolicies' }, '', name);
const bindingKey = (name: string) => storageKey({ group, resource: 'validatingadmissionpolicybindings' }, '', name);

const policy = (name: string, generation: number, uid = 'u1'): KubeObject => ({ apiVersion: `${group}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: { name, uid, generation }, spec: { matchConstraints: { resourceRules: [] }, validations: [{ expression: 'true' }] } });
const binding = (name: string, policyName: string): KubeObject => ({ apiVersion: `${group}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: { name }, spec: { policyName, validationActions: ['Deny'] } });

describe('admission policy source', () => {
  before(() => setLogOutput(() => {}));

  it('pairs policies with their bindings, by name, and ignores bindings without a policy', async () => {
    const storage = newMemoryStorage();
    await storage.create(policyKey('b-policy'), policy('b-policy', 1));
    await storage.create(bindingKey('z'), binding('z', 'b-policy'));
    const compiled: string[] = [];
    const source = await startPolicySource({ storage, logger: newLogger('t'), compile: (p) => (compiled.push(`${p.metadata?.name}`), {}) as CompiledPolicy });
    await storage.create(bindingKey('y'), binding('y', 'b-policy'));
    await storage.create(bindingKey('orphan'), binding('orphan', 'missing'));
    await storage.create(policyKey('a-policy'), policy('a-policy', 1));
    await storage.create(policyKey('unbound'), policy('unbound', 1));
    await storage.create(bindingKey('x'), binding('x', 'a-policy'));
    const hooks = source.hooks();
    assert.deepEqual(
      hooks.map((h) => [h.policy.metadata?.name, h.bindings.map((b) => b.metadata?.name)]),
      [
        ['a-policy', ['x']],
        ['b-policy', ['y', 'z']],
      ],
    );
    assert.deepEqual(compiled, [], 'compiled on first use only');
    source.stop();
  });

  it('compiles a policy once per generation', async () => {
    const storage = newMemoryStorage();
    await storage.create(policyKey('p'), policy('p', 1));
    await storage.create(bindingKey('b'), binding('b', 'p'));
    let compiles = 0;
    const source = await startPolicySource({ storage, logger: newLogger('t'), compile: () => (compiles++, {}) as CompiledPolicy });
    source.hooks()[0]!.compiled();
    source.hooks()[0]!.compiled();
    // A status write (same generation) does not recompile.
    await storage.update(policyKey('p'), { ...policy('p', 1), status: { observedGeneration: 1 } });
    source.hooks()[0]!.compiled();
    assert.equal(compiles, 1);
    await storage.update(policyKey('p'), policy('p', 2));
    source.hooks()[0]!.compiled();
    assert.equal(compiles, 2);
    // Recreated under the same name: a new uid compiles again.
    await storage.delete(policyKey('p'));
    assert.deepEqual(source.hooks(), []);
    await storage.create(policyKey('p'), policy('p', 2, 'u2'));
    source.hooks()[0]!.compiled();
    assert.equal(compiles, 3);
    source.stop();
  });
});
