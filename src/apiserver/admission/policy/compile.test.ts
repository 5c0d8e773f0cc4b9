// Compiling and evaluating policy expressions with the Kubernetes CEL
// environment: declared variables, return types, error texts, variables
// composition and the cost budget.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CelAuthorizer, CelResourceCheck } from '../../cel/library/authz.js';
import { celTypeOfEngineName, rewriteQualifiedVariables } from './cel-env.js';
import { compilePolicy, runtimeTypeName } from './compile.js';
import { isFailure, type ExpressionOutcome, type ForInputFailure, type ForInputResult, type PolicyInput } from './evaluator.js';

const request = {
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
  subResource: '',
  requestKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  requestResource: { group: 'apps', version: 'v1', resource: 'deployments' },
  requestSubResource: '',
  name: 'web',
  namespace: 'default',
  operation: 'CREATE',
  userInfo: { username: 'alice', uid: '', groups: ['devs'], extra: {} },
  dryRun: false,
  options: null,
};

function input(extra: Partial<PolicyInput> = {}): PolicyInput {
  return {
    object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { tier: 'front' } }, spec: { replicas: 6 } },
    oldObject: null,
    request,
    params: null,
    namespaceObject: { metadata: { name: 'default', labels: { env: 'prod' } } },
    ...extra,
  };
}

function results(r: ForInputResult | ForInputFailure): (ExpressionOutcome | undefined)[] {
  assert.ok(!isFailure(r), isFailure(r) ? r.failure : '');
  return r.results;
}

const validations = (exprs: string[]) => ({ metadata: { name: 'p' }, spec: { validations: exprs.map((expression) => ({ expression })) } });

