import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import { newRestConfig } from '../client/rest-config.js';
import { startTestEnv, type TestEnv } from '../testing/test-env.js';
import { setLogOutput } from '../util/log/logger.js';
import { controller } from './builder.js';
import { newManager } from './manager.js';
import { Site } from './testdata/site-resource.js';
import { settle, testManager } from './test-support.js';

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => {
  setLogOutput(restoreLog);
});

describe('manager CRD installation', () => {
  let env: TestEnv;
  before(async () => {
    env = await startTestEnv();
  });
  after(async () => {
    await env.stop();
  });

  it('applies its CRDs at start, waits until they are Established, then runs controllers of the new kind', async () => {
    const mgr = newManager({ name: 'sites', restConfig: newRestConfig({ host: env.url, qps: -1 }), leaderElection: false, installCRDs: [Site] });
    const seen: string[] = [];
    controller(mgr)
      .for(Site)
      .complete(async (ctx, req) => {
        const site = await ctx.get();
        seen.push(`${req.name}:${site?.spec.image}`);
      });
    const ac = new AbortController();
    const done = mgr.start(ac.signal);
    await mgr.elected();
    const crd = await env.client.resource<CustomResourceDefinition & KubeObject>(GVR.customResourceDefinitions).get('staticsites.sites.example.com');
    assert.ok(crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True'));
    assert.ok(crd.metadata?.managedFields?.some((m) => m.manager === 'sites' && m.operation === 'Apply'));
    await env.client
      .resource({ group: 'sites.example.com', version: 'v1', resource: 'staticsites' })
      .namespace('default')
      .create({ apiVersion: 'sites.example.com/v1', kind: 'StaticSite', metadata: { name: 'home' }, spec: { content: {}, domain: 'home.example.com' } });
    const deadline = Date.now() + 10_000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(seen, ['home:nginx:1.27']);
    ac.abort();
    await done;
  });

  it('fails start() when a CRD is not Established in time', async () => {
    // The fake client stores CRDs but runs no CRD controller: nothing ever establishes them.
    const t = testManager({ installCRDs: [Site.crd()], crdEstablishTimeoutMs: 5_000 });
    let outcome: unknown;
    const done = t.mgr.start(new AbortController().signal).catch((err: unknown) => (outcome = err));
    await settle();
    assert.equal(t.fake.storedList(GVR.customResourceDefinitions).length, 1);
    await t.clock.advance(4_999);
    await settle();
    assert.equal(outcome, undefined);
    await t.clock.advance(1);
    await done;
    assert.match(String(outcome), /staticsites\.sites\.example\.com was not Established within 5000 ms/);
  });
});
