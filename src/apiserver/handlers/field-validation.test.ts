import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-server.js';
import { duplicateKeys } from './field-validation.js';

const deploys = '/apis/apps/v1/namespaces/default/deployments';
const deployment = (name: string, extraSpec: Record<string, unknown> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } }, ...extraSpec },
});

describe('duplicateKeys', () => {
  it('reports keys repeated in one object with their paths, in document order', () => {
    assert.deepEqual(duplicateKeys('{"a":1,"b":{"c":[{"d":1,"d":2}],"c":3},"a":"x\\"y"}'), [['b', 'c', 0, 'd'], ['b', 'c'], ['a']]);
    assert.deepEqual(duplicateKeys('{"a":[1,2,{"b":{}}]}'), []);
  });
});

describe('field validation and managedFields on writes', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });

  it('refuses unknown and duplicate fields with fieldValidation=Strict', async () => {
    const body = JSON.stringify(deployment('strict', { foo: 1 })).replace('"replicas":1', '"replicas":1,"replicas":2').replace('"image":"nginx"', '"image":"nginx","bar":true');
    const res = await t.request('POST', `${deploys}?fieldValidation=Strict`, body);
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.reason, 'BadRequest');
    assert.equal(res.body.message, 'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].bar", unknown field "spec.foo", duplicate field "spec.replicas"');
  });

  it('refuses values of the wrong JSON type with Go\'s decoding error, whatever the validation mode', async () => {
    const bad = deployment('typed') as any;
    bad.spec.template.metadata.labels = { ...bad.spec.template.metadata.labels, enabled: true }; // YAML `enabled: y`
    for (const q of ['', '?fieldValidation=Ignore']) {
      const res = await t.request('POST', `${deploys}${q}`, bad);
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.reason, 'BadRequest');
      assert.equal(res.body.message, 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal bool into Go struct field ObjectMeta.spec.template.metadata.labels of type string');
    }
    const port = deployment('typed') as any;
    port.spec.template.spec.containers[0].ports = [{ containerPort: '80' }];
    const res = await t.request('POST', deploys, port);
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32');
    const ok = deployment('typed') as any;
    ok.spec.template.spec.containers[0].resources = { limits: { cpu: 1, memory: '1Gi' } }; // quantities may be numbers
    ok.spec.strategy = { rollingUpdate: { maxSurge: 1, maxUnavailable: '25%' } }; // int-or-string either way
    assert.equal((await t.request('POST', deploys, ok)).status, 201);
  });

  it('warns about unknown fields by default and drops them', async () => {
    const res = await t.request('POST', deploys, deployment('warn', { foo: 1 }));
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.warning, '299 - "unknown field \\"spec.foo\\""');
    assert.equal(res.body.spec.foo, undefined);
  });

  it('ignores unknown fields silently with fieldValidation=Ignore', async () => {
    const res = await t.request('POST', `${deploys}?fieldValidation=Ignore`, deployment('ignore', { foo: 1 }));
    assert.equal(res.status, 201);
    assert.equal(res.headers.warning, undefined);
    assert.equal(res.body.spec.foo, undefined);
  });

  it('rejects an unsupported fieldValidation value', async () => {
    const res = await t.request('POST', `${deploys}?fieldValidation=Loud`, deployment('loud'));
    assert.equal(res.status, 400);
  });

  it('checks the patched object of a strategic merge patch, refusing it as upstream\'s patch Invalid', async () => {
    const res = await t.request('PATCH', `${deploys}/warn?fieldValidation=Strict`, { spec: { template: { spec: { containers: [{ name: 'c', imagee: 'x' }] } } } }, { 'Content-Type': 'application/strategic-merge-patch+json' });
    assert.equal(res.status, 422, res.text);
    assert.equal(res.body.reason, 'Invalid');
    const body = 'Invalid value: "map[spec:map[template:map[spec:map[containers:[map[imagee:x name:c]]]]]]": strict decoding error: unknown field "spec.template.spec.containers[0].imagee"';
    assert.equal(res.body.message, ` "" is invalid: patch: ${body}`);
    assert.deepEqual(res.body.details, { causes: [{ reason: 'FieldValueInvalid', message: body, field: 'patch' }] });
  });

  it('shows the patched object, keys sorted, in the error of a merge patch', async () => {
    const res = await t.request('PATCH', `${deploys}/warn?fieldValidation=Strict`, { spec: { paused: false, foo: '<x>' } }, { 'Content-Type': 'application/merge-patch+json' });
    assert.equal(res.status, 422, res.text);
    const m = /^ "" is invalid: patch: Invalid value: (".*"): strict decoding error: unknown field "spec.foo"$/.exec(res.body.message);
    assert.ok(m, res.body.message);
    const json = JSON.parse(m[1]!) as string;
    assert.match(json, /^\{"apiVersion":"apps\/v1","kind":"Deployment","metadata":\{/);
    assert.ok(json.includes('"foo":"\\u003cx\\u003e"'), 'Go escapes <, > and &');
    const parsed = JSON.parse(json);
    assert.deepEqual(Object.keys(parsed.spec), [...Object.keys(parsed.spec)].sort());
  });

  it('records managedFields for the creating and the patching manager', async () => {
    const created = await t.request('POST', `${deploys}?fieldManager=creator`, deployment('owned'));
    const entry = created.body.metadata.managedFields[0];
    assert.equal(entry.manager, 'creator');
    assert.equal(entry.operation, 'Update');
    assert.ok(entry.fieldsV1['f:spec']['f:replicas']);
    assert.ok(entry.fieldsV1['f:spec']['f:strategy'], 'defaulted fields are owned by the creator');
    const patched = await t.request('PATCH', `${deploys}/owned`, { spec: { replicas: 4 } }, { 'Content-Type': 'application/merge-patch+json', 'User-Agent': 'scaler/v1.0 (linux)' });
    const mf = patched.body.metadata.managedFields;
    assert.deepEqual(mf.map((e: any) => e.manager), ['creator', 'scaler']);
    assert.equal(mf[0].fieldsV1['f:spec']['f:replicas'], undefined);
    assert.deepEqual(mf[1].fieldsV1, { 'f:spec': { 'f:replicas': {} } });
  });

  it('server-side apply conflicts with another manager unless forced', async () => {
    const apply = (body: object, q: string) => t.request('PATCH', `${deploys}/owned?${q}`, JSON.stringify(body), { 'Content-Type': 'application/apply-patch+yaml' });
    const cfg = { ...deployment('owned'), spec: { ...deployment('owned').spec, replicas: 7 } };
    const res = await apply(cfg, 'fieldManager=applier');
    assert.equal(res.status, 409, res.text);
    assert.equal(res.body.message, 'Apply failed with 1 conflict: conflict with "scaler" using apps/v1: .spec.replicas');
    assert.equal(res.body.details.causes[0].field, '.spec.replicas');
    const forced = await apply(cfg, 'fieldManager=applier&force=true');
    assert.equal(forced.status, 200, forced.text);
    assert.equal(forced.body.spec.replicas, 7);
    const managers = forced.body.metadata.managedFields.map((e: any) => `${e.manager}/${e.operation}`);
    assert.ok(managers.includes('applier/Apply'));
    assert.ok(!managers.includes('scaler/Update'), 'the forced apply took the only field scaler owned');
  });

  it('server-side apply creates a missing object and refuses undeclared fields', async () => {
    const res = await t.request('PATCH', `${deploys}/fresh?fieldManager=applier`, JSON.stringify(deployment('fresh')), { 'Content-Type': 'application/apply-patch+yaml' });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.metadata.managedFields[0].operation, 'Apply');
    const bad = await t.request('PATCH', `${deploys}/fresh?fieldManager=applier`, JSON.stringify(deployment('fresh', { foo: 1 })), { 'Content-Type': 'application/apply-patch+yaml' });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, 'failed to create typed patch object (apps/v1, Kind=Deployment): .spec.foo: field not declared in schema');
  });
});

