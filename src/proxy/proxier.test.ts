import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../util/clock/clock.js';
import { servicePortEndpointChain, servicePortPolicyClusterChain } from './chains.js';
import { BoundedFrequencyRunner, Proxier, renderSections, type ProxierOptions } from './proxier.js';
import { diffSections } from './render.js';
import { assertGolden } from './testdata/golden.js';
import { NODE, node, scenarios, service, slice } from './testdata/fixtures.js';

function newProxier(names: string[], opts: Partial<ProxierOptions> = {}): Proxier {
  const p = new Proxier({ mode: 'iptables', nodeName: NODE, clusterCIDR: '10.244.0.0/16', ...opts });
  p.onNodeUpdate(node());
  for (const n of names) {
    const sc = scenarios[n]!;
    p.onServiceAdd(sc.service);
    for (const s of sc.slices) p.onEndpointSliceAdd(s);
  }
  p.onServicesSynced();
  p.onEndpointSlicesSynced();
  return p;
}

/** Checks kube-proxy's own invariants on iptables output (checkIPTablesRuleJumps): every jump and every filled chain is declared, no declared per-service chain is unused. */
function checkJumps(text: string): void {
  const builtinTargets = new Set(['ACCEPT', 'REJECT', 'DROP', 'MARK', 'RETURN', 'DNAT', 'SNAT', 'MASQUERADE']);
  for (const table of text.split(/^\*/m).slice(1)) {
    const lines = table.split('\n');
    const created = new Set(lines.filter((l) => l.startsWith(':')).map((l) => l.slice(1).split(' ')[0]!));
    const filled = new Set(lines.filter((l) => l.startsWith('-A ')).map((l) => l.split(' ')[1]!));
    const jumped = new Set(lines.flatMap((l) => [...l.matchAll(/-j (\S+)/g)].map((m) => m[1]!)).filter((j) => !builtinTargets.has(j)));
    for (const j of jumped) assert.ok(created.has(j), `jump to undeclared chain ${j}`);
    for (const f of filled) assert.ok(created.has(f), `rules for undeclared chain ${f}`);
    // Top-level chains may be empty (kube-proxy links them from the built-in chains regardless); per-service chains may not.
    for (const j of jumped) if (/^KUBE-(SVC|SVL|EXT|FW|SEP)-/.test(j)) assert.ok(filled.has(j), `jump to empty chain ${j}`);
    for (const c of created) if (/^KUBE-(SVC|SVL|EXT|FW|SEP)-/.test(c)) assert.ok(jumped.has(c), `unused chain ${c}`);
  }
}

