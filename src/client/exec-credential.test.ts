import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { FakeClock, rfc3339 } from '../util/clock/clock.js';
import { parseCredential } from './exec-credential.js';
import { newRestClient } from './rest-client.js';
import { newRestConfig, type ExecConfig } from './rest-config.js';
import { startFakeApiServer, type FakeApiServer } from './testing/fake-api-server.js';
import { clientTestdata, clientTestdataDir } from './testing/testdata.js';

let server: FakeApiServer;
let dir: string;
let reject: (token: string) => boolean = () => false;
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kcm-exec-'));
  server = await startFakeApiServer();
  server.handle('GET', '/who', (req, res) => {
    const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (reject(token)) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Unauthorized', code: 401, message: 'Unauthorized' }));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ token }));
  });
});
after(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

function plugin(name: string, env: Record<string, string>, apiVersion = 'client.authentication.k8s.io/v1'): ExecConfig {
  return {
    apiVersion,
    command: process.execPath,
    args: [path.join(clientTestdataDir(), 'exec-plugin.mjs')],
    env: [{ name: 'PLUGIN_STATE', value: path.join(dir, `${name}.count`) }, ...Object.entries(env).map(([n, value]) => ({ name: n, value }))],
  };
}

describe('exec credential plugins', () => {
  it('runs the plugin with KUBERNETES_EXEC_INFO and caches the token until it expires', async () => {
    const clock = new FakeClock();
    const info = path.join(dir, 'info.json');
    const exec = plugin('cache', { PLUGIN_INFO: info, PLUGIN_EXPIRES: rfc3339(clock.now() + 60_000) });
    exec.provideClusterInfo = true;
    const c = newRestClient(newRestConfig({ host: server.url, auth: { exec } }), { clock });
    assert.deepEqual(await c.request('GET', '/who'), { token: 'token-1' });
    const execInfo = JSON.parse(await readFile(info, 'utf8'));
    assert.deepEqual(execInfo, { kind: 'ExecCredential', apiVersion: 'client.authentication.k8s.io/v1', spec: { interactive: false, cluster: { server: server.url } } });
    await clock.advance(59_000);
    assert.deepEqual(await c.request('GET', '/who'), { token: 'token-1' });
    await clock.advance(1_000);
    assert.deepEqual(await c.request('GET', '/who'), { token: 'token-2' });
    await c.close();
  });

  it('runs the plugin again after a 401 and retries the request once', async () => {
    const c = newRestClient(newRestConfig({ host: server.url, auth: { exec: plugin('reauth', {}, 'client.authentication.k8s.io/v1beta1') } }));
    assert.deepEqual(await c.request('GET', '/who'), { token: 'token-1' });
    reject = (t) => t === 'token-1';
    try {
      assert.deepEqual(await c.request('GET', '/who'), { token: 'token-2' });
      const auths = server.requests.slice(-2).map((r) => r.headers.authorization);
      assert.deepEqual(auths, ['Bearer token-1', 'Bearer token-2']);
      // A second 401 is returned, not retried forever.
      reject = () => true;
      await assert.rejects(c.request('GET', '/who'), (e: Error) => /Unauthorized/.test(e.message));
      assert.equal(await readFile(path.join(dir, 'reauth.count'), 'utf8'), '3');
    } finally {
      reject = () => false;
    }
    await c.close();
  });

  it('uses a client certificate returned by the plugin', async () => {
    const tls = await startFakeApiServer({ tls: { key: clientTestdata('server.key'), cert: clientTestdata('server.crt'), ca: clientTestdata('ca.crt'), requestCert: true } });
    try {
      const d = clientTestdataDir();
      const exec = plugin('cert', { PLUGIN_MODE: 'cert', PLUGIN_CERT: path.join(d, 'client.crt'), PLUGIN_KEY: path.join(d, 'client.key') });
      const c = newRestClient(newRestConfig({ host: tls.url, tls: { caFile: path.join(d, 'ca.crt') }, auth: { exec } }));
      await c.request('GET', '/version');
      assert.equal(tls.requests.at(-1)!.clientCN, 'kcm-client');
      assert.equal(tls.requests.at(-1)!.headers.authorization, undefined);
      await c.close();
    } finally {
      await tls.close();
    }
  });

  it('quotes the plugin failure in the error', async () => {
    const fail = newRestClient(newRestConfig({ host: server.url, auth: { exec: plugin('fail', { PLUGIN_MODE: 'fail' }) } }));
    await assert.rejects(fail.request('GET', '/who'), /getting credentials: exec: executable ".*" failed with exit code 3: plugin says no/);
    await fail.close();
    const missing = newRestClient(
      newRestConfig({ host: server.url, auth: { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'kcm-no-such-plugin', installHint: 'install it' } } }),
    );
    await assert.rejects(missing.request('GET', '/who'), /exec: executable "kcm-no-such-plugin" not found\n\ninstall it/);
    await missing.close();
    const wrong = newRestClient(newRestConfig({ host: server.url, auth: { exec: plugin('wrong', { PLUGIN_MODE: 'wrong-version' }) } }));
    await assert.rejects(wrong.request('GET', '/who'), /is configured to use API version "client.authentication.k8s.io\/v1", plugin returned version "client.authentication.k8s.io\/v1alpha1"/);
    await wrong.close();
  });

  it('rejects malformed credentials', () => {
    const e = { apiVersion: 'client.authentication.k8s.io/v1', command: 'p' };
    assert.throws(() => parseCredential(e, 'not json'), /decoding stdout/);
    assert.throws(() => parseCredential(e, JSON.stringify({ kind: 'ExecCredential', apiVersion: e.apiVersion })), /didn't return a status field/);
    assert.throws(() => parseCredential(e, JSON.stringify({ kind: 'ExecCredential', apiVersion: e.apiVersion, status: {} })), /didn't return a token or cert\/key pair/);
    assert.throws(
      () => parseCredential(e, JSON.stringify({ kind: 'ExecCredential', apiVersion: e.apiVersion, status: { clientCertificateData: 'x' } })),
      /only certificate or key/,
    );
    const ok = parseCredential(e, JSON.stringify({ kind: 'ExecCredential', apiVersion: e.apiVersion, status: { token: 't', expirationTimestamp: '2024-01-01T00:00:00Z' } }));
    assert.deepEqual(ok, { token: 't', expiresAt: Date.UTC(2024, 0, 1) });
  });
});