describe('policy expressions', () => {
  it('spells authorizer.requestResource as an identifier of the same length, outside string literals', () => {
    assert.equal(rewriteQualifiedVariables('authorizer.requestResource.check("get")'), 'authorizer_requestResource.check("get")');
    assert.equal(rewriteQualifiedVariables('"authorizer.requestResource" == x'), '"authorizer.requestResource" == x');
    assert.equal(rewriteQualifiedVariables('a.authorizer.requestResource'), 'a.authorizer.requestResource');
    assert.equal(rewriteQualifiedVariables("'it''s' + authorizer.requestResource.name('x')"), "'it''s' + authorizer_requestResource.name('x')");
  });

  it('types variables by their output type as upstream converts cel types', () => {
    assert.deepEqual(celTypeOfEngineName('int'), { kind: 'primitive', name: 'int' });
    assert.deepEqual(celTypeOfEngineName('list<string>'), { kind: 'list', elem: { kind: 'primitive', name: 'string' } });
    assert.deepEqual(celTypeOfEngineName('map<string, list<int>>'), { kind: 'map', key: { kind: 'primitive', name: 'string' }, value: { kind: 'list', elem: { kind: 'primitive', name: 'int' } } });
    assert.deepEqual(celTypeOfEngineName('kubernetes.AdmissionRequest'), { kind: 'primitive', name: 'dyn' });
    assert.deepEqual(celTypeOfEngineName('optional<int>'), { kind: 'primitive', name: 'dyn' });
  });

  it('names runtime types as cel-go does in messages', () => {
    assert.deepEqual([1n, 1.5, true, 'x', null, [], {}, new Map()].map(runtimeTypeName), ['int', 'double', 'bool', 'string', 'null_type', 'list', 'map', 'map']);
  });

  it('evaluates validations over object, request and namespaceObject', () => {
    const p = compilePolicy(validations(['object.spec.replicas <= 5', "request.operation == 'CREATE' && request.userInfo.groups == ['devs']", "namespaceObject.metadata.labels['env'] == 'prod'", 'oldObject == null']));
    assert.deepEqual(results(p.validations.forInput(input(), 10_000_000)).map((r) => r && (r.kind === 'value' ? r.value : r.message)), [false, true, true, true]);
  });

  it('reports compile errors and wrong return types as upstream', () => {
    const p = compilePolicy(validations(['object.spec.replicas', 'params.x == 1', '1 +']));
    const [a, b, c] = results(p.validations.forInput(input(), 10_000_000));
    assert.deepEqual(a, { kind: 'error', message: 'compilation error: must evaluate to bool but got dyn' });
    assert.equal(b?.kind === 'error' && b.message, "compilation error: compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^");
    assert.ok(c?.kind === 'error' && c.message.startsWith('compilation error: compilation failed: ERROR: <input>:1:'), c?.kind === 'error' ? c.message : '');
    const audits = compilePolicy({ spec: { auditAnnotations: [{ key: 'k', valueExpression: '1' }, { key: 'n', valueExpression: 'null' }, { key: 's', valueExpression: "'v'" }] } });
    assert.deepEqual(results(audits.auditAnnotations.forInput(input(), 10_000_000)), [
      { kind: 'error', message: 'compilation error: must evaluate to one of [string null_type] but got int' },
      { kind: 'value', value: null },
      { kind: 'value', value: 'v' },
    ]);
  });

  it('words runtime errors with the expression', () => {
    const p = compilePolicy(validations(["object.metadata.labels['missing'] == 'x'"]));
    assert.deepEqual(results(p.validations.forInput(input(), 10_000_000)), [{ kind: 'error', message: "expression 'object.metadata.labels['missing'] == 'x'' resulted in error: no such key: missing" }]);
  });

  it('declares params only with a paramKind, null without a param', () => {
    const p = compilePolicy({ spec: { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, validations: [{ expression: 'params == null || int(params.data.max) >= object.spec.replicas' }] } });
    assert.deepEqual(results(p.validations.forInput(input(), 10_000_000)), [{ kind: 'value', value: true }]);
    assert.deepEqual(results(p.validations.forInput(input({ params: { data: { max: '5' } } }), 10_000_000)), [{ kind: 'value', value: false }]);
  });

  it('evaluates each variable once per evaluation, later variables seeing earlier ones', () => {
    const p = compilePolicy({
      spec: {
        variables: [
          { name: 'replicas', expression: 'object.spec.replicas' },
          { name: 'double', expression: 'variables.replicas * 2' },
          { name: 'bad', expression: "object.metadata.labels['nope']" },
          { name: 'broken', expression: 'object.' },
        ],
        validations: [{ expression: 'variables.double == 12' }, { expression: 'variables.double > variables.replicas' }, { expression: "variables.bad == 'x'" }, { expression: 'variables.broken == 1' }],
      },
    });
    const [a, b, c, d] = results(p.validations.forInput(input(), 10_000_000));
    assert.deepEqual(a, { kind: 'value', value: true });
    assert.deepEqual(b, { kind: 'value', value: true });
    assert.deepEqual(c, { kind: 'error', message: `expression 'variables.bad == 'x'' resulted in error: composited variable "bad" fails to evaluate: no such key: nope` });
    assert.ok(d?.kind === 'error' && d.message.startsWith(`expression 'variables.broken == 1' resulted in error: composited variable "broken" fails to compile: compilation failed: ERROR:`), d?.kind === 'error' ? d.message : '');
  });

  it('stops the whole evaluation when the budget runs out, and stops one expression past the per-call limit', () => {
    const p = compilePolicy(validations(['object.spec.replicas <= 5', 'object.spec.replicas <= 5']));
    const r = p.validations.forInput(input(), 4);
    assert.ok(isFailure(r));
    assert.equal(r.failure, 'validation failed due to running out of cost budget, no further validation rules will be run');
    const ok = p.validations.forInput(input(), 10_000_000);
    assert.ok(!isFailure(ok) && ok.remainingBudget < 10_000_000);
    const heavy = compilePolicy(validations(['[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a + b + c + d + e + f > 0))))))']));
    const [h] = results(heavy.validations.forInput(input(), 100_000_000));
    assert.ok(h?.kind === 'error' && h.message.endsWith('resulted in error: operation cancelled: actual cost limit exceeded'), h?.kind === 'error' ? h.message : String(h));
  });

  it('gives validations the authorizer and authorizer.requestResource, and messageExpressions neither', () => {
    const decided: string[] = [];
    const az = new CelAuthorizer((a) => {
      decided.push(JSON.stringify(a));
      return { decision: a.verb === 'get' ? 'allow' : 'noOpinion' };
    });
    const p = compilePolicy({
      spec: {
        validations: [
          { expression: "authorizer.group('').resource('pods').namespace('default').check('get').allowed()", messageExpression: "'x'" },
          { expression: "authorizer.requestResource.check('delete').allowed()", messageExpression: "authorizer.requestResource.check('get').reason()" },
        ],
      },
    });
    const withAuthz = input({ authorizer: az, requestResourceAuthorizer: new CelResourceCheck(az, { group: 'apps', resource: 'deployments', namespace: 'default', name: 'web' }) });
    assert.deepEqual(results(p.validations.forInput(withAuthz, 10_000_000)), [{ kind: 'value', value: true }, { kind: 'value', value: false }]);
    assert.deepEqual(decided, ['{"group":"","resource":"pods","namespace":"default","verb":"get"}', '{"group":"apps","resource":"deployments","namespace":"default","name":"web","verb":"delete"}']);
    const [, m] = results(p.messageExpressions.forInput(input(), 10_000_000));
    assert.ok(m?.kind === 'error' && m.message.includes("undeclared reference to 'authorizer.requestResource'"), m?.kind === 'error' ? m.message : '');
  });

  it('compiles matchConditions as bool expressions with their names', () => {
    const p = compilePolicy({ spec: { matchConditions: [{ name: 'front', expression: "object.metadata.labels['tier'] == 'front'" }], validations: [{ expression: 'true' }] } });
    assert.deepEqual(p.matchConditions?.names, ['front']);
    assert.deepEqual(results(p.matchConditions!.evaluator.forInput(input(), 10_000_000)), [{ kind: 'value', value: true }]);
  });
});

describe('policy expression validation', () => {
  it('reports compile errors per field as upstream words them', async () => {
    const { validatePolicyExpressions } = await import('./validation.js');
    const errs = validatePolicyExpressions({
      spec: {
        variables: [{ name: 'n', expression: 'object.spec.replicas' }, { name: 'bad', expression: 'variables.m' }],
        validations: [{ expression: '1', messageExpression: 'variables.n' }, { expression: 'variables.n > 1', messageExpression: "authorizer.path('/x').check('get').reason()" }],
        auditAnnotations: [{ key: 'k', valueExpression: ' true ' }],
      },
    });
    assert.deepEqual(
      errs.map((e) => [e.field, e.type, e.detail.split('\n')[0]]),
      [
        ['spec.variables[1].expression', 'Invalid', "compilation failed: ERROR: <input>:1:10: undefined field 'm'"],
        ['spec.validations[0].expression', 'Invalid', 'must evaluate to bool but got int'],
        ['spec.validations[0].messageExpression', 'Invalid', 'must evaluate to string but got dyn'],
        ['spec.validations[1].messageExpression', 'Invalid', "compilation failed: ERROR: <input>:1:1: undeclared reference to 'authorizer' (in container '')"],
        ['spec.auditAnnotations[0].valueExpression', 'Invalid', 'must evaluate to one of [string null_type] but got bool'],
      ],
    );
  });
});