describe('iptables mode', () => {
  for (const name of Object.keys(scenarios)) {
    it(`golden: ${name}`, () => {
      const r = newProxier([name]).syncProxyRules();
      const text = renderSections(r.sections);
      checkJumps(text);
      assertGolden(`iptables-${name}.golden`, text);
    });
  }

  it('ClusterIP: three endpoints with 1/3 and 1/2 probabilities, masquerade of off-cluster traffic', () => {
    const text = renderSections(newProxier(['clusterip-3-endpoints']).syncProxyRules().sections);
    const svc = servicePortPolicyClusterChain('ns1/svc1:p80', 'tcp');
    assert.match(text, new RegExp(`-A KUBE-SERVICES -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j ${svc}`));
    assert.match(text, new RegExp(`-A ${svc} .* ! -s 10.244.0.0/16 -j KUBE-MARK-MASQ`));
    const sep = servicePortEndpointChain('ns1/svc1:p80', 'tcp', '10.244.1.5:8080');
    assert.ok(text.includes(`-A ${svc} -m comment --comment "ns1/svc1:p80 -> 10.244.1.5:8080" -m statistic --mode random --probability 0.3333333333 -j ${sep}`));
    assert.ok(text.includes('--probability 0.5000000000'));
    assert.ok(text.includes(`-A ${sep} -m comment --comment ns1/svc1:p80 -m tcp -p tcp -j DNAT --to-destination 10.244.1.5:8080`));
  });

  it('no endpoints: REJECT in filter, nothing in nat', () => {
    const text = renderSections(newProxier(['no-endpoints']).syncProxyRules().sections);
    assert.ok(text.includes('-A KUBE-SERVICES -m comment --comment "ns7/svc7:p80 has no endpoints" -m tcp -p tcp -d 172.30.0.47 --dport 80 -j REJECT'));
    assert.ok(text.includes('-A KUBE-EXTERNAL-SERVICES -m comment --comment "ns7/svc7:p80 has no endpoints" -m tcp -p tcp -d 192.168.99.1 --dport 80 -j REJECT'));
    assert.doesNotMatch(text, /KUBE-SVC-|KUBE-SEP-/);
  });

  it('externalTrafficPolicy Local: KUBE-SVL has only the ready local endpoint; the terminating one is unused', () => {
    const text = renderSections(newProxier(['external-traffic-policy-local']).syncProxyRules().sections);
    assert.match(text, /-A KUBE-SVL-\S+ -m comment --comment "ns5\/svc5:p80 -> 10.244.1.11:8080" -j KUBE-SEP-/);
    assert.doesNotMatch(text, /10\.244\.1\.13/);
    assert.ok(text.includes('-A KUBE-NODEPORTS -m comment --comment "ns5/svc5:p80 health check node port" -m tcp -p tcp --dport 30055 -j ACCEPT'));
  });

  it('only terminating endpoints: the serving-terminating local one is used for Local policy', () => {
    const text = renderSections(newProxier(['terminating-endpoints']).syncProxyRules().sections);
    assert.match(text, /-A KUBE-SVL-\S+ -m comment --comment "ns8\/svc8:p80 -> 10.244.1.15:8080" -j KUBE-SEP-/);
    assert.doesNotMatch(text, /10\.244\.2\.16/);
  });

  it('a change to one Service recomputes only its chains', () => {
    const p = newProxier(Object.keys(scenarios));
    const first = p.syncProxyRules();
    assert.equal(first.full, true);
    assert.equal(first.recomputed.length, Object.keys(scenarios).length);

    // Nothing changed: nothing recomputed, same output.
    const idle = p.syncProxyRules();
    assert.deepEqual(idle.recomputed, []);
    assert.deepEqual(diffSections(first.sections, idle.sections), []);

    // One endpoint more for ns1/svc1.
    const sc = scenarios['clusterip-3-endpoints']!;
    const updated = slice('ns1', 'svc1', [
      { ip: '10.244.1.5', node: NODE },
      { ip: '10.244.2.6', node: 'node-2' },
      { ip: '10.244.3.7', node: 'node-3' },
      { ip: '10.244.3.8', node: 'node-3' },
    ]);
    p.onEndpointSliceUpdate(sc.slices[0]!, updated);
    const after = p.syncProxyRules();
    assert.deepEqual(after.recomputed, ['ns1/svc1:p80']);
    const diff = diffSections(first.sections, after.sections);
    const changed = diff.filter((l) => !l.startsWith('---'));
    assert.ok(changed.length > 0);
    const svc1Chains = new Set([servicePortPolicyClusterChain('ns1/svc1:p80', 'tcp'), ...['10.244.1.5', '10.244.2.6', '10.244.3.7', '10.244.3.8'].map((ip) => servicePortEndpointChain('ns1/svc1:p80', 'tcp', `${ip}:8080`))]);
    for (const l of changed) {
      const m = /^[+-](?:-A (\S+)|:(\S+))/.exec(l);
      assert.ok(m, `unexpected diff line ${l}`);
      assert.ok(svc1Chains.has(m[1] ?? m[2]!), `diff touches another chain: ${l}`);
    }
    // The new endpoint's chain appears; the probabilities become 1/4, 1/3, 1/2.
    assert.ok(changed.some((l) => l.includes('--probability 0.2500000000')));

    // A Service update that changes nothing is no change at all.
    const svc2 = scenarios.nodeport!.service;
    p.onServiceUpdate(svc2, { ...svc2, metadata: { ...svc2.metadata, resourceVersion: '2' } });
    assert.equal(p.serviceChanges.pending(), 0);

    // Deleting a Service removes its chains only.
    p.onServiceDelete(scenarios.nodeport!.service);
    const del = p.syncProxyRules();
    assert.deepEqual(del.recomputed, []);
    const d2 = diffSections(after.sections, del.sections);
    assert.ok(d2.every((l) => l.startsWith('---') || l.startsWith('-')), d2.join('\n'));
    assert.ok(d2.some((l) => l.includes('ns2/svc2:p80')));
  });

  it('a node change (labels, addresses, pod CIDR) forces a full sync', () => {
    const p = newProxier(['clusterip-3-endpoints', 'nodeport'], { clusterCIDR: '' });
    const a = p.syncProxyRules();
    assert.match(renderSections(a.sections), /! -s 10\.244\.1\.0\/24 -j KUBE-MARK-MASQ/);
    p.onNodeUpdate(node(NODE, { podCIDR: '10.244.9.0/24' }));
    const b = p.syncProxyRules();
    assert.equal(b.full, true);
    assert.equal(b.recomputed.length, 2);
    assert.match(renderSections(b.sections), /! -s 10\.244\.9\.0\/24 -j KUBE-MARK-MASQ/);
    // Another node's events are ignored.
    p.onNodeUpdate(node('node-2', { podCIDR: '10.244.2.0/24' }));
    assert.equal(p.syncProxyRules().full, false);
  });

  it('--masquerade-all marks every cluster IP packet', () => {
    const text = renderSections(newProxier(['clusterip-3-endpoints'], { masqueradeAll: true }).syncProxyRules().sections);
    assert.ok(text.includes('-A KUBE-SVC-XPGD46QRK7WJZT7O -m comment --comment "ns1/svc1:p80 cluster IP" -m tcp -p tcp -d 172.30.0.41 --dport 80 -j KUBE-MARK-MASQ'), text);
    assert.doesNotMatch(text, /! -s 10\.244\.0\.0\/16/);
  });

  it('skips headless and ExternalName Services', () => {
    const p = new Proxier({ mode: 'iptables', nodeName: NODE });
    p.onNodeUpdate(node());
    p.onServiceAdd(service('ns', 'headless', { clusterIP: 'None' }));
    p.onServiceAdd(service('ns', 'ext', { type: 'ExternalName', externalName: 'example.com' }));
    p.onServicesSynced();
    p.onEndpointSlicesSynced();
    assert.equal(p.syncProxyRules().recomputed.length, 0);
  });
});

