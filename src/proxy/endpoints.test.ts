import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EndpointsChangeTracker, EndpointsMap } from './endpoints.js';
import { ServiceChangeTracker, ServicePortMap } from './service.js';
import { NODE, service, slice } from './testdata/fixtures.js';

describe('EndpointsChangeTracker', () => {
  it('merges slices per service port, dedups by address, sorts by ip:port and marks local endpoints', () => {
    const t = new EndpointsChangeTracker(NODE);
    assert.equal(t.endpointSliceUpdate(slice('ns', 'svc', [{ ip: '10.0.0.9', node: 'n2' }, { ip: '10.0.0.10', node: NODE }], { name: 'a' }), false), true);
    t.endpointSliceUpdate(slice('ns', 'svc', [{ ip: '10.0.0.9', node: 'n2' }, { ip: '10.0.0.2', node: 'n3' }], { name: 'b' }), false);
    const m = new EndpointsMap();
    assert.deepEqual([...m.applyChanges(t)], ['ns/svc']);
    const eps = m.get('ns/svc:p80')!;
    assert.deepEqual(
      eps.map((e) => [e.str, e.isLocal]),
      [
        ['10.0.0.10:8080', true],
        ['10.0.0.2:8080', false],
        ['10.0.0.9:8080', false],
      ],
    );
  });

  it('a change that is undone before the sync is no change; deleting the last slice removes the endpoints', () => {
    const t = new EndpointsChangeTracker(NODE);
    const m = new EndpointsMap();
    const s1 = slice('ns', 'svc', [{ ip: '10.0.0.1', node: NODE }]);
    t.endpointSliceUpdate(s1, false);
    m.applyChanges(t);
    const s2 = slice('ns', 'svc', [{ ip: '10.0.0.1', node: NODE, ready: false }]);
    assert.equal(t.endpointSliceUpdate(s2, false), true);
    assert.equal(t.endpointSliceUpdate(s1, false), false);
    assert.deepEqual([...m.applyChanges(t)], []);
    // Conditions are tracked: not ready, serving, terminating.
    t.endpointSliceUpdate(slice('ns', 'svc', [{ ip: '10.0.0.1', node: NODE, ready: false, serving: true, terminating: true }]), false);
    m.applyChanges(t);
    assert.deepEqual(
      m.get('ns/svc:p80')!.map((e) => [e.ready, e.serving, e.terminating]),
      [[false, true, true]],
    );
    t.endpointSliceUpdate(s1, true);
    m.applyChanges(t);
    assert.equal(m.has('ns/svc:p80'), false);
  });

  it('ignores slices without the service-name label and non-IPv4 slices', () => {
    const t = new EndpointsChangeTracker(NODE);
    const s = slice('ns', 'svc', [{ ip: '10.0.0.1', node: NODE }]);
    assert.equal(t.endpointSliceUpdate({ ...s, metadata: { ...s.metadata, labels: {} } }, false), false);
    assert.equal(t.endpointSliceUpdate({ ...s, addressType: 'IPv6' }, false), false);
  });
});

describe('ServiceChangeTracker', () => {
  it('tracks each Service from its state before the first change to after the last', () => {
    const t = new ServiceChangeTracker();
    const m = new ServicePortMap();
    const a = service('ns', 'a', { clusterIP: '10.96.0.10' });
    t.update(undefined, a);
    assert.deepEqual([...m.applyChanges(t)], ['ns/a']);
    const b = service('ns', 'a', { clusterIP: '10.96.0.10', sessionAffinity: 'ClientIP' });
    assert.equal(t.update(a, b), true);
    assert.equal(t.update(b, a), false);
    t.update(a, undefined);
    m.applyChanges(t);
    assert.equal(m.size, 0);
  });

  it('reads the proxied fields of each port', () => {
    const t = new ServiceChangeTracker();
    const m = new ServicePortMap();
    t.update(
      undefined,
      service(
        'ns',
        'lb',
        {
          type: 'LoadBalancer',
          clusterIP: '10.96.0.11',
          externalTrafficPolicy: 'Local',
          healthCheckNodePort: 32000,
          externalIPs: ['192.0.2.1', '2001:db8::1'],
          loadBalancerSourceRanges: [' 198.51.100.0/24 '],
          ports: [{ name: 'dns', port: 53, protocol: 'UDP', nodePort: 31053 }],
        },
        { loadBalancer: { ingress: [{ ip: '203.0.113.9' }, { hostname: 'lb.example.com' }] } },
      ),
    );
    m.applyChanges(t);
    const sp = m.get('ns/lb:dns')!;
    assert.equal(sp.protocol, 'UDP');
    assert.equal(sp.nodePort, 31053);
    assert.equal(sp.healthCheckNodePort, 32000);
    assert.equal(sp.externalPolicyLocal, true);
    assert.deepEqual(sp.externalIPs, ['192.0.2.1']);
    assert.deepEqual(sp.loadBalancerSourceRanges, ['198.51.100.0/24']);
    assert.deepEqual(sp.loadBalancerVIPs, ['203.0.113.9']);
  });
});
