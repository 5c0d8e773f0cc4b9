import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decodeNullsOf, goStructOf, normalizeAsGo, stringifyAsGo } from './go-json.js';

const norm = (obj: Record<string, unknown>) => {
  const c = structuredClone(obj);
  assert.equal(normalizeAsGo(c), true);
  return c;
};

describe('objects as Go writes them', () => {
  it('finds the Go struct of built-in kinds by apiVersion and kind, and none for custom resources', () => {
    assert.equal(goStructOf('v1', 'Pod'), 'io.k8s.api.core.v1.Pod');
    assert.equal(goStructOf('apps/v1', 'StatefulSet'), 'io.k8s.api.apps.v1.StatefulSet');
    assert.equal(goStructOf('example.com/v1', 'Widget'), undefined);
    const cr = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { labels: {} }, spec: { items: [] } };
    assert.equal(normalizeAsGo(cr), false);
    assert.deepEqual(cr.metadata.labels, {});
  });

  it('drops empty omitempty metadata lists and maps (ownerReferences: [] after the last owner is released)', () => {
    const pod = norm({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', ownerReferences: [], finalizers: [], labels: {}, annotations: {}, generateName: '' }, spec: { containers: [{ name: 'c', image: 'i' }] } });
    assert.deepEqual(pod.metadata, { name: 'p', creationTimestamp: null });
  });

  it('writes non-omitempty counters even at zero (StatefulSet, DaemonSet and ReplicaSet status)', () => {
    const sts = norm({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 's' }, spec: { replicas: 0 }, status: { readyReplicas: 0, currentRevision: '' } });
    assert.deepEqual(sts.status, { replicas: 0, availableReplicas: 0 });
    assert.equal((sts.spec as { replicas: number }).replicas, 0, 'a pointer keeps its zero');
    const ds = norm({ apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'd' }, spec: {}, status: {} });
    assert.deepEqual(ds.status, { currentNumberScheduled: 0, numberMisscheduled: 0, desiredNumberScheduled: 0, numberReady: 0 });
    const rs = norm({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'r' }, spec: { replicas: 0 }, status: { fullyLabeledReplicas: 0 } });
    assert.deepEqual(rs.status, { replicas: 0 });
  });

  it('writes an absent struct as {} and an absent non-omitempty list as null', () => {
    const svc = norm({ apiVersion: 'v1', kind: 'Service', metadata: { name: 's' }, spec: { ports: [{ port: 80, nodePort: 0 }] } });
    assert.deepEqual(svc.status, { loadBalancer: {} });
    assert.deepEqual((svc.spec as { ports: unknown[] }).ports, [{ port: 80, targetPort: 0 }]);
    const es = norm({ apiVersion: 'discovery.k8s.io/v1', kind: 'EndpointSlice', metadata: { name: 'e' }, addressType: 'IPv4' });
    assert.equal(es.endpoints, null);
    assert.equal(es.ports, null);
    const sent = norm({ apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'r' }, rules: [] });
    assert.equal(sent.rules, null, 'an empty list reads back as nil after protobuf storage');
  });

  it('writes a zero metav1.Time as null, template creationTimestamp included (as Kubernetes up to 1.33)', () => {
    const pod = norm({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p' },
      spec: { containers: [] },
      status: { conditions: [{ type: 'Ready', status: 'True' }] },
    });
    assert.deepEqual((pod.status as { conditions: unknown[] }).conditions, [{ type: 'Ready', status: 'True', lastProbeTime: null, lastTransitionTime: null }]);
    const d = norm({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' }, spec: { template: { metadata: { creationTimestamp: null } } } });
    assert.deepEqual((d.spec as { template: { metadata: object } }).template.metadata, { creationTimestamp: null });
  });

  it('keeps fields the Go type does not know, and nested pointers as given', () => {
    const job = norm({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j' }, spec: { parallelism: 0, suspend: false, extra: { a: [] } } });
    const spec = job.spec as Record<string, unknown>;
    assert.equal(spec.parallelism, 0);
    assert.equal(spec.suspend, false);
    assert.deepEqual(spec.extra, { a: [] });
    assert.ok(!('completions' in spec), 'a nil pointer with omitempty is left out');
  });

  it('normalizes values inside maps and lists of structs', () => {
    const cm = norm({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i', env: [], ports: [{ containerPort: 80, hostPort: 0, name: '' }] }] } });
    const c = (cm.spec as { containers: Array<Record<string, unknown>> }).containers[0]!;
    assert.ok(!('env' in c));
    assert.deepEqual(c.ports, [{ containerPort: 80 }]);
    assert.deepEqual(c.resources, {});
  });

  it("escapes <, >, & and line separators in strings as Go's encoding/json does", () => {
    const text = stringifyAsGo({ command: ['sh', '-c', 'a && b > c < d'], note: 'x\u2028y' });
    assert.equal(text, '{"command":["sh","-c","a \\u0026\\u0026 b \\u003e c \\u003c d"],"note":"x\\u2028y"}');
    assert.deepEqual(JSON.parse(text), { command: ['sh', '-c', 'a && b > c < d'], note: 'x\u2028y' });
    assert.equal(stringifyAsGo({ a: 'plain' }), '{"a":"plain"}');
  });
});

describe('nulls as Go decodes them', () => {
  const decoded = (obj: Record<string, unknown>) => {
    const c = structuredClone(obj);
    assert.equal(decodeNullsOf(c, c.apiVersion as string, c.kind as string), true);
    return c;
  };

  it('turns null list items and map values into the zero value of their Go type', () => {
    const pod = decoded({
      apiVersion: 'v1', kind: 'Pod',
      metadata: { finalizers: [null, 'a'], labels: { x: null } },
      spec: { containers: [null, { name: 'c', ports: [null], resources: { limits: { cpu: null } } }], nodeSelector: { d: null } },
    });
    assert.deepEqual(pod.metadata, { finalizers: ['', 'a'], labels: { x: '' } });
    assert.deepEqual(pod.spec, { containers: [{}, { name: 'c', ports: [{}], resources: { limits: { cpu: '0' } } }], nodeSelector: { d: '' } });
  });

  it('gives a null field the form of its zero value: left out when omitted, kept for a nil pointer or slice, "" for a plain string', () => {
    const d = decoded({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: null, creationTimestamp: null }, spec: { replicas: null, selector: null, template: null, strategy: { type: null } } });
    assert.deepEqual(d.metadata, { creationTimestamp: null }, 'name is omitempty; a zero Time writes null');
    assert.deepEqual(d.spec, { selector: null, strategy: {} }, 'replicas is an omitempty pointer, selector a plain one, template a struct');
    const ev = decoded({ apiVersion: 'v1', kind: 'Event', metadata: {}, involvedObject: null, reason: null, count: null });
    assert.deepEqual(ev, { apiVersion: 'v1', kind: 'Event', metadata: {} });
  });

  it('leaves values of the wrong type and kinds it does not know alone', () => {
    const cm = decoded({ apiVersion: 'v1', kind: 'ConfigMap', data: [null], metadata: { labels: 'x' } });
    assert.deepEqual(cm, { apiVersion: 'v1', kind: 'ConfigMap', data: [null], metadata: { labels: 'x' } });
    assert.equal(decodeNullsOf({ a: null }, 'example.com/v1', 'Widget'), false);
  });
});
