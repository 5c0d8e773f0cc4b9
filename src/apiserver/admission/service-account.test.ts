import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import { FakeClock } from '../../util/clock/clock.js';
import { StatusError } from '../status.js';
import type { AdmissionAttributes, ObjectReader } from './admission.js';
import { newServiceAccountAdmission, defaultServiceAccountAttempts } from './service-account.js';
import { startTestServer } from '../test-server.js';

/** A reader whose service account appears at the `appearsAt`-th lookup (never when undefined). */
function reader(appearsAt?: number): ObjectReader & { lookups: number } {
  const r = {
    lookups: 0,
    async get(_group: string, resource: string, namespace: string, name: string): Promise<KubeObject | undefined> {
      assert.equal(resource, 'serviceaccounts');
      r.lookups++;
      return appearsAt !== undefined && r.lookups >= appearsAt ? { metadata: { name, namespace } } : undefined;
    },
  };
  return r;
}

function podCreate(serviceAccountName?: string): AdmissionAttributes {
  return {
    operation: 'CREATE',
    resource: { group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true } as never,
    subresource: '',
    namespace: 'fresh',
    name: 'p',
    object: { metadata: { name: 'p', namespace: 'fresh' }, spec: { containers: [{ name: 'c', image: 'x' }], ...(serviceAccountName ? { serviceAccountName } : {}) } } as KubeObject,
    oldObject: undefined,
    user: { username: 'admin', groups: [] },
    dryRun: false,
  };
}

/** Runs `p` to completion on the fake clock, advancing it `step` ms at a time; returns the result and the time it took. */
async function settle<T>(clock: FakeClock, p: Promise<T>, step: number): Promise<{ value?: T; error?: unknown; elapsed: number }> {
  const start = clock.now();
  let done = false;
  const out: { value?: T; error?: unknown; elapsed: number } = { elapsed: 0 };
  p.then((v) => (out.value = v), (e) => (out.error = e)).finally(() => (done = true));
  for (let i = 0; i < 1000 && !done; i++) await clock.advance(step);
  assert.ok(done, 'admission finished');
  out.elapsed = clock.now() - start;
  return out;
}

describe('ServiceAccount admission', () => {
  it('waits for the default service account the controller is about to create', async () => {
    const clock = new FakeClock();
    const r = reader(4);
    const plugin = newServiceAccountAdmission(r, { clock, retryInterval: () => 150 });
    const a = podCreate();
    const res = await settle(clock, Promise.resolve(plugin.admit!(a)), 50);
    assert.equal(res.error, undefined);
    assert.equal(r.lookups, 4);
    assert.equal(res.elapsed, 450, 'three pauses of the retry interval');
    assert.equal((a.object as any).spec.serviceAccountName, 'default');
    assert.ok((a.object as any).spec.volumes[0].name.startsWith('kube-api-access-'));
  });

  it('refuses the pod after ten lookups of a default service account that never comes', async () => {
    const clock = new FakeClock();
    const r = reader();
    const plugin = newServiceAccountAdmission(r, { clock, retryInterval: () => 100 });
    const res = await settle(clock, Promise.resolve(plugin.admit!(podCreate())), 100);
    assert.equal(r.lookups, defaultServiceAccountAttempts);
    assert.equal(defaultServiceAccountAttempts, 10);
    assert.equal(res.elapsed, 900);
    assert.ok(res.error instanceof StatusError);
    assert.equal(res.error.status.code, 403);
    assert.equal(res.error.status.message, 'pods "p" is forbidden: error looking up service account fresh/default: serviceaccount "default" not found');
  });

  it('looks up other service accounts once', async () => {
    const clock = new FakeClock();
    const r = reader();
    const plugin = newServiceAccountAdmission(r, { clock });
    const res = await settle(clock, Promise.resolve(plugin.admit!(podCreate('builder'))), 10);
    assert.equal(r.lookups, 1);
    assert.equal(res.elapsed, 10, 'refused without waiting');
    assert.equal((res.error as StatusError).status.message, 'pods "p" is forbidden: error looking up service account fresh/builder: serviceaccount "builder" not found');
  });

  it('draws the pause between 100 and 200 ms, as upstream', async () => {
    const clock = new FakeClock();
    const r = reader();
    const plugin = newServiceAccountAdmission(r, { clock });
    const res = await settle(clock, Promise.resolve(plugin.admit!(podCreate())), 5);
    assert.equal(r.lookups, 10);
    assert.ok(res.elapsed >= 900 && res.elapsed <= 1800, `${res.elapsed} ms`);
  });
});

describe('ServiceAccount admission in the server', () => {
  it('admits a pod created right after its namespace once the controller creates `default`', async () => {
    const clock = new FakeClock();
    const t = await startTestServer({
      admission: (defaults, objects) => defaults.map((p) => (p.name === 'ServiceAccount' ? newServiceAccountAdmission(objects, { clock, retryInterval: () => 150 }) : p)),
    });
    try {
      assert.equal((await t.request('POST', '/api/v1/namespaces', { metadata: { name: 'fresh' } })).status, 201);
      const created = t.request('POST', '/api/v1/namespaces/fresh/pods', { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'x' }] } });
      // The first lookup missed: admission waits on the clock.
      for (let i = 0; i < 1000 && clock.pendingTimers() === 0; i++) await new Promise((resolve) => setImmediate(resolve));
      assert.equal(clock.pendingTimers(), 1);
      const sa = await t.request('POST', '/api/v1/namespaces/fresh/serviceaccounts', { metadata: { name: 'default' } });
      assert.equal(sa.status, 201, sa.text);
      await clock.advance(150);
      const res = await created;
      assert.equal(res.status, 201, res.text);
      assert.equal(res.body.spec.serviceAccountName, 'default');
    } finally {
      await t.close();
    }
  });
});
