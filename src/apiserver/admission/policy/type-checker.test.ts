import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { populateRefs, typeCheck, typesToCheck, type KindResolver } from './type-checker.js';

const kinds: KindResolver = {
  async kindsFor(gvr) {
    const k: Record<string, string> = { deployments: 'Deployment', replicasets: 'ReplicaSet', configmaps: 'ConfigMap', pods: 'Pod' };
    return k[gvr.resource] ? [{ group: gvr.group, version: gvr.version, kind: k[gvr.resource]! }] : [];
  },
};

describe('policy type checking', () => {
  it('checks the kinds named without wildcards, skipping subresources, sorted', async () => {
    const gvks = await typesToCheck(
      {
        spec: {
          matchConstraints: {
            resourceRules: [
              { apiGroups: ['apps'], apiVersions: ['v1'], resources: ['replicasets', 'deployments', 'deployments/scale', '*'] },
              { apiGroups: ['*'], apiVersions: ['v1'], resources: ['pods'] },
              { apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps', 'unknown'] },
            ],
          },
        },
      },
      kinds,
    );
    assert.deepEqual(gvks.map((g) => `${g.group}/${g.version}/${g.kind}`), ['/v1/ConfigMap', 'apps/v1/Deployment', 'apps/v1/ReplicaSet']);
  });

  it('inlines refs, marks built-in int-or-string, and cuts recursion', () => {
    const schemas = {
      Root: { type: 'object', properties: { port: { $ref: '#/components/schemas/IntOrString' }, child: { allOf: [{ $ref: '#/components/schemas/Node' }], description: 'd' } }, 'x-kubernetes-group-version-kind': [{ group: 'g', version: 'v1', kind: 'Root' }] },
      IntOrString: { type: 'string', format: 'int-or-string' },
      Node: { type: 'object', properties: { next: { $ref: '#/components/schemas/Node' }, items: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' } } },
    };
    const s = populateRefs({ $ref: '#/components/schemas/Root' }, schemas);
    assert.deepEqual(s.properties!.port, { type: 'string', format: 'int-or-string', 'x-kubernetes-int-or-string': true });
    assert.deepEqual(s.properties!.child!.properties!.next, { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    assert.equal(s.properties!.child!.description, 'd');
    assert.deepEqual(s.properties!.child!.properties!.items, { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' });
  });

  it('warns per expression and kind, with nothing to say for a policy whose kinds have no schema', async () => {
    const policy = {
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments', 'replicasets'] }] },
        variables: [{ name: 'r', expression: 'object.spec.replicas' }],
        validations: [{ expression: 'variables.r <= 5' }, { expression: "variables.r == 'x'", messageExpression: 'object.spec.nope' }],
      },
    };
    const spec = { type: 'object', properties: { spec: { type: 'object', properties: { replicas: { type: 'integer' } } } } };
    const warnings = await typeCheck(policy, { kinds, schemas: { resolveSchema: async () => spec } });
    const noOverload = (kind: string) => `apps/v1, Kind=${kind}: ERROR: <input>:1:13: found no matching overload for '_==_' applied to '(int, string)'\n | variables.r == 'x'\n | ............^\n`;
    const undef = (kind: string) => `apps/v1, Kind=${kind}: ERROR: <input>:1:12: undefined field 'nope'\n | object.spec.nope\n | ...........^\n`;
    assert.deepEqual(warnings, [
      { fieldRef: 'spec.validations[1].expression', warning: `${noOverload('Deployment')}\n${noOverload('ReplicaSet')}` },
      { fieldRef: 'spec.validations[1].messageExpression', warning: `${undef('Deployment')}\n${undef('ReplicaSet')}` },
    ]);
    assert.deepEqual(await typeCheck(policy, { kinds, schemas: { resolveSchema: async () => undefined } }), []);
  });
});
