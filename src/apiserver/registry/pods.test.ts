import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import { strategyFor } from './strategy.js';
import { podQOSClass, podUpdateForbiddenMessage } from './pods.js';
import { defaultImagePullPolicy } from './pod-spec.js';

const pods = strategyFor('', 'pods');

function pod(extra: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'web', namespace: 'default', uid: 'u1' },
    spec: { containers: [{ name: 'nginx', image: 'nginx:1.25', ports: [{ containerPort: 80 }] }] },
    ...extra,
  };
}

/** A pod as the server would store it after create. */
function created(p = pod()): KubeObject {
  pods.defaults(p);
  pods.prepareForCreate(p);
  return p;
}

describe('pod strategy', () => {
  it('fills the defaults a real cluster prints for a pod', () => {
    const p = created();
    const s = p.spec as Record<string, any>;
    assert.equal(s.restartPolicy, 'Always');
    assert.equal(s.dnsPolicy, 'ClusterFirst');
    assert.equal(s.terminationGracePeriodSeconds, 30);
    assert.equal(s.schedulerName, 'default-scheduler');
    assert.deepEqual(s.securityContext, {});
    assert.equal(s.enableServiceLinks, true);
    assert.equal(s.priority, 0);
    assert.equal(s.preemptionPolicy, 'PreemptLowerPriority');
    assert.equal(s.serviceAccountName, 'default');
    assert.equal(s.serviceAccount, 'default');
    assert.deepEqual(
      s.tolerations.map((t: any) => `${t.key}:${t.effect}:${t.tolerationSeconds}`),
      ['node.kubernetes.io/not-ready:NoExecute:300', 'node.kubernetes.io/unreachable:NoExecute:300'],
    );
    const c = s.containers[0];
    assert.equal(c.imagePullPolicy, 'IfNotPresent');
    assert.equal(c.terminationMessagePath, '/dev/termination-log');
    assert.equal(c.terminationMessagePolicy, 'File');
    assert.deepEqual(c.resources, {});
    assert.equal(c.ports[0].protocol, 'TCP');
    assert.deepEqual(p.status, { phase: 'Pending', qosClass: 'BestEffort' });
    assert.equal(p.metadata?.generation, 1);
  });

  it('chooses Always for latest or untagged images and IfNotPresent otherwise', () => {
    assert.equal(defaultImagePullPolicy('nginx'), 'Always');
    assert.equal(defaultImagePullPolicy('nginx:latest'), 'Always');
    assert.equal(defaultImagePullPolicy('localhost:5000/nginx'), 'Always');
    assert.equal(defaultImagePullPolicy('localhost:5000/nginx:1.2'), 'IfNotPresent');
    assert.equal(defaultImagePullPolicy('nginx@sha256:abc'), 'IfNotPresent');
  });

  it('defaults requests from limits and classifies QoS', () => {
    const g = created(pod({ spec: { containers: [{ name: 'a', image: 'x', resources: { limits: { cpu: '1', memory: '1Gi' } } }] } }));
    const c = (g.spec as any).containers[0];
    assert.deepEqual(c.resources.requests, { cpu: '1', memory: '1Gi' });
    assert.equal((g.status as any).qosClass, 'Guaranteed');
    assert.equal(podQOSClass({ containers: [{ name: 'a', resources: { requests: { cpu: '100m' } } }] }), 'Burstable');
    assert.equal(podQOSClass({ containers: [{ name: 'a', resources: { requests: { cpu: '1' }, limits: { cpu: '2', memory: '1Gi' } } }] }), 'Burstable');
    assert.equal(podQOSClass({ containers: [{ name: 'a', resources: { requests: { cpu: '0' } } }] }), 'BestEffort');
  });

  it('accepts a valid pod and reports Kubernetes messages for broken ones', () => {
    assert.deepEqual(pods.validate(created()), []);
    const bad = created(pod({
      metadata: { name: 'Web_1', namespace: 'default' },
      spec: {
        restartPolicy: 'Sometimes',
        containers: [
          { name: 'a' } as never,
          { name: 'a', image: 'x', resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } },
        ],
      },
    }));
    const msgs = pods.validate(bad).map((e) => e.message);
    assert.ok(msgs.includes('spec.containers[0].image: Required value'), msgs.join('\n'));
    assert.ok(!msgs.some((m) => m.includes('imagePullPolicy')), 'a missing image still defaults imagePullPolicy, as upstream');
    assert.ok(msgs.includes('spec.containers[1].name: Duplicate value: "a"'), msgs.join('\n'));
    assert.ok(msgs.includes('spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'), msgs.join('\n'));
    assert.ok(msgs.includes('spec.containers[1].resources.requests[cpu]: Invalid value: "2": must be less than or equal to cpu limit of 1'), msgs.join('\n'));
    assert.ok(msgs.some((m) => m.startsWith('metadata.name: Invalid value: "Web_1": a lowercase RFC 1123 subdomain')), msgs.join('\n'));
  });

  it('requires at least one container', () => {
    const p = created(pod({ spec: { containers: [] } }));
    assert.ok(pods.validate(p).some((e) => e.message === 'spec.containers: Required value'));
  });

  it('allows image changes on update and bumps the generation', () => {
    const old = created();
    const next = structuredClone(old);
    (next.spec as any).containers[0].image = 'nginx:1.26';
    pods.defaults(next);
    pods.prepareForUpdate(next, old);
    assert.deepEqual(pods.validateUpdate(next, old), []);
    assert.equal(next.metadata?.generation, 2);
  });

  it('forbids changing other pod spec fields with the upstream message', () => {
    const old = created();
    const next = structuredClone(old);
    (next.spec as any).containers[0].ports[0].containerPort = 8080;
    pods.prepareForUpdate(next, old);
    const errs = pods.validateUpdate(next, old);
    assert.equal(errs.length, 1);
    assert.ok(errs[0].message.startsWith(`spec: Forbidden: ${podUpdateForbiddenMessage}`), errs[0].message);
  });

  it('allows adding tolerations but not removing them', () => {
    const old = created();
    const added = structuredClone(old);
    (added.spec as any).tolerations.push({ key: 'k', operator: 'Exists' });
    assert.deepEqual(pods.validateUpdate(added, old), []);
    const removed = structuredClone(old);
    (removed.spec as any).tolerations = [];
    assert.equal(pods.validateUpdate(removed, old).length, 1);
  });

  it('ignores status on main updates and spec on status updates', () => {
    const old = created();
    const main = structuredClone(old);
    (main.status as any).phase = 'Running';
    pods.prepareForUpdate(main, old);
    assert.equal((main.status as any).phase, 'Pending');
    assert.equal(main.metadata?.generation, 1);

    const st = structuredClone(old);
    (st.status as any) = { phase: 'Running' };
    (st.spec as any).nodeName = 'n1';
    st.metadata!.ownerReferences = [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'x' }];
    pods.prepareForStatusUpdate!(st, old);
    assert.equal((st.spec as any).nodeName, undefined);
    assert.equal(st.metadata!.ownerReferences, undefined);
    assert.equal((st.status as any).phase, 'Running');
    assert.equal((st.status as any).qosClass, 'BestEffort', 'qosClass is backfilled from the old status');
  });

  it('gives bound pods their grace period and deletes unbound or finished pods at once', () => {
    const p = created();
    assert.equal(pods.gracePeriod!(p), 0);
    (p.spec as any).nodeName = 'n1';
    assert.equal(pods.gracePeriod!(p), 30);
    assert.equal(pods.gracePeriod!(p, 5), 5);
    assert.equal(pods.gracePeriod!(p, -3), 1);
    (p.status as any).phase = 'Succeeded';
    assert.equal(pods.gracePeriod!(p, 10), 0);
  });

  it('exposes the upstream selectable fields', () => {
    const p = created();
    (p.spec as any).nodeName = 'n1';
    (p.status as any).podIPs = [{ ip: '10.0.0.5' }];
    const f = pods.fields(p);
    assert.equal(f['metadata.name'], 'web');
    assert.equal(f['metadata.namespace'], 'default');
    assert.equal(f['spec.nodeName'], 'n1');
    assert.equal(f['status.phase'], 'Pending');
    assert.equal(f['status.podIP'], '10.0.0.5');
    assert.equal(f['spec.hostNetwork'], 'false');
    assert.deepEqual([...pods.selectableFields].sort(), Object.keys(f).sort());
  });

  it('adds the SchedulingGated condition for gated pods', () => {
    const p = created(pod({ spec: { schedulingGates: [{ name: 'g' }], containers: [{ name: 'a', image: 'x' }] } }));
    assert.equal((p.status as any).conditions[0].reason, 'SchedulingGated');
    const next = structuredClone(p);
    (next.spec as any).schedulingGates = [];
    assert.deepEqual(pods.validateUpdate(next, p), []);
    const more = structuredClone(p);
    (more.spec as any).schedulingGates = [{ name: 'g' }, { name: 'h' }];
    assert.ok(pods.validateUpdate(more, p).length > 0);
  });
});
