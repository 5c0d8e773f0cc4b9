import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Deployment } from 'kubernetes-types/apps/v1.js';
import type { ConfigMap, Namespace, Secret } from 'kubernetes-types/core/v1.js';
import { GVR } from '../api/gvr.js';
import type { KubeObject } from '../api/types.js';
import { isConflict, isNotFound } from '../client/errors.js';
import { controller } from '../runtime/builder.js';
import { kinds } from '../runtime/kinds.js';
import { Site } from '../runtime/testdata/site-resource.js';
import { newSharedInformerFactory } from '../tools/cache/factory.js';
import { setLogOutput } from '../util/log/logger.js';
import { eventually } from './eventually.js';
import { startTestEnv, type TestEnv } from './test-env.js';

let restoreLog: (line: string) => void;
before(() => {
  restoreLog = setLogOutput(() => {});
});
after(() => {
  setLogOutput(restoreLog);
});

type CM = ConfigMap & KubeObject;
const cm = (name: string, extra: Partial<CM> = {}): CM => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'default' }, ...extra });

describe('startTestEnv', () => {
  describe('the API server alone', () => {
    let env: TestEnv;
    before(async () => {
      env = await startTestEnv({ crds: [Site] });
    });
    after(async () => {
      await env.stop();
    });

    it('serves the installed CRDs and a kubeconfig kubectl can use', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'kcm-env-'));
      try {
        const file = join(dir, 'kubeconfig');
        writeFileSync(file, env.kubeconfig);
        const { stdout } = await promisify(execFile)('kubectl', ['--kubeconfig', file, 'get', 'namespaces,crds', '-o', 'name']);
        assert.match(stdout, /namespace\/default/);
        assert.match(stdout, /customresourcedefinition\.apiextensions\.k8s\.io\/staticsites\.sites\.example\.com/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('makes the next update of one object conflict, then lets updates through', async () => {
      const cms = env.client.resource<CM>(GVR.configMaps).namespace('default');
      const created = await cms.create(cm('conflicted'));
      env.faults.conflictNextUpdate('configmaps', { namespace: 'default', name: 'conflicted' });
      await assert.rejects(cms.update({ ...created, data: { a: '1' } }), (err: unknown) => isConflict(err));
      const ok = await cms.update({ ...created, data: { a: '1' } });
      assert.equal(ok.data?.a, '1');
      assert.equal(env.faults.injected().conflicts, 1);
    });

    it('answers requests with 429 and Retry-After, which the client waits out and retries', async () => {
      const before = env.faults.injected().throttled;
      env.faults.throttle({ count: 2, retryAfterSeconds: 0, resource: 'configmaps', verb: 'get' });
      const cms = env.client.resource<CM>(GVR.configMaps).namespace('default');
      await cms.create(cm('throttled'));
      assert.equal((await cms.get('throttled')).metadata?.name, 'throttled');
      assert.equal(env.faults.injected().throttled - before, 2);
    });

    it('drops watches and expires the next watch: informers re-watch and relist, and keep up', async () => {
      const factory = newSharedInformerFactory(env.client);
      const names = new Set<string>();
      factory.configMaps().addEventHandler({ onAdd: (c) => names.add(c.metadata?.name ?? '') });
      const ac = new AbortController();
      factory.start(ac.signal);
      await factory.waitForCacheSync(ac.signal);
      const cms = env.client.resource<CM>(GVR.configMaps).namespace('default');
      await eventually(() => assert.ok(env.faults.dropWatches({ resource: 'configmaps' }) >= 1));
      await cms.create(cm('after-drop'));
      await eventually(() => assert.ok(names.has('after-drop')));
      env.faults.expireNext({ resource: 'configmaps', verb: 'watch' });
      env.faults.dropWatches({ resource: 'configmaps' });
      await eventually(() => assert.equal(env.faults.injected().expired, 1));
      await cms.create(cm('after-expiry'));
      await eventually(() => assert.ok(names.has('after-expiry')));
      ac.abort();
      await factory.shutdown();
    });

    it('slows down one resource without holding up the others', async () => {
      env.faults.slow('secrets', 300);
      try {
        const order: string[] = [];
        await Promise.all([
          env.client
            .resource<Secret & KubeObject>(GVR.secrets)
            .namespace('default')
            .list()
            .then(() => order.push('secrets')),
          env.client
            .resource<CM>(GVR.configMaps)
            .namespace('default')
            .list()
            .then(() => order.push('configmaps')),
        ]);
        assert.deepEqual(order, ['configmaps', 'secrets']);
      } finally {
        env.faults.slow('secrets', 0);
      }
    });

    it('runs managers made with newManager, and stops them with the env', async () => {
      const mgr = env.newManager({ name: 'configmap-greeter' });
      controller(mgr)
        .for(kinds.ConfigMap)
        .complete(async (ctx) => {
          const c = await ctx.get();
          if (c && !c.data?.greeting) await ctx.client.update({ ...c, data: { ...c.data, greeting: 'hello' } });
        });
      await env.startManager(mgr);
      const cms = env.client.resource<CM>(GVR.configMaps).namespace('default');
      await cms.create(cm('greet-me'));
      await eventually(async () => assert.equal((await cms.get('greet-me')).data?.greeting, 'hello'));
    });
  });

  describe('with kcm controllers and simulated nodes', () => {
    let env: TestEnv;
    before(async () => {
      env = await startTestEnv({ controllers: ['garbagecollector', 'namespace', 'deployment', 'replicaset'], nodes: 1 });
    });
    after(async () => {
      await env.stop();
    });

    it('deletes dependents with their owner (garbage collector)', async () => {
      const cms = env.client.resource<CM>(GVR.configMaps).namespace('default');
      const owner = await cms.create(cm('owner'));
      await cms.create(cm('dependent', { metadata: { name: 'dependent', namespace: 'default', ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata!.uid! }] } }));
      await cms.delete('owner');
      await eventually(async () => {
        await assert.rejects(cms.get('dependent'), (err: unknown) => isNotFound(err));
      });
    });

    it('empties and removes a deleted namespace (namespace controller)', async () => {
      const nss = env.client.resource<Namespace & KubeObject>(GVR.namespaces);
      await nss.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'doomed' } });
      await env.client.resource<CM>(GVR.configMaps).namespace('doomed').create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'doomed' } });
      await nss.delete('doomed');
      await eventually(async () => {
        await assert.rejects(nss.get('doomed'), (err: unknown) => isNotFound(err));
      });
    });

    it('runs a Deployment until it is available (deployment, replicaset, scheduler, nodes)', async () => {
      const deploys = env.client.resource<Deployment & KubeObject>(GVR.deployments).namespace('default');
      await deploys.create({
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'web' },
        spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } } },
      });
      await eventually(async () => assert.equal((await deploys.get('web')).status?.availableReplicas, 2), { timeoutMs: 20_000 });
    });

    it('refuses controllers it does not know', async () => {
      await assert.rejects(startTestEnv({ controllers: ['no-such-controller'] }), /unknown controller "no-such-controller"/);
    });
  });

  describe('with a fake clock', () => {
    let env: TestEnv;
    before(async () => {
      env = await startTestEnv({ fakeClock: true });
    });
    after(async () => {
      await env.stop();
    });

    it('drives requeueAfter of the managers it makes by env.advance, against the real server', async () => {
      const times: number[] = [];
      const mgr = env.newManager({ name: 'ticker' });
      controller(mgr)
        .for(kinds.ConfigMap)
        .complete(() => {
          times.push(env.clock.now());
          return { requeueAfter: 60_000 };
        });
      await env.client.resource<CM>(GVR.configMaps).namespace('default').create(cm('tick'));
      await env.startManager(mgr);
      await eventually(() => assert.equal(times.length, 1));
      const t0 = times[0]!;
      await env.advance(59_999);
      assert.equal(times.length, 1);
      await env.advance(1);
      await eventually(() => assert.equal(times.length, 2));
      assert.equal(times[1]! - t0, 60_000);
      await assert.rejects(startTestEnv().then(async (e) => {
        try {
          await e.advance(1);
        } finally {
          await e.stop();
        }
      }), /fakeClock: true/);
    });
  });
});
