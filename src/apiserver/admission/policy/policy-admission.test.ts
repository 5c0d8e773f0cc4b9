// ValidatingAdmissionPolicy through the embedded API server: what a client
// gets when a policy denies, warns or audits, with params, selectors,
// messageExpression, variables, failurePolicy, and bindings without policies.
import { describe, it, before, after, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../../test-server.js';
import type { AdmissionAttributes, AdmissionPlugin } from '../admission.js';

const vap = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
const vapb = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';
const deploymentRules = [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }];

function deployment(name: string, replicas: number, labels: Record<string, string> = {}): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  };
}

describe('ValidatingAdmissionPolicy', () => {
  let s: TestServer;
  const created: string[] = [];
  /** Audit annotations of the last write, as the validating chain left them. */
  let lastAnnotations: Record<string, string> | undefined;

  const spy: AdmissionPlugin = {
    name: 'AuditSpy',
    validate(a: AdmissionAttributes) {
      if (a.resource.resource === 'deployments' || a.resource.resource === 'configmaps') lastAnnotations = { ...(a.request?.annotations ?? {}) };
    },
  };

  async function create(path: string, obj: Record<string, unknown>): Promise<void> {
    const res = await s.request('POST', path, obj);
    assert.equal(res.status, 201, res.text);
    created.push(`${path}/${(obj.metadata as { name: string }).name}`);
  }

  async function policy(name: string, spec: Record<string, unknown>): Promise<void> {
    await create(vap, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy', metadata: { name }, spec: { matchConstraints: { resourceRules: deploymentRules }, ...spec } });
  }

  async function binding(name: string, policyName: string, spec: Record<string, unknown> = {}): Promise<void> {
    await create(vapb, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name }, spec: { policyName, validationActions: ['Deny'], ...spec } });
  }

  const createDeployment = (obj: Record<string, unknown>, ns = 'default') => s.request('POST', `/apis/apps/v1/namespaces/${ns}/deployments`, obj);

  before(async () => {
    s = await startTestServer({ admission: (defaults) => [...defaults, spy] });
    for (const ns of ['prod', 'dev']) {
      const r = await s.request('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { env: ns } } });
      assert.equal(r.status, 201, r.text);
    }
  });

  after(async () => {
    await s.close();
  });

  afterEach(async () => {
    for (const p of created.splice(0).reverse()) await s.request('DELETE', p);
    for (const ns of ['default', 'prod', 'dev']) await s.request('DELETE', `/apis/apps/v1/namespaces/${ns}/deployments`);
    lastAnnotations = undefined;
  });

  it('denies a Deployment with more replicas than the policy allows, with the upstream message and 422', async () => {
    await policy('max-replicas.example.com', { validations: [{ expression: 'object.spec.replicas <= 5' }] });
    await binding('max-replicas-binding', 'max-replicas.example.com');
    const res = await createDeployment(deployment('big', 6));
    assert.equal(res.status, 422, res.text);
    assert.equal(res.body.reason, 'Invalid');
    const msg = `ValidatingAdmissionPolicy 'max-replicas.example.com' with binding 'max-replicas-binding' denied request: failed expression: object.spec.replicas <= 5`;
    assert.equal(res.body.message, `deployments.apps "big" is forbidden: ${msg}`);
    assert.deepEqual(res.body.details, { name: 'big', group: 'apps', kind: 'deployments', causes: [{ message: msg }] });
    const ok = await createDeployment(deployment('small', 3));
    assert.equal(ok.status, 201, ok.text);
    // Updates are checked too.
    const upd = await s.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/small', { spec: { replicas: 7 } });
    assert.equal(upd.status, 422, upd.text);
  });

  it('answers with the validation reason and message', async () => {
    await policy('reasons.example.com', { validations: [{ expression: 'object.spec.replicas < 2', reason: 'Forbidden', message: 'too many replicas' }] });
    await binding('reasons-binding', 'reasons.example.com');
    const res = await createDeployment(deployment('r', 3));
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.reason, 'Forbidden');
    assert.match(res.body.message, /denied request: too many replicas$/);
  });

  it('uses messageExpression, falling back to message when it is empty', async () => {
    await policy('msg.example.com', {
      validations: [
        { expression: 'object.spec.replicas <= 2', messageExpression: "'replicas ' + string(object.spec.replicas) + ' is more than 2'" },
        { expression: 'object.spec.replicas <= 1', messageExpression: "'   '", message: 'static message' },
      ],
    });
    await binding('msg-binding', 'msg.example.com', { validationActions: ['Warn'] });
    const res = await createDeployment(deployment('m', 3));
    assert.equal(res.status, 201, res.text);
    const w = ([] as string[]).concat(res.headers.warning ?? []).join('\n');
    assert.match(w, /299 - "Validation failed for ValidatingAdmissionPolicy 'msg.example.com' with binding 'msg-binding': replicas 3 is more than 2"/);
    assert.match(w, /299 - "Validation failed for ValidatingAdmissionPolicy 'msg.example.com' with binding 'msg-binding': static message"/);
  });

  it('records Audit failures and auditAnnotations as audit annotations', async () => {
    await policy('audit.example.com', {
      validations: [{ expression: 'object.spec.replicas <= 1', message: 'more than one' }],
      auditAnnotations: [{ key: 'replicas', valueExpression: "'replicas=' + string(object.spec.replicas)" }],
    });
    await binding('audit-binding', 'audit.example.com', { validationActions: ['Audit', 'Warn'] });
    const res = await createDeployment(deployment('a', 2));
    assert.equal(res.status, 201, res.text);
    assert.ok(lastAnnotations, 'the spy saw the request');
    assert.equal(lastAnnotations['audit.example.com/replicas'], 'replicas=2');
    assert.deepEqual(JSON.parse(lastAnnotations['validation.policy.admission.k8s.io/validation_failure']!), [
      { message: 'more than one', policy: 'audit.example.com', binding: 'audit-binding', expressionIndex: 0, validationActions: ['Audit', 'Warn'] },
    ]);
    assert.match(String(res.headers.warning), /more than one/);
  });

  it('reads params from a ConfigMap named by the binding, and applies parameterNotFoundAction', async () => {
    await policy('params.example.com', {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      validations: [{ expression: 'object.spec.replicas <= int(params.data.maxReplicas)', messageExpression: "'at most ' + params.data.maxReplicas + ' replicas'" }],
    });
    await binding('params-deny', 'params.example.com', { paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } });
    let res = await createDeployment(deployment('p1', 1));
    assert.equal(res.status, 422, res.text);
    assert.match(res.body.message, /ValidatingAdmissionPolicy 'params.example.com' with binding 'params-deny' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction$/);
    await create('/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'limits' }, data: { maxReplicas: '2' } });
    res = await createDeployment(deployment('p2', 2));
    assert.equal(res.status, 201, res.text);
    res = await createDeployment(deployment('p3', 3));
    assert.equal(res.status, 422, res.text);
    assert.match(res.body.message, /denied request: at most 2 replicas$/);
    // The param is looked up in the request's namespace: none in prod, and Allow lets the request through.
    res = await createDeployment(deployment('p4', 3), 'prod');
    assert.equal(res.status, 422, res.text);
    await s.request('DELETE', `${vapb}/params-deny`);
    await binding('params-allow', 'params.example.com', { paramRef: { name: 'limits', parameterNotFoundAction: 'Allow' } });
    res = await createDeployment(deployment('p5', 3), 'prod');
    assert.equal(res.status, 201, res.text);
  });

  it('evaluates once per param a selector picks, and a paramRef namespace points elsewhere', async () => {
    await policy('selector.example.com', {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      validations: [{ expression: 'object.spec.replicas <= int(params.data.max)', messageExpression: "params.metadata.name + ' allows ' + params.data.max" }],
    });
    await create('/api/v1/namespaces/dev/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'loose', labels: { limits: 'yes' } }, data: { max: '10' } });
    await create('/api/v1/namespaces/dev/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'strict', labels: { limits: 'yes' } }, data: { max: '3' } });
    await create('/api/v1/namespaces/dev/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'other' }, data: { max: '0' } });
    await binding('selector-binding', 'selector.example.com', { paramRef: { namespace: 'dev', selector: { matchLabels: { limits: 'yes' } }, parameterNotFoundAction: 'Deny' } });
    let res = await createDeployment(deployment('s1', 3));
    assert.equal(res.status, 201, res.text);
    res = await createDeployment(deployment('s2', 4));
    assert.equal(res.status, 422, res.text);
    assert.match(res.body.message, /denied request: strict allows 3$/);
  });

  it('fails under failurePolicy Fail and lets the request through under Ignore when paramKind names an unknown kind', async () => {
    await policy('unknown-param.example.com', { paramKind: { apiVersion: 'example.com/v1', kind: 'Missing' }, validations: [{ expression: 'true' }] });
    await binding('unknown-param-binding', 'unknown-param.example.com', { paramRef: { name: 'x', parameterNotFoundAction: 'Deny' } });
    const res = await createDeployment(deployment('u1', 1));
    assert.equal(res.status, 422, res.text);
    assert.match(res.body.message, /ValidatingAdmissionPolicy 'unknown-param.example.com' denied request: failed to configure policy: failed to find resource referenced by paramKind: 'example.com\/v1, Kind=Missing'$/);
    const upd = await s.request('PATCH', `${vap}/unknown-param.example.com`, { spec: { failurePolicy: 'Ignore' } });
    assert.equal(upd.status, 200, upd.text);
    assert.equal((await createDeployment(deployment('u2', 1))).status, 201);
  });

  it('applies only in namespaces the namespaceSelector selects, and the binding narrows further', async () => {
    await policy('ns.example.com', {
      matchConstraints: { resourceRules: deploymentRules, namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'dev'] }] } },
      validations: [{ expression: "namespaceObject.metadata.labels['env'] != 'prod' || object.spec.replicas >= 2", message: 'prod needs two replicas' }],
    });
    await binding('ns-binding', 'ns.example.com', { matchResources: { namespaceSelector: { matchLabels: { env: 'prod' } } } });
    assert.equal((await createDeployment(deployment('n1', 1), 'default')).status, 201);
    assert.equal((await createDeployment(deployment('n2', 1), 'dev')).status, 201);
    const res = await createDeployment(deployment('n3', 1), 'prod');
    assert.equal(res.status, 422, res.text);
    assert.match(res.body.message, /prod needs two replicas$/);
  });

  it('skips objects the objectSelector does not select and resources excluded by excludeResourceRules', async () => {
    await policy('objsel.example.com', {
      matchConstraints: { resourceRules: deploymentRules, objectSelector: { matchLabels: { checked: 'true' } } },
      validations: [{ expression: 'false', message: 'checked objects are refused' }],
    });
    await binding('objsel-binding', 'objsel.example.com');
    assert.equal((await createDeployment(deployment('o1', 1))).status, 201);
    assert.equal((await createDeployment(deployment('o2', 1, { checked: 'true' }))).status, 422);
    await policy('exclude.example.com', {
      matchConstraints: { resourceRules: deploymentRules, excludeResourceRules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments'], resourceNames: ['excluded'] }] },
      validations: [{ expression: 'false', message: 'not excluded' }],
    });
    await binding('exclude-binding', 'exclude.example.com');
    assert.equal((await createDeployment(deployment('excluded', 1))).status, 201);
    const res = await createDeployment(deployment('included', 1));
    assert.equal(res.status, 422);
    assert.match(res.body.message, /not excluded$/);
  });

  it('evaluates variables, each visible to the ones after it', async () => {
    await policy('vars.example.com', {
      variables: [
        { name: 'replicas', expression: 'object.spec.replicas' },
        { name: 'limit', expression: "'limit' in object.metadata.labels ? int(object.metadata.labels['limit']) : 4" },
        { name: 'ok', expression: 'variables.replicas <= variables.limit' },
      ],
      validations: [{ expression: 'variables.ok', messageExpression: "'replicas ' + string(variables.replicas) + ' over ' + string(variables.limit)" }],
    });
    await binding('vars-binding', 'vars.example.com');
    assert.equal((await createDeployment(deployment('v1', 4))).status, 201);
    assert.equal((await createDeployment(deployment('v2', 5, { limit: '5' }))).status, 201);
    const res = await createDeployment(deployment('v3', 6, { limit: '5' }));
    assert.equal(res.status, 422, res.text);
    assert.match(res.body.message, /denied request: replicas 6 over 5$/);
  });

  it('turns a runtime error into a denial under Fail and ignores it under Ignore', async () => {
    await policy('error.example.com', { failurePolicy: 'Fail', validations: [{ expression: "object.metadata.labels['missing'] == 'x'" }] });
    await binding('error-binding', 'error.example.com');
    const res = await createDeployment(deployment('e1', 1, { a: 'b' }));
    assert.equal(res.status, 422, res.text);
    assert.match(res.body.message, /denied request: expression 'object.metadata.labels\['missing'\] == 'x'' resulted in error: no such key: missing$/);
    const upd = await s.request('PATCH', `${vap}/error.example.com`, { spec: { failurePolicy: 'Ignore' } });
    assert.equal(upd.status, 200, upd.text);
    assert.equal((await createDeployment(deployment('e2', 1, { a: 'b' }))).status, 201);
  });

  it('refuses a policy whose expressions do not compile, with the compiler message', async () => {
    const res = await s.request('POST', vap, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'compile.example.com' },
      spec: { matchConstraints: { resourceRules: deploymentRules }, validations: [{ expression: 'object.spec.replicas' }, { expression: 'object.spec.(' }] },
    });
    assert.equal(res.status, 422, res.text);
    assert.match(res.body.message, /spec\.validations\[0\]\.expression: Invalid value: "object\.spec\.replicas": must evaluate to bool but got dyn/);
    assert.match(res.body.message, /spec\.validations\[1\]\.expression: Invalid value: "object\.spec\.\(": compilation failed: ERROR: <input>:1:13: /);
  });

  it('skips requests matchConditions exclude', async () => {
    await policy('conditions.example.com', {
      matchConditions: [{ name: 'not-system', expression: "!object.metadata.name.startsWith('system-')" }],
      validations: [{ expression: 'false', message: 'refused' }],
    });
    await binding('conditions-binding', 'conditions.example.com');
    assert.equal((await createDeployment(deployment('system-x', 1))).status, 201);
    assert.equal((await createDeployment(deployment('user-x', 1))).status, 422);
  });

  it('gives a binding without its policy no effect, until the policy exists', async () => {
    await binding('orphan-binding', 'orphan.example.com');
    assert.equal((await createDeployment(deployment('b1', 9))).status, 201);
    await policy('orphan.example.com', { validations: [{ expression: 'object.spec.replicas < 9' }] });
    assert.equal((await createDeployment(deployment('b2', 9))).status, 422);
  });

  it('matches an equivalent version under matchPolicy Equivalent, converting the object, and not under Exact', async () => {
    const hpaRules = [{ apiGroups: ['autoscaling'], apiVersions: ['v2'], operations: ['CREATE'], resources: ['horizontalpodautoscalers'] }];
    await policy('hpa.example.com', {
      matchConstraints: { resourceRules: hpaRules },
      validations: [{ expression: "object.spec.maxReplicas <= 5 && has(object.spec.metrics) == false", messageExpression: "request.requestKind.version + ' as ' + request.kind.version + ': ' + string(object.spec.metrics.size())" }],
    });
    await binding('hpa-binding', 'hpa.example.com');
    const hpa = (name: string) => ({
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name },
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, minReplicas: 1, maxReplicas: 10, targetCPUUtilizationPercentage: 50 },
    });
    const res = await s.request('POST', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers', hpa('h1'));
    assert.equal(res.status, 422, res.text);
    assert.match(res.body.message, /denied request: v1 as v2: 1$/);
    const upd = await s.request('PATCH', `${vap}/hpa.example.com`, { spec: { matchConstraints: { matchPolicy: 'Exact' } } });
    assert.equal(upd.status, 200, upd.text);
    const ok = await s.request('POST', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers', hpa('h2'));
    assert.equal(ok.status, 201, ok.text);
    created.push('/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/h2');
  });

  it('never applies policies to the policy kinds themselves', async () => {
    await create(vap, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'deny-all.example.com' },
      spec: { matchConstraints: { resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], operations: ['*'], resources: ['*'] }] }, validations: [{ expression: 'false' }] },
    });
    await binding('deny-all-binding', 'deny-all.example.com');
    // More policies and bindings can still be written (and deleted in afterEach).
    await policy('another.example.com', { validations: [{ expression: 'true' }] });
    await binding('another-binding', 'another.example.com');
    const res = await s.request('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'blocked' } });
    assert.equal(res.status, 422, res.text);
  });
});