describe('field validation of manifests using fields added after Kubernetes 1.20', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
  });
  after(async () => {
    await t.close();
  });

  const podSpec = (app: string) => ({
    os: { name: 'linux' },
    hostUsers: true,
    schedulingGates: [{ name: 'example.com/gate' }],
    resources: { limits: { cpu: '1' } },
    securityContext: { appArmorProfile: { type: 'RuntimeDefault' }, seccompProfile: { type: 'RuntimeDefault' }, supplementalGroupsPolicy: 'Merge' },
    topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'zone', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app } }, minDomains: 1, matchLabelKeys: ['pod-template-hash'], nodeTaintsPolicy: 'Honor' }],
    affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 1, podAffinityTerm: { topologyKey: 'host', namespaceSelector: {}, matchLabelKeys: ['app'] } }] } },
    initContainers: [{ name: 'sidecar', image: 'busybox', restartPolicy: 'Always', startupProbe: { grpc: { port: 9000 } } }],
    containers: [{
      name: 'app',
      image: 'nginx',
      resizePolicy: [{ resourceName: 'cpu', restartPolicy: 'NotRequired' }],
      lifecycle: { preStop: { sleep: { seconds: 5 } } },
      livenessProbe: { grpc: { port: 8080, service: 'health' }, terminationGracePeriodSeconds: 10 },
      volumeMounts: [{ name: 'data', mountPath: '/data', readOnly: true, recursiveReadOnly: 'IfPossible' }],
    }],
    volumes: [{ name: 'data', image: { reference: 'example.com/data:v1', pullPolicy: 'IfNotPresent' } }],
  });
  const template = (app: string) => ({ metadata: { labels: { app } }, spec: podSpec(app) });

  const manifests: [string, Record<string, unknown>][] = [
    ['/apis/apps/v1/namespaces/default/deployments', {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'modern' },
      spec: { replicas: 1, selector: { matchLabels: { app: 'modern' } }, template: template('modern') },
    }],
    ['/apis/apps/v1/namespaces/default/statefulsets', {
      apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'modern' },
      spec: {
        serviceName: 'modern', replicas: 1, minReadySeconds: 5, ordinals: { start: 3 },
        persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete', whenScaled: 'Retain' },
        updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
        selector: { matchLabels: { app: 'modern' } }, template: template('modern'),
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], volumeAttributesClassName: 'fast', resources: { requests: { storage: '1Gi' } } } }],
      },
    }],
    ['/apis/batch/v1/namespaces/default/jobs', {
      apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'modern' },
      spec: {
        completionMode: 'Indexed', completions: 3, parallelism: 3, backoffLimitPerIndex: 1, maxFailedIndexes: 1,
        podReplacementPolicy: 'Failed', managedBy: 'kubernetes.io/job-controller', suspend: false,
        successPolicy: { rules: [{ succeededIndexes: '0-1', succeededCount: 1 }] },
        podFailurePolicy: { rules: [{ action: 'FailJob', onExitCodes: { containerName: 'app', operator: 'In', values: [42] } }, { action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget', status: 'True' }] }] },
        template: { spec: { ...podSpec('job'), restartPolicy: 'Never' } },
      },
    }],
    ['/apis/batch/v1/namespaces/default/cronjobs', {
      apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'modern' },
      spec: { schedule: '*/5 * * * *', timeZone: 'Etc/UTC', jobTemplate: { spec: { podFailurePolicy: { rules: [{ action: 'Count', onExitCodes: { operator: 'NotIn', values: [0] } }] }, template: { spec: { ...podSpec('cron'), restartPolicy: 'OnFailure' } } } } },
    }],
  ];

  for (const [path, obj] of manifests) {
    it(`accepts a modern ${obj.kind as string} under fieldValidation=Strict and keeps its fields`, async () => {
      const res = await t.request('POST', `${path}?fieldValidation=Strict`, obj);
      assert.equal(res.status, 201, res.text);
      assert.equal(res.headers.warning, undefined);
      const spec = obj.kind === 'CronJob' ? res.body.spec.jobTemplate.spec.template.spec : res.body.spec.template.spec;
      assert.deepEqual(spec.os, { name: 'linux' });
      assert.deepEqual(spec.initContainers[0].restartPolicy, 'Always');
      assert.deepEqual(spec.containers[0].lifecycle.preStop.sleep, { seconds: 5 });
    });
  }

  it('still refuses a misspelled field next to the new ones', async () => {
    const [path, obj] = manifests[2]!;
    const typo = structuredClone(obj) as any;
    typo.metadata.name = 'typo';
    typo.spec.podFailurePolicy.rules[0].onExitCode = typo.spec.podFailurePolicy.rules[0].onExitCodes;
    delete typo.spec.podFailurePolicy.rules[0].onExitCodes;
    typo.spec.template.spec.containers[0].resizePolicys = [];
    const res = await t.request('POST', `${path}?fieldValidation=Strict`, typo);
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.message, 'Job in version "v1" cannot be handled as a Job: strict decoding error: unknown field "spec.podFailurePolicy.rules[0].onExitCode", unknown field "spec.template.spec.containers[0].resizePolicys"');
  });

  it('keeps PodDisruptionBudget status conditions written with the default validation', async () => {
    const pdbs = '/apis/policy/v1/namespaces/default/poddisruptionbudgets';
    const created = await t.request('POST', pdbs, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'pdb' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'x' } }, unhealthyPodEvictionPolicy: 'AlwaysAllow' } });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.spec.unhealthyPodEvictionPolicy, 'AlwaysAllow');
    const condition = { type: 'DisruptionAllowed', status: 'False', reason: 'InsufficientPods', message: '', lastTransitionTime: '2024-01-01T00:00:00Z', observedGeneration: 1 };
    const body = { ...created.body, status: { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1, expectedPods: 0, observedGeneration: 1, conditions: [condition] } };
    const res = await t.request('PUT', `${pdbs}/pdb/status`, body);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.warning, undefined);
    assert.deepEqual(res.body.status.conditions, [condition]);
  });

  it('accepts a CustomResourceDefinition with CEL rules and selectable fields under Strict', async () => {
    const schema = {
      type: 'object',
      properties: { spec: { type: 'object', properties: { min: { type: 'integer' }, max: { type: 'integer' } }, 'x-kubernetes-validations': [{ rule: 'self.min <= self.max', message: 'min above max', reason: 'FieldValueInvalid', fieldPath: '.min' }] } },
    };
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'ranges.example.com' },
      spec: {
        group: 'example.com', scope: 'Namespaced', names: { plural: 'ranges', singular: 'range', kind: 'Range', listKind: 'RangeList' },
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema }, selectableFields: [{ jsonPath: '.spec.min' }] }],
      },
    };
    const res = await t.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions?fieldValidation=Strict', crd);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.spec.versions[0].schema.openAPIV3Schema.properties.spec['x-kubernetes-validations'][0].rule, 'self.min <= self.max');
    assert.deepEqual(res.body.spec.versions[0].selectableFields, [{ jsonPath: '.spec.min' }]);
  });

  it('accepts newer Service, EndpointSlice and Node fields under Strict', async () => {
    const svc = await t.request('POST', '/api/v1/namespaces/default/services?fieldValidation=Strict', {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'modern' },
      spec: { selector: { app: 'modern' }, ports: [{ port: 80 }], trafficDistribution: 'PreferClose', internalTrafficPolicy: 'Local', ipFamilyPolicy: 'SingleStack' },
    });
    assert.equal(svc.status, 201, svc.text);
    const slice = await t.request('POST', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?fieldValidation=Strict', {
      apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'modern-1' }, addressType: 'IPv4',
      endpoints: [{ addresses: ['10.0.0.1'], conditions: { ready: true, serving: true, terminating: false }, nodeName: 'n1', zone: 'a', hints: { forZones: [{ name: 'a' }] } }],
    });
    assert.equal(slice.status, 201, slice.text);
    const node = await t.request('POST', '/api/v1/nodes?fieldValidation=Strict', { apiVersion: 'v1', kind: 'Node', metadata: { name: 'modern' } });
    assert.equal(node.status, 201, node.text);
    const status = { ...node.body, status: { features: { supplementalGroupsPolicy: true }, runtimeHandlers: [{ name: 'runc', features: { recursiveReadOnlyMounts: true, userNamespaces: true } }] } };
    const res = await t.request('PUT', '/api/v1/nodes/modern/status?fieldValidation=Strict', status);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.status.features, { supplementalGroupsPolicy: true });
    assert.equal(res.body.status.runtimeHandlers[0].features.userNamespaces, true);
  });
});
