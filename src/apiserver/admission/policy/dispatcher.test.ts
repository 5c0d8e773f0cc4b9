// The policy dispatcher without a server or CEL: matching, params,
// validation actions, failurePolicy and the wording of every outcome, with
// compiled policies faked at the evaluator seam.
import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from 'kubernetes-types/admissionregistration/v1.js';
import type { KubeObject } from '../../../api/types.js';
import { StatusError } from '../../../client/errors.js';
import { newLogger, setLogOutput } from '../../../util/log/logger.js';
import { newResourceTable } from '../../resources.js';
import type { AdmissionAttributes, Operation } from '../admission.js';
import { denialError, dispatchPolicies, reasonToCode, type DispatchDeps } from './dispatcher.js';
import type { CompiledPolicy, ConditionEvaluator, ExpressionOutcome, PolicyInput } from './evaluator.js';
import { parseMatchResources } from './matching.js';
import type { PolicyHook } from './policy-source.js';

const resources = newResourceTable();
const deployments = resources.find('apps', 'v1', 'deployments')!;
const configmaps = resources.find('', 'v1', 'configmaps')!;
const rules = [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }];

/** A stored world: namespaces and config maps. */
function world(objs: KubeObject[]) {
  const key = (group: string, resource: string, ns: string, name: string) => `${group}/${resource}/${ns}/${name}`;
  const m = new Map<string, KubeObject>();
  for (const o of objs) {
    const resource = o.kind === 'Namespace' ? 'namespaces' : 'configmaps';
    m.set(key('', resource, o.metadata?.namespace ?? '', o.metadata?.name ?? ''), o);
  }
  return {
    reader: { get: async (g: string, r: string, ns: string, n: string) => m.get(key(g, r, ns, n)) },
    lister: { list: async (g: string, r: string, ns: string) => [...m.entries()].filter(([k]) => k.startsWith(`${g}/${r}/${ns}/`)).map(([, v]) => v) },
  };
}

const ns = (name: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } });
const cm = (name: string, namespace: string, data: Record<string, string>, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, labels }, data });

function deps(objs: KubeObject[] = [ns('default')]): DispatchDeps {
  return { resources, logger: newLogger('test'), ...world(objs) };
}

interface Req {
  operation?: Operation;
  name?: string;
  namespace?: string;
  object?: KubeObject;
  warnings?: string[];
  annotations?: Record<string, string>;
}

function attrs(r: Req = {}): AdmissionAttributes {
  const object = r.object ?? { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: r.name ?? 'web', namespace: r.namespace ?? 'default', labels: {} }, spec: { replicas: 6 } };
  return {
    operation: r.operation ?? 'CREATE',
    resource: deployments,
    subresource: '',
    namespace: r.namespace ?? 'default',
    name: r.name ?? 'web',
    object,
    oldObject: undefined,
    user: { username: 'alice', groups: ['system:authenticated'] },
    dryRun: false,
    request: { warn: (m) => r.warnings?.push(m), annotations: r.annotations ?? {} },
  };
}

/** One evaluator returning fixed outcomes, recording its inputs. */
function fixed(outcomes: (ExpressionOutcome | undefined)[], seen?: PolicyInput[]): ConditionEvaluator {
  return {
    forInput(input, budget) {
      seen?.push(input);
      return { results: outcomes, remainingBudget: budget };
    },
  };
}

const none = fixed([]);
const value = (v: unknown): ExpressionOutcome => ({ kind: 'value', value: v });

function compiled(p: Partial<CompiledPolicy>): CompiledPolicy {
  return { validations: none, messageExpressions: none, auditAnnotations: none, typeName: () => 'int', ...p };
}

function vap(name: string, spec: Record<string, unknown>): ValidatingAdmissionPolicy {
  return { metadata: { name }, spec: { failurePolicy: 'Fail', matchConstraints: { resourceRules: rules, matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} }, ...spec } } as ValidatingAdmissionPolicy;
}

function vapb(name: string, policyName: string, spec: Record<string, unknown> = {}): ValidatingAdmissionPolicyBinding {
  return { metadata: { name }, spec: { policyName, validationActions: ['Deny'], ...spec } } as ValidatingAdmissionPolicyBinding;
}