describe('ValidatingAdmissionPolicy authorizer checks under RBAC', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer({ authorizationMode: 'RBAC' });
  });
  after(async () => {
    await s.close();
  });

  it("answers authorizer checks with the server's RBAC decisions for the requesting user", async () => {
    const post = async (path: string, obj: Record<string, unknown>) => {
      const r = await s.request('POST', path, obj);
      assert.equal(r.status, 201, r.text);
    };
    await post(vap, {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: 'authz.example.com' },
      spec: {
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }] },
        validations: [
          { expression: "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('list').allowed()", message: 'only users who may list secrets' },
          { expression: "authorizer.requestResource.check('create').allowed()", message: 'requestResource' },
        ],
      },
    });
    await post(vapb, { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicyBinding', metadata: { name: 'authz-binding' }, spec: { policyName: 'authz.example.com', validationActions: ['Deny'] } });
    // bob may create config maps in default, not list secrets.
    await post('/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles', { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'cm-writer' }, rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create'] }] });
    await post('/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'bob-cm' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'cm-writer' },
      subjects: [{ kind: 'User', name: 'bob', apiGroup: 'rbac.authorization.k8s.io' }],
    });
    const cm = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' } });
    const asBob = await s.request('POST', '/api/v1/namespaces/default/configmaps', cm('bobs'), { 'Impersonate-User': 'bob' });
    assert.equal(asBob.status, 422, asBob.text);
    assert.match(asBob.body.message, /denied request: only users who may list secrets$/);
    const asAdmin = await s.request('POST', '/api/v1/namespaces/default/configmaps', cm('admins'));
    assert.equal(asAdmin.status, 201, asAdmin.text);
  });
});
