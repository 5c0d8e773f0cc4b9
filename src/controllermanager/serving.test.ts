import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'undici';
import { Registry, Gauge } from 'prom-client';
import { newLogger } from '../util/log/logger.js';
import { newHealthChecks, renderHealth, startServing } from './serving.js';

describe('controller-manager serving', () => {
  it('answers ok when every check passes and lists them with ?verbose', () => {
    const checks = [{ name: 'ping', check: () => undefined }, { name: 'deployment-controller', check: () => undefined }];
    assert.deepEqual(renderHealth('healthz', checks, false), { code: 200, body: 'ok' });
    assert.equal(renderHealth('healthz', checks, true).body, '[+]ping ok\n[+]deployment-controller ok\nhealthz check passed\n');
  });

  it('fails with 500 naming the failed check', () => {
    const checks = [{ name: 'ping', check: () => undefined }, { name: 'job-controller', check: () => new Error('down') }];
    const r = renderHealth('readyz', checks, false);
    assert.equal(r.code, 500);
    assert.match(r.body, /\[-\]job-controller failed: reason withheld\nreadyz check failed/);
    assert.equal(renderHealth('healthz', checks, false, 'job-controller').code, 500);
    assert.equal(renderHealth('healthz', checks, false, 'ping').code, 200);
    assert.equal(renderHealth('healthz', checks, false, 'nope').code, 404);
  });

  it('serves health, metrics and configz over HTTPS with a self-signed certificate', async () => {
    const registry = new Registry();
    new Gauge({ name: 'workqueue_depth', help: 'depth', labelNames: ['name'], registers: [registry] }).set({ name: 'deployment' }, 2);
    const checks = newHealthChecks();
    let healthy = true;
    checks.add({ name: 'deployment-controller', check: () => (healthy ? undefined : new Error('x')) });
    const srv = await startServing({ bindAddress: '127.0.0.1', port: 0, checks, registry, configz: () => ({ a: 1 }), logger: newLogger('test') });
    const agent = new Agent({ connect: { rejectUnauthorized: false } });
    try {
      const get = async (p: string) => {
        const r = await request(`${srv.url}${p}`, { dispatcher: agent });
        return { code: r.statusCode, body: await r.body.text() };
      };
      assert.deepEqual(await get('/healthz'), { code: 200, body: 'ok' });
      assert.deepEqual(await get('/healthz/deployment-controller'), { code: 200, body: 'ok' });
      healthy = false;
      assert.equal((await get('/readyz')).code, 500);
      assert.equal((await get('/livez/deployment-controller')).code, 500);
      assert.match((await get('/metrics')).body, /workqueue_depth\{name="deployment"\} 2/);
      assert.deepEqual(JSON.parse((await get('/configz')).body), { componentconfig: { a: 1 } });
      assert.equal((await get('/other')).code, 404);
    } finally {
      await agent.close();
      await srv.close();
    }
  });
});