function hook(policy: ValidatingAdmissionPolicy, bindings: ValidatingAdmissionPolicyBinding[], c: CompiledPolicy): PolicyHook {
  const mc = policy.spec?.matchConstraints;
  return {
    policy,
    bindings,
    constraints: mc ? parseMatchResources(mc) : undefined,
    bindingMatch: (b) => (b.spec?.matchResources ? parseMatchResources(b.spec.matchResources) : undefined),
    compiled: () => c,
  };
}

async function refusal(p: Promise<void>): Promise<StatusError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof StatusError, String(err));
    return err;
  }
  assert.fail('the request was admitted');
}

const validations = [{ expression: 'object.spec.replicas <= 5' }];

describe('ValidatingAdmissionPolicy dispatch', () => {
  before(() => setLogOutput(() => {}));

  it('maps validation reasons to HTTP codes as upstream', () => {
    assert.deepEqual(['Forbidden', 'Unauthorized', 'RequestEntityTooLarge', 'Invalid', 'Other'].map(reasonToCode), [403, 401, 413, 422, 422]);
  });

  it('words a denial as upstream, naming the object and keeping the message as a cause', () => {
    const err = denialError(attrs(), { policy: 'p', binding: 'b', message: 'nope', reason: '' });
    assert.equal(err.status.code, 422);
    assert.equal(err.status.reason, 'Invalid');
    assert.equal(err.status.message, `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'b' denied request: nope`);
    assert.deepEqual(err.status.details, { name: 'web', group: 'apps', kind: 'deployments', causes: [{ message: `ValidatingAdmissionPolicy 'p' with binding 'b' denied request: nope` }] });
    const noBinding = denialError(attrs(), { policy: 'p', message: 'bad', reason: 'Forbidden' });
    assert.equal(noBinding.status.code, 403);
    assert.equal(noBinding.status.message, `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' denied request: bad`);
  });

  it('denies with the first failed validation, its reason and the default message', async () => {
    const p = vap('p', { validations: [{ expression: 'a' }, { expression: ' object.spec.replicas <= 5 ', reason: 'Forbidden' }] });
    const c = compiled({ validations: fixed([value(true), value(false)]) });
    const err = await refusal(dispatchPolicies(deps(), [hook(p, [vapb('b', 'p')], c)], attrs()));
    assert.equal(err.status.code, 403);
    assert.match(err.message, /denied request: failed expression: object.spec.replicas <= 5$/);
  });

  it('prefers messageExpression, then message; blank, multi-line or too long results fall back', async () => {
    const p = vap('p', {
      validations: [
        { expression: 'e0', messageExpression: 'm0' },
        { expression: 'e1', message: ' static ', messageExpression: 'm1' },
        { expression: 'e2', message: 'static2', messageExpression: 'm2' },
        { expression: 'e3', message: 'static3', messageExpression: 'm3' },
        { expression: 'e4', messageExpression: 'm4' },
      ],
    });
    const warnings: string[] = [];
    const c = compiled({
      validations: fixed([value(false), value(false), value(false), value(false), value(false)]),
      messageExpressions: fixed([value('  computed  '), value('   '), value('two\nlines'), value('x'.repeat(5 * 1024 + 1)), { kind: 'error', message: 'boom' }]),
    });
    await dispatchPolicies(deps(), [hook(p, [vapb('b', 'p', { validationActions: ['Warn'] })], c)], attrs({ warnings }));
    assert.deepEqual(warnings, [
      "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': computed",
      "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': static",
      "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': static2",
      "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': static3",
      "Validation failed for ValidatingAdmissionPolicy 'p' with binding 'b': failed expression: e4",
    ]);
  });

  it('publishes Audit failures and audit annotations, joining distinct values across bindings', async () => {
    const p = vap('p', { validations, auditAnnotations: [{ key: 'k', valueExpression: 'v' }, { key: 'empty', valueExpression: 'e' }, { key: 'nil', valueExpression: 'n' }] });
    let call = 0;
    const audits: ConditionEvaluator = { forInput: (_i, b) => ({ results: [value(`v${call++ % 2}`), value('  '), value(null)], remainingBudget: b }) };
    const c = compiled({ validations: fixed([value(false)]), auditAnnotations: audits });
    const annotations: Record<string, string> = {};
    await dispatchPolicies(deps(), [hook(p, [vapb('a1', 'p', { validationActions: ['Audit'] }), vapb('a2', 'p', { validationActions: ['Audit'] })], c)], attrs({ annotations }));
    // Go's encoding/json escapes `<` (the first binding's failure wins: annotations are never overwritten).
    assert.deepEqual(annotations, {
      'validation.policy.admission.k8s.io/validation_failure': '[{"message":"failed expression: object.spec.replicas \\u003c= 5","policy":"p","binding":"a1","expressionIndex":0,"validationActions":["Audit"]}]',
      'p/k': 'v0, v1',
    });
  });

  it('refuses when an audit annotation is not a string or null, whatever the failurePolicy (as upstream); errors follow it', async () => {
    const c = compiled({ auditAnnotations: fixed([value(3n)]) });
    const spec = { auditAnnotations: [{ key: 'k', valueExpression: '1 + 2' }] };
    let err = await refusal(dispatchPolicies(deps(), [hook(vap('p', spec), [vapb('b', 'p')], c)], attrs()));
    assert.match(err.message, /denied request: valueExpression '1 \+ 2' resulted in unsupported return type: int. Return type must be either string or null.$/);
    err = await refusal(dispatchPolicies(deps(), [hook(vap('p', { ...spec, failurePolicy: 'Ignore' }), [vapb('b', 'p')], c)], attrs()));
    assert.match(err.message, /unsupported return type: int/);
    const erroring = compiled({ auditAnnotations: fixed([{ kind: 'error', message: 'boom' }]) });
    err = await refusal(dispatchPolicies(deps(), [hook(vap('p', spec), [vapb('b', 'p')], erroring)], attrs()));
    assert.match(err.message, /denied request: boom$/);
    await dispatchPolicies(deps(), [hook(vap('p', { ...spec, failurePolicy: 'Ignore' }), [vapb('b', 'p')], erroring)], attrs());
  });

  it('applies failurePolicy to evaluation errors and to a failed evaluation as a whole', async () => {
    const failing = compiled({ validations: fixed([{ kind: 'error', message: "expression 'x' resulted in error: no such key: x" }]) });
    let err = await refusal(dispatchPolicies(deps(), [hook(vap('p', { validations }), [vapb('b', 'p')], failing)], attrs()));
    assert.match(err.message, /denied request: expression 'x' resulted in error: no such key: x$/);
    assert.equal(err.status.code, 422);
    await dispatchPolicies(deps(), [hook(vap('p', { validations, failurePolicy: 'Ignore' }), [vapb('b', 'p')], failing)], attrs());
    const budget = compiled({ validations: { forInput: () => ({ failure: 'validation failed due to running out of cost budget, no further validation rules will be run', outOfBudget: true }) } });
    err = await refusal(dispatchPolicies(deps(), [hook(vap('p', { validations }), [vapb('b', 'p')], budget)], attrs()));
    assert.match(err.message, /denied request: validation failed due to running out of cost budget, no further validation rules will be run$/);
    // A failed messageExpression evaluation turns every decision into that error.
    const msgBudget = compiled({ validations: fixed([value(true)]), messageExpressions: { forInput: () => ({ failure: 'validation failed due to running out of cost budget, no further validation rules will be run', outOfBudget: true }) } });
    err = await refusal(dispatchPolicies(deps(), [hook(vap('p', { validations }), [vapb('b', 'p')], msgBudget)], attrs()));
    assert.match(err.message, /denied request: failed messageExpression: validation failed due to running out of cost budget/);
  });

  it('skips requests a false matchCondition excludes, and applies failurePolicy to condition errors', async () => {
    const excluded = compiled({ matchConditions: { names: ['a', 'b'], evaluator: fixed([value(true), value(false)]) }, validations: fixed([value(false)]) });
    await dispatchPolicies(deps(), [hook(vap('p', { validations }), [vapb('b', 'p')], excluded)], attrs());
    const erroring = compiled({ matchConditions: { names: ['a', 'b'], evaluator: fixed([{ kind: 'error', message: 'e1' }, { kind: 'error', message: 'e2' }]) }, validations: fixed([value(true)]) });
    const err = await refusal(dispatchPolicies(deps(), [hook(vap('p', { validations }), [vapb('b', 'p')], erroring)], attrs()));
    assert.match(err.message, /denied request: \[e1, e2\]$/);
    await dispatchPolicies(deps(), [hook(vap('p', { validations, failurePolicy: 'Ignore' }), [vapb('b', 'p')], erroring)], attrs());
    // A false condition wins over errors.
    const mixed = compiled({ matchConditions: { names: ['a', 'b'], evaluator: fixed([{ kind: 'error', message: 'e1' }, value(false)]) }, validations: fixed([value(false)]) });
    await dispatchPolicies(deps(), [hook(vap('p', { validations }), [vapb('b', 'p')], mixed)], attrs());
  });

  it('matches by rules, resourceNames, excludes, selectors and the binding narrowing', async () => {
    const c = compiled({ validations: fixed([value(false)]) });
    const run = (policySpec: Record<string, unknown>, bindingSpec: Record<string, unknown> = {}, r: Req = {}, objs?: KubeObject[]) =>
      dispatchPolicies(deps(objs), [hook(vap('p', { validations, ...policySpec }), [vapb('b', 'p', bindingSpec)], c)], attrs(r)).then(
        () => 'admitted',
        (e: Error) => e.message,
      );
    const mc = (extra: Record<string, unknown>) => ({ matchConstraints: { resourceRules: rules, matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, ...extra } });
    assert.match(await run({}), /denied/);
    assert.equal(await run(mc({ resourceRules: [{ ...rules[0], resourceNames: ['other'] }] })), 'admitted');
    assert.match(await run(mc({ resourceRules: [{ ...rules[0], resourceNames: ['web'] }] })), /denied/);
    assert.equal(await run(mc({ resourceRules: [{ ...rules[0], operations: ['DELETE'] }] })), 'admitted');
    assert.equal(await run(mc({ excludeResourceRules: rules })), 'admitted');
    assert.equal(await run(mc({ objectSelector: { matchLabels: { a: 'b' } } })), 'admitted');
    assert.equal(await run(mc({ namespaceSelector: { matchLabels: { env: 'prod' } } }), {}, {}, [ns('default', { env: 'dev' })]), 'admitted');
    assert.match(await run(mc({ namespaceSelector: { matchLabels: { env: 'prod' } } }), {}, {}, [ns('default', { env: 'prod' })]), /denied/);
    assert.equal(await run({}, { matchResources: { namespaceSelector: { matchLabels: { env: 'x' } }, objectSelector: {}, matchPolicy: 'Equivalent' } }, {}, [ns('default', { env: 'y' })]), 'admitted');
    // A namespace that does not exist is an error once the rules match (failurePolicy applies).
    assert.match(await run(mc({ namespaceSelector: { matchLabels: { env: 'prod' } } }), {}, {}, []), /failed to configure policy: namespaces "default" not found$/);
  });

  it('collects params by name and by selector, with parameterNotFoundAction', async () => {
    const seen: PolicyInput[] = [];
    const c = compiled({ validations: fixed([value(true)], seen) });
    const paramKind = { apiVersion: 'v1', kind: 'ConfigMap' };
    const objs = [ns('default'), cm('limits', 'default', { max: '3' }, { use: 'yes' }), cm('other', 'default', { max: '4' }, { use: 'yes' }), cm('elsewhere', 'kube-system', { max: '9' })];
    const run = (b: Record<string, unknown>) => dispatchPolicies(deps(objs), [hook(vap('p', { validations, paramKind }), [vapb('b', 'p', b)], c)], attrs());
    await run({ paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } });
    assert.deepEqual(seen.map((i) => (i.params as { metadata: { name: string } }).metadata.name), ['limits']);
    assert.equal(seen[0]!.params!.apiVersion, 'v1');
    assert.equal(seen[0]!.params!.kind, 'ConfigMap');
    seen.length = 0;
    await run({ paramRef: { selector: { matchLabels: { use: 'yes' } }, parameterNotFoundAction: 'Deny' } });
    assert.deepEqual(seen.map((i) => (i.params as { metadata: { name: string } }).metadata.name).sort(), ['limits', 'other']);
    seen.length = 0;
    await run({ paramRef: { name: 'elsewhere', namespace: 'kube-system', parameterNotFoundAction: 'Deny' } });
    assert.equal(seen.length, 1);
    seen.length = 0;
    await run({ paramRef: { name: 'missing', parameterNotFoundAction: 'Allow' } });
    assert.equal(seen.length, 0);
    const err = await refusal(run({ paramRef: { name: 'missing', parameterNotFoundAction: 'Deny' } }));
    assert.match(err.message, /ValidatingAdmissionPolicy 'p' with binding 'b' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction$/);
    // No paramRef in the binding: evaluated once with params null.
    await run({});
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.params, null);
  });

  it('reports paramKind and param scope misconfigurations as upstream', async () => {
    const c = compiled({ validations: fixed([value(true)]) });
    const clusterRules = [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['namespaces'] }];
    const nsAttrs: AdmissionAttributes = { ...attrs(), resource: resources.find('', 'v1', 'namespaces')!, namespace: '', name: 'new', object: ns('new') };
    let err = await refusal(
      dispatchPolicies(deps(), [hook(vap('p', { validations, paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, matchConstraints: { resourceRules: clusterRules, matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} } }), [vapb('b', 'p', { paramRef: { name: 'x', parameterNotFoundAction: 'Deny' } })], c)], nsAttrs),
    );
    assert.match(err.message, /failed to configure binding: cannot use namespaced paramRef in policy binding that matches cluster-scoped resources$/);
    err = await refusal(dispatchPolicies(deps(), [hook(vap('p', { validations, paramKind: { apiVersion: 'v1', kind: 'Node' } }), [vapb('b', 'p', { paramRef: { name: 'x', namespace: 'default', parameterNotFoundAction: 'Deny' } })], c)], attrs()));
    assert.match(err.message, /failed to configure binding: paramRef.namespace must not be provided for a cluster-scoped `paramKind`$/);
    err = await refusal(dispatchPolicies(deps(), [hook(vap('p', { validations, paramKind: { apiVersion: 'example.com/v1', kind: 'Limits' } }), [vapb('b', 'p')], c)], attrs()));
    assert.equal(err.status.message, `deployments.apps "web" is forbidden: ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com/v1, Kind=Limits'`);
  });

  it('gives the expressions the request, the trimmed namespace and the objects at the matched version', async () => {
    const seen: PolicyInput[] = [];
    const c = compiled({ validations: fixed([value(true)], seen) });
    const nsObj: KubeObject = { ...ns('default', { env: 'dev' }), metadata: { name: 'default', labels: { env: 'dev' }, managedFields: [{ manager: 'x' }], ownerReferences: [] } } as KubeObject;
    await dispatchPolicies(deps([nsObj]), [hook(vap('p', { validations }), [vapb('b', 'p')], c)], attrs());
    const input = seen[0]!;
    assert.deepEqual(input.namespaceObject, { metadata: { name: 'default', labels: { env: 'dev' } } });
    assert.deepEqual(input.request, {
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      subResource: '',
      requestKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      requestResource: { group: 'apps', version: 'v1', resource: 'deployments' },
      requestSubResource: '',
      name: 'web',
      namespace: 'default',
      operation: 'CREATE',
      userInfo: { username: 'alice', uid: '', groups: ['system:authenticated'], extra: {} },
      dryRun: false,
      options: null,
    });
    assert.equal((input.object as { spec: { replicas: number } }).spec.replicas, 6);
    assert.equal(input.oldObject, null);
  });

  it('never runs policies whose match constraints are missing without failing closed', async () => {
    const p = vap('p', { validations });
    delete (p.spec as Record<string, unknown>).matchConstraints;
    const err = await refusal(dispatchPolicies(deps(), [hook(p, [vapb('b', 'p')], compiled({}))], attrs()));
    assert.match(err.message, /ValidatingAdmissionPolicy 'p' denied request: failed to configure policy: policy contained no match constraints, a required field$/);
  });

  it('lets config maps through a policy on deployments', async () => {
    const c = compiled({ validations: fixed([value(false)]) });
    await dispatchPolicies(deps(), [hook(vap('p', { validations }), [vapb('b', 'p')], c)], { ...attrs(), resource: configmaps, object: cm('x', 'default', {}) });
  });
});
