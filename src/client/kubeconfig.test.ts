import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadKubeconfig, loadKubeconfigDetails } from './kubeconfig.js';
import { inClusterConfig } from './in-cluster.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'kcm-kubeconfig-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(rel: string, text: string): Promise<string> {
  const p = path.join(dir, rel);
  await mkdir(path.dirname(p), { recursive: true });
  await writeFile(p, text);
  return p;
}

const first = `
apiVersion: v1
kind: Config
current-context: one
clusters:
- name: c1
  cluster:
    server: https://one.example:6443/
    certificate-authority: certs/ca.crt
- name: shared
  cluster:
    server: https://first-wins.example
contexts:
- name: one
  context: { cluster: c1, user: u1, namespace: team-a }
- name: shared
  context: { cluster: shared, user: u2 }
users:
- name: u1
  user:
    client-certificate: certs/client.crt
    client-key: /abs/client.key
    tokenFile: tok
`;
const second = `
apiVersion: v1
kind: Config
current-context: two
clusters:
- name: shared
  cluster:
    server: https://second-loses.example
- name: c2
  cluster:
    server: http://two.example
    insecure-skip-tls-verify: true
    tls-server-name: api.internal
    certificate-authority-data: ${Buffer.from('PEM-CA').toString('base64')}
contexts:
- name: two
  context: { cluster: c2, user: u2 }
users:
- name: u2
  user:
    username: admin
    password: secret
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./bin/plugin
      args: [get-token]
      env: [{ name: A, value: b }]
`;

describe('loadKubeconfig', () => {
  it('merges the KUBECONFIG list with the first file winning keys and current-context', async () => {
    const a = await write('a/config', first);
    const b = await write('b/config', second);
    const env = { KUBECONFIG: [a, path.join(dir, 'missing'), b].join(path.delimiter) };
    const d = await loadKubeconfigDetails({ env });
    assert.equal(d.contextName, 'one');
    assert.equal(d.namespace, 'team-a');
    assert.equal(d.config.host, 'https://one.example:6443');
    assert.deepEqual(d.files, [a, b]);
    const shared = await loadKubeconfig({ env, context: 'shared' });
    assert.equal(shared.host, 'https://first-wins.example');
    assert.equal(shared.auth.username, 'admin');
  });

  it('resolves relative paths against the directory of the file that defined them', async () => {
    const a = await write('a/config', first);
    const b = await write('b/config', second);
    const cfg = await loadKubeconfig({ env: { KUBECONFIG: `${a}${path.delimiter}${b}` } });
    assert.equal(cfg.tls.caFile, path.join(dir, 'a', 'certs', 'ca.crt'));
    assert.equal(cfg.tls.certFile, path.join(dir, 'a', 'certs', 'client.crt'));
    assert.equal(cfg.tls.keyFile, '/abs/client.key');
    assert.equal(cfg.auth.bearerTokenFile, path.join(dir, 'a', 'tok'));
    const two = await loadKubeconfig({ env: { KUBECONFIG: `${a}${path.delimiter}${b}` }, context: 'two' });
    assert.equal(two.auth.exec?.command, path.join(dir, 'b', 'bin', 'plugin'));
    assert.deepEqual(two.auth.exec?.args, ['get-token']);
    assert.deepEqual(two.auth.exec?.env, [{ name: 'A', value: 'b' }]);
  });

  it('decodes inline data, TLS flags and defaults', async () => {
    const b = await write('b/config', second);
    const cfg = await loadKubeconfig({ kubeconfig: b });
    assert.equal(cfg.host, 'http://two.example');
    assert.equal(cfg.tls.caData, 'PEM-CA');
    assert.equal(cfg.tls.caFile, undefined);
    assert.equal(cfg.tls.insecureSkipTLSVerify, true);
    assert.equal(cfg.tls.serverName, 'api.internal');
    assert.equal(cfg.qps, 20);
    assert.equal(cfg.burst, 30);
    assert.equal(cfg.userAgent, 'kcm/v0.1.0');
  });

  it('applies context, cluster and user overrides', async () => {
    const a = await write('a/config', first);
    const b = await write('b/config', second);
    const cfg = await loadKubeconfig({ env: { KUBECONFIG: `${a}${path.delimiter}${b}` }, context: 'one', cluster: 'c2', user: 'u2' });
    assert.equal(cfg.host, 'http://two.example');
    assert.equal(cfg.auth.username, 'admin');
    assert.equal(cfg.auth.bearerTokenFile, undefined);
  });

  it('falls back to ~/.kube/config', async () => {
    await write('home/.kube/config', second);
    const cfg = await loadKubeconfig({ env: {}, homeDir: path.join(dir, 'home') });
    assert.equal(cfg.host, 'http://two.example');
  });

  it('reports a missing config, an unknown context and a dangling cluster clearly', async () => {
    await assert.rejects(loadKubeconfig({ env: {}, homeDir: path.join(dir, 'nobody') }), /no kubeconfig found/);
    await assert.rejects(loadKubeconfig({ kubeconfig: path.join(dir, 'nope') }), /cannot read kubeconfig/);
    const a = await write('a/config', first);
    await assert.rejects(loadKubeconfig({ kubeconfig: a, context: 'x' }), { message: 'context "x" does not exist' });
    await assert.rejects(loadKubeconfig({ kubeconfig: a, context: 'shared' }), /user "u2" \(context "shared"\) does not exist/);
    await assert.rejects(loadKubeconfig({ kubeconfig: a, cluster: 'zz' }), /cluster "zz" \(context "one"\) does not exist/);
    const bad = await write('bad/config', 'clusters: [: nope');
    await assert.rejects(loadKubeconfig({ kubeconfig: bad }), /cannot parse kubeconfig/);
  });
});

describe('inClusterConfig', () => {
  it('builds the config from the service environment and the mounted token', async () => {
    await write('sa/token', 'tok-1\n');
    const cfg = await inClusterConfig({ KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, { serviceAccountDir: path.join(dir, 'sa') });
    assert.equal(cfg.host, 'https://10.0.0.1:443');
    assert.equal(cfg.auth.bearerToken, 'tok-1');
    assert.equal(cfg.auth.bearerTokenFile, path.join(dir, 'sa', 'token'));
    assert.equal(cfg.tls.caFile, path.join(dir, 'sa', 'ca.crt'));
    const v6 = await inClusterConfig({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '443' }, { serviceAccountDir: path.join(dir, 'sa') });
    assert.equal(v6.host, 'https://[fd00::1]:443');
  });

  it('fails outside a cluster', async () => {
    await assert.rejects(inClusterConfig({}), /KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined/);
    await assert.rejects(
      inClusterConfig({ KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '1' }, { serviceAccountDir: path.join(dir, 'none') }),
      /unable to read in-cluster service account token/,
    );
  });
});
