/**
 * The dashboard server (src/dashboard) against the embedded API server over
 * HTTP: sign-in (its login token, a bearer token the API server accepts,
 * nothing anonymous, loopback host names only), the snapshot and deltas of
 * the event stream, the owner graph's summaries, the timeline of writes and
 * events, and a controller manager's /debug/controllers read into the
 * controllers view and the timeline.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApiHandler } from '../../src/apiserver/handler.js';
import { newMemoryStorage } from '../../src/apiserver/storage/memory.js';
import { admin } from '../../src/apiserver/test-server.js';
import { newKubeClient, newRestConfig, typed, type KubeClient } from '../../src/client/index.js';
import { startDashboard, type RunningDashboard } from '../../src/dashboard/server.js';
import type { ControllersState, Delta, Snapshot, TimelineResponse } from '../../src/dashboard/protocol.js';
import type { DebugControllers } from '../../src/util/workqueue/debug-types.js';
import { newLogger } from '../../src/util/log/logger.js';

async function waitFor<T>(get: () => T | undefined | false, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = get();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: http.IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error(`GET ${url} timed out`)));
  });
}

async function poll<T>(get: () => Promise<T | undefined>, ms: number, what: string): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await get();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** An open /api/stream: its events as they arrive. */
function openStream(url: string, cookie: string): Promise<{ events: { event: string; data: any }[]; close(): void }> {
  return new Promise((resolve, reject) => {
    const events: { event: string; data: any }[] = [];
    const req = http.get(`${url}api/stream`, { headers: { Cookie: cookie } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`));
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const event = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data) });
        }
      });
      resolve({ events, close: () => req.destroy() });
    });
    req.on('error', (err) => (err.message === 'socket hang up' ? undefined : reject(err)));
  });
}

describe('kcm dashboard server', () => {
  let api: http.Server;
  let cm: http.Server;
  let client: KubeClient;
  let dash: RunningDashboard;
  const debugReads: string[] = [];
  const cmDebug = (): DebugControllers => ({
    time: Date.now(),
    controllers: [{ name: 'deployment', healthy: true, queues: ['deployment'] }],
    queues: [{ name: 'deployment', controller: 'deployment', depth: 2, adds: 10, addsPerSecond: 1, retries: 1, processing: [], longestRunningSeconds: 0, waiting: ['default/a', 'default/b'], duration: { count: 3, p50: 0.001, p90: 0.002, p99: 0.002 }, lastErrors: [{ time: Date.now(), key: 'default/web', message: 'boom' }] }],
    leaderElection: { lease: 'kube-system/kube-controller-manager', identity: 'me', leading: true },
    recent: [{ queue: 'deployment', key: 'default/web', start: Date.now(), durationMs: 3, error: 'boom' }],
  });

  before(async () => {
    const handler = await createApiHandler({ storage: newMemoryStorage(), logger: newLogger('test-apiserver') });
    // TokenReview and SubjectAccessReview answered here: "alice-token" is alice, who may list pods; "bob-token" is bob, who may not.
    api = http.createServer((req, res) => {
      if (req.method === 'POST' && /\/(tokenreviews|subjectaccessreviews)$/.test(req.url ?? '')) {
        let body = '';
        req.on('data', (c: Buffer) => (body += c));
        req.on('end', () => {
          const r = JSON.parse(body);
          const users: Record<string, string> = { 'alice-token': 'alice', 'bob-token': 'bob' };
          const status = r.kind === 'TokenReview' ? (users[r.spec.token] ? { authenticated: true, user: { username: users[r.spec.token], groups: [] } } : { authenticated: false }) : { allowed: r.spec.user === 'alice' && r.spec.resourceAttributes?.verb === 'list' };
          res.writeHead(201, { 'Content-Type': 'application/json' });
          res.end(JSON.stringify({ ...r, status }));
        });
        return;
      }
      handler.handle(req, res, admin);
    });
    await new Promise<void>((r) => api.listen(0, '127.0.0.1', r));
    const host = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    // A controller manager's port, plain HTTP here: /debug/controllers.
    cm = http.createServer((req, res) => {
      debugReads.push(req.url ?? '');
      if (req.headers.authorization !== 'Bearer admin-token') {
        res.writeHead(401).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(cmDebug()));
    });
    await new Promise<void>((r) => cm.listen(0, '127.0.0.1', r));
    const config = newRestConfig({ host, qps: -1, auth: { bearerToken: 'admin-token' } });
    client = newKubeClient(config);
    await typed(client).namespaces().create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'default' } } as never).catch(() => undefined);
    dash = await startDashboard({ client, restConfig: config, clusterUrl: host, controllerManagerUrl: `http://127.0.0.1:${(cm.address() as AddressInfo).port}`, port: 0, logger: newLogger('dashboard') });
  });

  after(async () => {
    await dash.close();
    await client.close();
    await new Promise((r) => api.close(r));
    await new Promise((r) => cm.close(r));
  });

  async function signIn(): Promise<string> {
    const r = await get(dash.loginUrl);
    assert.equal(r.status, 303);
    return /^([^;]+)/.exec(String(r.headers['set-cookie']))![1]!;
  }

  it('lets nobody in without a token, and only loopback host names', async () => {
    assert.match(dash.loginUrl, /^http:\/\/127\.0\.0\.1:\d+\/login\?token=[\w-]{32}$/);
    const page = await get(dash.url);
    assert.equal(page.status, 401);
    assert.match(page.text, /Not signed in/);
    const stream = await get(`${dash.url}api/stream`);
    assert.equal(stream.status, 401);
    assert.equal(JSON.parse(stream.text).reason, 'Unauthorized');
    assert.equal((await get(`${dash.url}login?token=wrong`)).status, 401);
    assert.equal((await get(`${dash.url}api/object?uid=x`, { Authorization: 'Bearer bob-token' })).status, 401, 'bob may not list pods');
    assert.equal((await get(`${dash.url}api/object?uid=x`, { Authorization: 'Bearer alice-token' })).status, 404, 'alice is in; the object is unknown');
    const rebound = await get(dash.loginUrl, { Host: `evil.example:${dash.port}` });
    assert.equal(rebound.status, 403);
  });

  it('signs a browser in with its login token or an accepted bearer token: an HttpOnly session cookie', async () => {
    const r = await get(dash.loginUrl);
    assert.equal(r.status, 303);
    assert.equal(r.headers.location, '/');
    assert.match(String(r.headers['set-cookie']), /^kcm_dashboard_session=[\w-]+; Path=\/; HttpOnly; SameSite=Strict/);
    const cookie = /^([^;]+)/.exec(String(r.headers['set-cookie']))![1]!;
    assert.equal((await get(`${dash.url}healthz`)).status, 200);
    assert.notEqual((await get(`${dash.url}api/object?uid=x`, { Cookie: cookie })).status, 401);
    assert.equal((await get(`${dash.url}login?token=alice-token`)).status, 303);
  });

  it('watches custom resources as their CRDs become Established, with the objects they own', async () => {
    const cookie = await signIn();
    await client.request('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      body: {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: 'sites.example.com' },
        spec: {
          group: 'example.com',
          scope: 'Namespaced',
          names: { plural: 'sites', singular: 'site', kind: 'Site' },
          versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
        },
      },
    });
    const site = await poll(
      async () => client.request<{ metadata: { uid: string } }>('POST', '/apis/example.com/v1/namespaces/default/sites', { body: { apiVersion: 'example.com/v1', kind: 'Site', metadata: { name: 'blog' }, status: { conditions: [{ type: 'Ready', status: 'False', reason: 'Provisioning' }] } } }).catch(() => undefined),
      10_000,
      'the CRD to serve',
    );
    const svc = await typed(client).services('default').create({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'blog', ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Site', name: 'blog', uid: site.metadata.uid, controller: true }] },
      spec: { ports: [{ port: 80 }] },
    } as never);
    const s = await openStream(dash.url, cookie);
    try {
      const seen = () => [...(s.events.find((e) => e.event === 'snapshot')?.data.objects ?? []), ...s.events.flatMap((e) => (e.event === 'delta' ? (e.data as Delta).upserts : []))];
      const cr = await waitFor(() => seen().find((o) => o.uid === site.metadata.uid), 10_000, 'the Site in the stream');
      assert.equal(cr.kind, 'Site');
      assert.equal(cr.health, 'failed');
      assert.equal(cr.status, 'Provisioning');
      const child = await waitFor(() => seen().find((o) => o.uid === svc.metadata!.uid), 10_000, 'its Service');
      assert.deepEqual(child.owners, [{ uid: site.metadata.uid, kind: 'Site', name: 'blog', controller: true }]);
    } finally {
      s.close();
    }
  });

  it("lists a StatefulSet's claims under it, owned or not, while it exists", async () => {
    const cookie = await signIn();
    const claim = await typed(client).persistentVolumeClaims('default').create({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: 'data-db-0' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    } as never);
    const s = await openStream(dash.url, cookie);
    try {
      await waitFor(() => s.events.find((e) => e.event === 'snapshot'), 10_000, 'the snapshot');
      const sts = await typed(client).statefulSets('default').create({
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        metadata: { name: 'db' },
        spec: {
          serviceName: 'db',
          replicas: 1,
          selector: { matchLabels: { app: 'db' } },
          template: { metadata: { labels: { app: 'db' } }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
          volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
        },
      } as never);
      const linked = await waitFor(
        () => s.events.map((e) => e.data as Delta).flatMap((d) => d.upserts ?? []).find((o) => o.uid === claim.metadata!.uid && o.owners.length > 0),
        10_000,
        'the claim linked to its StatefulSet',
      );
      assert.deepEqual(linked.owners, [{ uid: sts.metadata!.uid, kind: 'StatefulSet', name: 'db', controller: false, claim: true }]);
      await typed(client).statefulSets('default').delete('db');
      await waitFor(
        () => s.events.map((e) => e.data as Delta).flatMap((d) => d.upserts ?? []).reverse().find((o) => o.uid === claim.metadata!.uid)?.owners.length === 0,
        10_000,
        'the link gone with the StatefulSet',
      );
    } finally {
      s.close();
    }
  });

  it('streams a snapshot, then deltas with summaries, and keeps the timeline of writes, events and syncs', async () => {
    const cookie = await signIn();
    const deployments = typed(client).deployments('default');
    const dep = await deployments.create({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
    } as never);
    const s = await openStream(dash.url, cookie);
    try {
      const snap = (await waitFor(() => s.events.find((e) => e.event === 'snapshot'), 10_000, 'the snapshot')).data as Snapshot;
      assert.ok(snap.namespaces.includes('default'));
      const d = snap.objects.find((o) => o.kind === 'Deployment' && o.name === 'web')!;
      assert.equal(d.uid, dep.metadata!.uid);
      assert.deepEqual(d.replicas, { desired: 2, ready: 0, available: 0, updated: 0 });

      // An owned ReplicaSet appears in a delta with its owner.
      const rs = await typed(client).replicaSets('default').create({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'web-1', labels: { app: 'web' }, ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: dep.metadata!.uid!, controller: true }] },
        spec: { replicas: 2, selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
      } as never);
      const delta = await waitFor(() => s.events.map((e) => e.data as Delta).find((x) => x.upserts?.some((o) => o.uid === rs.metadata!.uid)), 10_000, 'a delta with the ReplicaSet');
      assert.deepEqual(delta.upserts.find((o) => o.uid === rs.metadata!.uid)!.owners, [{ uid: dep.metadata!.uid, kind: 'Deployment', name: 'web', controller: true }]);
      assert.ok(delta.touched.includes(rs.metadata!.uid!));

      // A write and an event on the Deployment: both in its timeline, with what changed and who wrote it.
      await deployments.patch('web', 'merge', { spec: { replicas: 3 } }, { fieldManager: 'kubectl-scale' });
      await typed(client).events('default').create({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'web.1' },
        involvedObject: { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web', uid: dep.metadata!.uid },
        reason: 'ScalingReplicaSet',
        message: 'Scaled up replica set web-1 to 3',
        type: 'Normal',
        source: { component: 'deployment-controller' },
        lastTimestamp: new Date().toISOString(),
        count: 1,
      } as never);
      // The controllers view: the controller manager's queues, and its syncs of default/web in the timeline.
      const controllers = (await waitFor(() => s.events.find((e) => e.event === 'controllers'), 10_000, 'the controllers state')).data as ControllersState;
      assert.equal(controllers.ok, true);
      assert.equal(controllers.mode, 'debug');
      assert.equal(controllers.queues[0]!.depth, 2);
      assert.deepEqual(controllers.leaderElection, { lease: 'kube-system/kube-controller-manager', identity: 'me', leading: true });
      const tl = await poll(
        async () => {
          const r = await get(`${dash.url}api/timeline?uid=${dep.metadata!.uid}&descendants=1`, { Cookie: cookie });
          const t = JSON.parse(r.text) as TimelineResponse;
          const ok = t.entries.some((e) => e.type === 'write' && e.changed.includes('spec.replicas')) && t.entries.some((e) => e.type === 'event') && t.entries.some((e) => e.type === 'reconcile');
          return ok ? t : undefined;
        },
        10_000,
        'a timeline with the write, the event and the sync',
      );
      assert.deepEqual(tl.uids, [dep.metadata!.uid, rs.metadata!.uid]);
      const write = tl.entries.find((e) => e.type === 'write' && e.changed.includes('spec.replicas'));
      assert.ok(write?.type === 'write');
      assert.equal(write.op, 'MODIFIED');
      assert.match(write.text, /spec\.replicas 2 → 3/);
      assert.equal(write.manager, 'kubectl-scale');
      const rsAdded = tl.entries.find((e) => e.type === 'write' && e.uid === rs.metadata!.uid);
      assert.ok(rsAdded?.type === 'write' && rsAdded.op === 'ADDED', 'the dependent ReplicaSet is in the timeline with descendants=1');
      const event = tl.entries.find((e) => e.type === 'event');
      assert.ok(event?.type === 'event');
      assert.equal(event.reason, 'ScalingReplicaSet');
      assert.equal(event.source, 'deployment-controller');
      const sync = tl.entries.find((e) => e.type === 'reconcile');
      assert.ok(sync?.type === 'reconcile');
      assert.equal(sync.controller, 'deployment');
      assert.equal(sync.error, 'boom');
      // Later reads ask the controller manager only for syncs newer than those seen.
      await poll(async () => debugReads.some((u) => /^\/debug\/controllers\?since=\d+$/.test(u)) || undefined, 5_000, `a read with ?since= (reads: ${debugReads.join(' ')})`);
      // The whole object, for the detail panel.
      const obj = JSON.parse((await get(`${dash.url}api/object?uid=${dep.metadata!.uid}`, { Cookie: cookie })).text);
      assert.equal(obj.spec.replicas, 3);
    } finally {
      s.close();
    }
  });

});
