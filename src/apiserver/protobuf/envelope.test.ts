import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { decodeKubernetesProtobuf, messageNameFor, readEnvelope } from './envelope.js';
import { schemaFile } from './schema.js';
import { ProtoDecodeError } from './to-json.js';
import { envelope, lf, vf } from './test-encoder.js';

/** Bodies recorded from kubectl v1.32 (`kubectl create ...` against a recording proxy). */
function fixture(name: string): Buffer {
  return readFileSync(join(dirname(schemaFile()), 'testdata', `${name}.bin`));
}

describe('Kubernetes protobuf envelope', () => {
  it('reads apiVersion and kind from the runtime.Unknown envelope', () => {
    const env = readEnvelope(fixture('namespace'));
    assert.equal(env.apiVersion, 'v1');
    assert.equal(env.kind, 'Namespace');
    assert.equal(env.contentEncoding, '');
  });

  it('maps group versions and kinds to protobuf messages', () => {
    assert.equal(messageNameFor('v1', 'Pod'), 'k8s.io.api.core.v1.Pod');
    assert.equal(messageNameFor('apps/v1', 'Deployment'), 'k8s.io.api.apps.v1.Deployment');
    assert.equal(messageNameFor('rbac.authorization.k8s.io/v1', 'Role'), 'k8s.io.api.rbac.v1.Role');
    assert.equal(messageNameFor('autoscaling/v2', 'HorizontalPodAutoscaler'), 'k8s.io.api.autoscaling.v2.HorizontalPodAutoscaler');
    assert.equal(messageNameFor('policy/v1', 'DeleteOptions'), 'k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions');
    assert.equal(messageNameFor('meta.k8s.io/v1', 'DeleteOptions'), 'k8s.io.apimachinery.pkg.apis.meta.v1.DeleteOptions');
    assert.equal(messageNameFor('example.com/v1', 'Widget'), undefined);
  });

  it('rejects bodies without the magic prefix, compressed bodies and kinds without a schema', () => {
    assert.throws(() => decodeKubernetesProtobuf(Buffer.from('{"kind":"Pod"}')), /expected prefix \[107 56 115 0\]/);
    assert.throws(() => decodeKubernetesProtobuf(envelope('v1', 'Pod', [], 'gzip')), /unsupported content encoding/);
    assert.throws(() => decodeKubernetesProtobuf(envelope('example.com/v1', 'Widget', [])), ProtoDecodeError);
    assert.throws(() => decodeKubernetesProtobuf(fixture('deployment').subarray(0, 60)), ProtoDecodeError);
  });

  it('decodes an Eviction with its nested DeleteOptions as kubectl drain sends it', () => {
    const raw = [...lf(1, [...lf(1, 'web-1'), ...lf(3, 'ns')]), ...lf(2, [...vf(1, 0), ...lf(4, 'Background')])];
    assert.deepEqual(decodeKubernetesProtobuf(envelope('policy/v1', 'Eviction', raw)), {
      apiVersion: 'policy/v1',
      kind: 'Eviction',
      metadata: { name: 'web-1', namespace: 'ns' },
      deleteOptions: { gracePeriodSeconds: 0, propagationPolicy: 'Background' },
    });
  });
});

describe('bodies recorded from kubectl create', () => {
  const cases: [string, unknown][] = [
    ['namespace', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fx' } }],
    ['configmap', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'fx' }, data: { empty: '', k: 'v' } }],
    ['secret', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'fx' }, data: { p: Buffer.from('q').toString('base64') } }],
    ['deployment', {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'fx', labels: { app: 'web' } },
      spec: {
        replicas: 3, selector: { matchLabels: { app: 'web' } },
        template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx', ports: [{ containerPort: 8080 }] }] } },
      },
    }],
    ['deployment-zero-replicas', {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'zero', namespace: 'fx', labels: { app: 'zero' } },
      spec: { replicas: 0, selector: { matchLabels: { app: 'zero' } }, template: { metadata: { labels: { app: 'zero' } }, spec: { containers: [{ name: 'nginx', image: 'nginx' }] } } },
    }],
    ['cronjob', {
      apiVersion: 'batch/v1', kind: 'CronJob', metadata: { name: 'cj', namespace: 'fx' },
      spec: {
        schedule: '*/1 * * * *',
        jobTemplate: { metadata: { name: 'cj' }, spec: { template: { spec: { containers: [{ name: 'cj', image: 'busybox', command: ['sleep', '1'] }], restartPolicy: 'OnFailure' } } } },
      },
    }],
    ['resourcequota', { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'q', namespace: 'fx' }, spec: { hard: { pods: '2', 'requests.cpu': '1500m' } } }],
    ['priorityclass', { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'pc2' }, value: -5, description: 'neg', preemptionPolicy: 'PreemptLowerPriority' }],
    ['poddisruptionbudget', { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'pdb', namespace: 'fx' }, spec: { selector: { matchLabels: { app: 'web' } }, maxUnavailable: 0 } }],
    ['ingress', {
      apiVersion: 'networking.k8s.io/v1', kind: 'Ingress', metadata: { name: 'ing', namespace: 'fx' },
      spec: {
        rules: [
          { host: 'foo.com', http: { paths: [{ path: '/bar', pathType: 'Exact', backend: { service: { name: 'svc1', port: { number: 8080 } } } }] } },
          { host: 'x.com', http: { paths: [{ path: '/', pathType: 'Prefix', backend: { service: { name: 'svc2', port: { name: 'http' } } } }] } },
        ],
      },
    }],
    ['service', {
      apiVersion: 'v1', kind: 'Service', metadata: { name: 'np', namespace: 'fx', labels: { app: 'np' } },
      spec: { ports: [{ name: '80-8080', protocol: 'TCP', port: 80, targetPort: 8080 }], selector: { app: 'np' }, type: 'NodePort' },
    }],
    ['rolebinding', {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'rb', namespace: 'fx' },
      subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'u' }],
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
    }],
  ];
  for (const [name, want] of cases) {
    it(`decodes the ${name} body to the object kubectl meant`, () => {
      assert.deepEqual(decodeKubernetesProtobuf(fixture(name)), want);
    });
  }
});

describe('protobuf schema coverage', () => {
  it('has a message for every built-in kind served, its list and its subresources (CRDs excepted)', async () => {
    const { newResourceTable } = await import('../resources.js');
    const missing: string[] = [];
    const av = (g: string, v: string) => (g ? `${g}/${v}` : v);
    for (const r of newResourceTable().all()) {
      if (r.group === 'apiextensions.k8s.io') continue; // kubectl, the schema's source, does not link apiextensions' protos; CRDs are JSON
      if (!messageNameFor(av(r.group, r.version), r.kind)) missing.push(`${av(r.group, r.version)} ${r.kind}`);
      if (!r.virtual && !messageNameFor(av(r.group, r.version), r.listKind)) missing.push(`${av(r.group, r.version)} ${r.listKind}`);
      for (const s of r.subresources.values()) if (!messageNameFor(av(s.group, s.version), s.kind)) missing.push(`${av(s.group, s.version)} ${s.kind} (${r.resource}/${s.name})`);
    }
    assert.deepEqual(missing, []);
  });
});
