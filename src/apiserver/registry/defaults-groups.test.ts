/**
 * The defaults of the built-in groups other than core, pinned against
 * pkg/apis/<group>/<version>/defaults.go (and apiextensions' and
 * kube-aggregator's): an object created with the minimum fields, as
 * kube-apiserver stores it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import { strategyFor } from './strategy.js';

type Any = Record<string, any>;

function defaulted(group: string, resource: string, obj: Any, apiVersion?: string): Any {
  const out = structuredClone(obj) as KubeObject;
  if (apiVersion) out.apiVersion = apiVersion;
  strategyFor(group, resource).defaults(out);
  return out as Any;
}

const template = { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'c', image: 'x:1' }] } };
const selector = { matchLabels: { app: 'a' } };

describe('apps/v1 defaults', () => {
  it('defaults deployments', () => {
    const d = defaulted('apps', 'deployments', { spec: { selector, template } });
    assert.equal(d.spec.replicas, 1);
    assert.deepEqual(d.spec.strategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: '25%', maxSurge: '25%' } });
    assert.equal(d.spec.revisionHistoryLimit, 10);
    assert.equal(d.spec.progressDeadlineSeconds, 600);
    assert.equal(d.spec.template.spec.restartPolicy, 'Always');
    const recreate = defaulted('apps', 'deployments', { spec: { selector, template, strategy: { type: 'Recreate' } } });
    assert.deepEqual(recreate.spec.strategy, { type: 'Recreate' });
    assert.equal(defaulted('apps', 'deployments', { spec: { strategy: { type: '' } } }).spec.strategy.type, 'RollingUpdate');
  });

  it('defaults replica sets', () => {
    const rs = defaulted('apps', 'replicasets', { spec: { selector, template } });
    assert.equal(rs.spec.replicas, 1);
    assert.equal(rs.spec.template.spec.dnsPolicy, 'ClusterFirst');
  });

  it('defaults stateful sets, their update strategy and claim templates', () => {
    const sts = defaulted('apps', 'statefulsets', {
      spec: { selector, template, serviceName: 's', volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'] } }] },
    });
    assert.equal(sts.spec.podManagementPolicy, 'OrderedReady');
    assert.deepEqual(sts.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { partition: 0 } });
    assert.deepEqual(sts.spec.persistentVolumeClaimRetentionPolicy, { whenDeleted: 'Retain', whenScaled: 'Retain' });
    assert.equal(sts.spec.replicas, 1);
    assert.equal(sts.spec.revisionHistoryLimit, 10);
    assert.deepEqual(sts.spec.volumeClaimTemplates[0], { metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], volumeMode: 'Filesystem' }, status: { phase: 'Pending' } });
    // A given RollingUpdate type gets no rollingUpdate block; OnDelete none either.
    assert.deepEqual(defaulted('apps', 'statefulsets', { spec: { updateStrategy: { type: 'RollingUpdate' } } }).spec.updateStrategy, { type: 'RollingUpdate' });
    assert.deepEqual(
      defaulted('apps', 'statefulsets', { spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2 } } } }).spec.updateStrategy,
      { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 2, partition: 0 } },
    );
    assert.deepEqual(defaulted('apps', 'statefulsets', { spec: { updateStrategy: { type: 'OnDelete' } } }).spec.updateStrategy, { type: 'OnDelete' });
  });

  it('defaults daemon sets', () => {
    const ds = defaulted('apps', 'daemonsets', { spec: { selector, template } });
    assert.deepEqual(ds.spec.updateStrategy, { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1, maxSurge: 0 } });
    assert.equal(ds.spec.revisionHistoryLimit, 10);
    assert.deepEqual(defaulted('apps', 'daemonsets', { spec: { updateStrategy: { type: 'OnDelete' } } }).spec.updateStrategy, { type: 'OnDelete' });
  });

  it('leaves controller revisions alone', () => {
    const cr = { metadata: { name: 'r' }, revision: 1, data: {} };
    assert.deepEqual(defaulted('apps', 'controllerrevisions', cr), cr);
  });
});

describe('batch/v1 defaults', () => {
  it('defaults jobs', () => {
    const job = defaulted('batch', 'jobs', { metadata: { name: 'j' }, spec: { template: { metadata: { labels: { app: 'a' } }, spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x:1' }] } } } });
    assert.deepEqual(job.metadata.labels, { app: 'a' });
    const { template: t, ...rest } = job.spec;
    assert.deepEqual(rest, { completions: 1, parallelism: 1, backoffLimit: 6, completionMode: 'NonIndexed', suspend: false, podReplacementPolicy: 'TerminatingOrFailed' });
    assert.equal(t.spec.terminationGracePeriodSeconds, 30);
    const indexed = defaulted('batch', 'jobs', {
      spec: { completions: 5, backoffLimitPerIndex: 1, podFailurePolicy: { rules: [{ action: 'Ignore', onPodConditions: [{ type: 'DisruptionTarget' }] }] } },
    });
    assert.equal(indexed.spec.parallelism, 1);
    assert.equal(indexed.spec.backoffLimit, 2147483647);
    assert.equal(indexed.spec.podReplacementPolicy, 'Failed');
    assert.deepEqual(indexed.spec.podFailurePolicy.rules[0].onPodConditions, [{ type: 'DisruptionTarget', status: 'True' }]);
  });

  it('defaults cron jobs but not the job spec of their template', () => {
    const cj = defaulted('batch', 'cronjobs', { spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'x:1' }] } } } } } });
    const { jobTemplate, ...rest } = cj.spec;
    assert.deepEqual(rest, { schedule: '* * * * *', concurrencyPolicy: 'Allow', suspend: false, successfulJobsHistoryLimit: 3, failedJobsHistoryLimit: 1 });
    assert.equal(jobTemplate.spec.completions, undefined);
    assert.equal(jobTemplate.spec.template.spec.restartPolicy, 'Always');
  });
});

describe('autoscaling defaults', () => {
  const spec = { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, maxReplicas: 5 };

  it('defaults only minReplicas in autoscaling/v1', () => {
    const hpa = defaulted('autoscaling', 'horizontalpodautoscalers', { spec }, 'autoscaling/v1');
    assert.deepEqual(hpa.spec, { ...spec, minReplicas: 1 });
  });

  it('defaults metrics and behavior in autoscaling/v2', () => {
    const hpa = defaulted('autoscaling', 'horizontalpodautoscalers', { spec }, 'autoscaling/v2');
    assert.deepEqual(hpa.spec, { ...spec, minReplicas: 1, metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }] });
    const withBehavior = defaulted('autoscaling', 'horizontalpodautoscalers', { spec: { ...spec, behavior: { scaleDown: { selectPolicy: 'Min' } } } }, 'autoscaling/v2');
    assert.deepEqual(withBehavior.spec.behavior, {
      scaleUp: {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      },
      scaleDown: { selectPolicy: 'Min', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] },
    });
  });
});

describe('rbac.authorization.k8s.io/v1 defaults', () => {
  it('defaults roleRef.apiGroup and subject api groups of bindings', () => {
    for (const resource of ['rolebindings', 'clusterrolebindings']) {
      const rb = defaulted('rbac.authorization.k8s.io', resource, {
        roleRef: { kind: 'ClusterRole', name: 'view' },
        subjects: [
          { kind: 'ServiceAccount', name: 'default', namespace: 'd' },
          { kind: 'User', name: 'alice', apiGroup: '' },
          { kind: 'Group', name: 'devs' },
          { kind: 'Robot', name: 'r' },
        ],
      });
      assert.deepEqual(rb.roleRef, { kind: 'ClusterRole', name: 'view', apiGroup: 'rbac.authorization.k8s.io' }, resource);
      assert.deepEqual(
        rb.subjects.map((s: Any) => s.apiGroup),
        ['', 'rbac.authorization.k8s.io', 'rbac.authorization.k8s.io', undefined],
        resource,
      );
    }
    const empty = defaulted('rbac.authorization.k8s.io', 'rolebindings', { roleRef: { apiGroup: '', kind: 'Role', name: 'r' } });
    assert.equal(empty.roleRef.apiGroup, 'rbac.authorization.k8s.io');
  });

  it('accepts a role binding created without roleRef.apiGroup', () => {
    const s = strategyFor('rbac.authorization.k8s.io', 'rolebindings');
    const rb = { metadata: { name: 'rb', namespace: 'd' }, roleRef: { kind: 'Role', name: 'r' }, subjects: [{ kind: 'User', name: 'alice' }] } as KubeObject;
    s.defaults(rb);
    assert.deepEqual(s.validate(rb), []);
  });
});

describe('storage.k8s.io/v1 defaults', () => {
  it('defaults storage classes, CSI drivers and inline volume specs of attachments', () => {
    const sc = defaulted('storage.k8s.io', 'storageclasses', { provisioner: 'p' });
    assert.deepEqual(sc, { provisioner: 'p', reclaimPolicy: 'Delete', volumeBindingMode: 'Immediate' });
    const driver = defaulted('storage.k8s.io', 'csidrivers', { spec: { volumeLifecycleModes: [] } });
    assert.deepEqual(driver.spec, {
      attachRequired: true,
      podInfoOnMount: false,
      storageCapacity: false,
      fsGroupPolicy: 'ReadWriteOnceWithFSType',
      requiresRepublish: false,
      volumeLifecycleModes: ['Persistent'],
      seLinuxMount: false,
    });
    // An inline volume spec gets its types' defaults only (not SetDefaults_PersistentVolume's).
    const va = defaulted('storage.k8s.io', 'volumeattachments', { spec: { attacher: 'a', nodeName: 'n', source: { inlineVolumeSpec: { hostPath: { path: '/d' }, capacity: { storage: '0.5m' } } } } });
    assert.deepEqual(va.spec.source.inlineVolumeSpec, { hostPath: { path: '/d', type: '' }, capacity: { storage: '1m' } });
    const csinode = { spec: { drivers: [] } };
    assert.deepEqual(defaulted('storage.k8s.io', 'csinodes', csinode), csinode);
  });
});

describe('networking.k8s.io/v1 defaults', () => {
  it('defaults network policies, ingress classes and leaves ingresses alone', () => {
    const np = defaulted('networking.k8s.io', 'networkpolicies', { spec: { podSelector: {}, ingress: [{ ports: [{ port: 80 }] }] } });
    assert.deepEqual(np.spec, { podSelector: {}, ingress: [{ ports: [{ port: 80, protocol: 'TCP' }] }], policyTypes: ['Ingress'] });
    const egress = defaulted('networking.k8s.io', 'networkpolicies', { spec: { podSelector: {}, egress: [{}] } });
    assert.deepEqual(egress.spec.policyTypes, ['Ingress', 'Egress']);
    const ic = defaulted('networking.k8s.io', 'ingressclasses', { spec: { controller: 'c', parameters: { kind: 'K', name: 'n' } } });
    assert.deepEqual(ic.spec.parameters, { kind: 'K', name: 'n', scope: 'Cluster' });
    const ing = { spec: { rules: [{ http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 's', port: { number: 80 } } } }] } }] } };
    assert.deepEqual(defaulted('networking.k8s.io', 'ingresses', ing), ing);
  });
});

describe('smaller groups', () => {
  it('defaults priority classes and endpoint slice ports', () => {
    assert.equal(defaulted('scheduling.k8s.io', 'priorityclasses', { value: 10 }).preemptionPolicy, 'PreemptLowerPriority');
    const slice = defaulted('discovery.k8s.io', 'endpointslices', { addressType: 'IPv4', endpoints: [], ports: [{ port: 80 }] });
    assert.deepEqual(slice.ports, [{ port: 80, name: '', protocol: 'TCP' }]);
  });

  it('leaves the kinds without defaults alone', () => {
    const cases: [string, string, Any][] = [
      ['policy', 'poddisruptionbudgets', { spec: { minAvailable: 1, selector } }],
      ['coordination.k8s.io', 'leases', { spec: { holderIdentity: 'h' } }],
      ['certificates.k8s.io', 'certificatesigningrequests', { spec: { request: 'x', signerName: 's' } }],
      ['node.k8s.io', 'runtimeclasses', { handler: 'runc' }],
      ['events.k8s.io', 'events', { eventTime: '2024-01-01T00:00:00.000000Z', action: 'a' }],
    ];
    for (const [group, resource, obj] of cases) assert.deepEqual(defaulted(group, resource, obj), obj, `${resource}.${group}`);
  });
});

describe('admissionregistration.k8s.io/v1 defaults', () => {
  const rules = [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }];
  const clientConfig = { service: { namespace: 'ns', name: 'wh' } };
  const base = { name: 'w.example.com', clientConfig, rules, sideEffects: 'None', admissionReviewVersions: ['v1'] };
  const expected = {
    ...base,
    clientConfig: { service: { namespace: 'ns', name: 'wh', port: 443 } },
    rules: [{ ...rules[0], scope: '*' }],
    failurePolicy: 'Fail',
    matchPolicy: 'Equivalent',
    namespaceSelector: {},
    objectSelector: {},
    timeoutSeconds: 10,
  };

  it('defaults validating and mutating webhooks', () => {
    const v = defaulted('admissionregistration.k8s.io', 'validatingwebhookconfigurations', { webhooks: [base] });
    assert.deepEqual(v.webhooks, [expected]);
    const m = defaulted('admissionregistration.k8s.io', 'mutatingwebhookconfigurations', { webhooks: [base] });
    assert.deepEqual(m.webhooks, [{ ...expected, reinvocationPolicy: 'Never' }]);
    // v1 has no default for sideEffects or admissionReviewVersions.
    const bare = defaulted('admissionregistration.k8s.io', 'validatingwebhookconfigurations', { webhooks: [{ name: 'w', clientConfig: { url: 'https://x' } }] });
    assert.equal(bare.webhooks[0].sideEffects, undefined);
    assert.equal(bare.webhooks[0].admissionReviewVersions, undefined);
  });

  it('bumps the generation of webhook configurations when the webhooks change', () => {
    const s = strategyFor('admissionregistration.k8s.io', 'validatingwebhookconfigurations');
    const old = { metadata: { name: 'c', generation: 1 }, webhooks: [expected] } as KubeObject;
    const next = { metadata: { name: 'c', labels: { a: 'b' } }, webhooks: [expected] } as KubeObject;
    s.prepareForUpdate(next, old);
    assert.equal(next.metadata?.generation, 1);
    const changed = { metadata: { name: 'c' }, webhooks: [{ ...expected, timeoutSeconds: 5 }] } as KubeObject;
    s.prepareForUpdate(changed, old);
    assert.equal(changed.metadata?.generation, 2);
  });

  it('defaults validating admission policies and their bindings', () => {
    const vap = defaulted('admissionregistration.k8s.io', 'validatingadmissionpolicies', {
      spec: { matchConstraints: { resourceRules: rules, excludeResourceRules: rules }, validations: [{ expression: 'true' }] },
    });
    assert.deepEqual(vap.spec, {
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: [{ ...rules[0], scope: '*' }],
        excludeResourceRules: [{ ...rules[0], scope: '*' }],
        matchPolicy: 'Equivalent',
        namespaceSelector: {},
        objectSelector: {},
      },
      validations: [{ expression: 'true' }],
    });
    const binding = defaulted('admissionregistration.k8s.io', 'validatingadmissionpolicybindings', {
      spec: { policyName: 'p', validationActions: ['Deny'], paramRef: { name: 'x' }, matchResources: {} },
    });
    assert.deepEqual(binding.spec, {
      policyName: 'p',
      validationActions: ['Deny'],
      paramRef: { name: 'x', parameterNotFoundAction: 'Deny' },
      matchResources: { matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {} },
    });
  });
});

describe('flowcontrol.apiserver.k8s.io/v1 defaults', () => {
  it('defaults flow schemas and priority levels', () => {
    const fs = defaulted('flowcontrol.apiserver.k8s.io', 'flowschemas', { spec: { priorityLevelConfiguration: { name: 'p' } } });
    assert.deepEqual(fs.spec, { priorityLevelConfiguration: { name: 'p' }, matchingPrecedence: 1000 });
    const limited = defaulted('flowcontrol.apiserver.k8s.io', 'prioritylevelconfigurations', { spec: { type: 'Limited', limited: { limitResponse: { type: 'Queue', queuing: {} } } } });
    assert.deepEqual(limited.spec.limited, {
      nominalConcurrencyShares: 30,
      lendablePercent: 0,
      limitResponse: { type: 'Queue', queuing: { handSize: 8, queues: 64, queueLengthLimit: 50 } },
    });
    const zero = defaulted('flowcontrol.apiserver.k8s.io', 'prioritylevelconfigurations', { spec: { type: 'Limited', limited: { nominalConcurrencyShares: 0, limitResponse: { type: 'Reject' } } } });
    assert.equal(zero.spec.limited.nominalConcurrencyShares, 0, 'v1 keeps an explicit zero');
    const exempt = defaulted('flowcontrol.apiserver.k8s.io', 'prioritylevelconfigurations', { spec: { type: 'Exempt', exempt: {} } });
    assert.deepEqual(exempt.spec.exempt, { nominalConcurrencyShares: 0, lendablePercent: 0 });
  });
});

describe('apiextensions.k8s.io/v1 and apiregistration.k8s.io/v1 defaults', () => {
  it('defaults custom resource definitions', () => {
    const crd = defaulted('apiextensions.k8s.io', 'customresourcedefinitions', {
      spec: { group: 'example.com', scope: 'Namespaced', names: { plural: 'foos', kind: 'Foo' }, versions: [{ name: 'v1', served: true, storage: true }] },
    });
    assert.deepEqual(crd.spec.names, { plural: 'foos', kind: 'Foo', singular: 'foo', listKind: 'FooList' });
    assert.deepEqual(crd.spec.conversion, { strategy: 'None' });
    assert.deepEqual(crd.status.storedVersions, ['v1']);
    const webhook = defaulted('apiextensions.k8s.io', 'customresourcedefinitions', {
      spec: { names: { kind: 'Foo' }, conversion: { strategy: 'Webhook', webhook: { clientConfig: { service: { namespace: 'n', name: 's' } }, conversionReviewVersions: ['v1'] } } },
    });
    assert.deepEqual(webhook.spec.conversion.webhook.clientConfig.service, { namespace: 'n', name: 's', port: 443 });
  });

  it('defaults the service port of API services', () => {
    const svc = defaulted('apiregistration.k8s.io', 'apiservices', { spec: { group: 'wardle.example.com', version: 'v1alpha1', service: { namespace: 'n', name: 's' }, groupPriorityMinimum: 2000, versionPriority: 200 } });
    assert.deepEqual(svc.spec.service, { namespace: 'n', name: 's', port: 443 });
  });
});