describe('ipvs mode', () => {
  it('golden: all scenarios', () => {
    const r = newProxier(Object.keys(scenarios), { mode: 'ipvs' }).syncProxyRules();
    const text = renderSections(r.sections);
    assertGolden('ipvs-all.golden', text);
    assert.ok(text.includes('-A -t 172.30.0.41:80 -s rr\n-a -t 172.30.0.41:80 -r 10.244.1.5:8080 -m -w 1'));
    assert.ok(text.includes('-A -t 172.30.0.44:80 -s rr -p 10800'));
    assert.ok(text.includes('add KUBE-NODE-PORT-TCP 30001'));
    assert.ok(text.includes('add KUBE-NODE-PORT-LOCAL-TCP 30005'));
  });

  it('--ipvs-scheduler sets the virtual servers’ scheduler', () => {
    const text = renderSections(newProxier(['clusterip-3-endpoints'], { mode: 'ipvs', ipvsScheduler: 'lc' }).syncProxyRules().sections);
    assert.ok(text.includes('-A -t 172.30.0.41:80 -s lc'));
  });
});

describe('BoundedFrequencyRunner', () => {
  it('runs a burst of two at once, then batches requests to one per min interval; runs every max interval', async () => {
    const clock = new FakeClock();
    const runs: number[] = [];
    const r = new BoundedFrequencyRunner(() => runs.push(clock.now()), 1000, 30_000, 2, clock);
    r.loop();
    const t0 = clock.now();
    r.run();
    r.run(); // folded into the pending run
    await clock.tick();
    assert.deepEqual(runs, [t0]);
    r.run();
    await clock.tick();
    assert.equal(runs.length, 2); // the burst
    for (let i = 0; i < 10; i++) r.run(); // all batched into one
    await clock.tick();
    assert.equal(runs.length, 2);
    await clock.advance(999);
    assert.equal(runs.length, 2);
    await clock.advance(1);
    assert.equal(runs.length, 3);
    assert.equal(runs[2]! - t0, 1000);
    // No request: the periodic run comes 30s after the last one.
    await clock.advance(30_000);
    assert.equal(runs.length, 4);
    assert.equal(runs[3]! - t0, 31_000);
    r.stop();
    await clock.advance(60_000);
    assert.equal(runs.length, 4);
  });
});
