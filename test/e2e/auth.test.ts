/**
 * Authentication and authorization with kubectl against
 * `kcm apiserver --authorization-mode=RBAC`: service-account tokens from
 * TokenRequest (`kubectl create token`), `kubectl auth can-i` and
 * `kubectl auth whoami`, and a client-certificate user signed by the data
 * directory's CA, each denied and then allowed by a RoleBinding.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { newSignedCert } from '../../src/util/cert/cert.js';
import { startApiServerProcess, type KcmProcess } from './harness.js';

describe('kcm apiserver with RBAC: tokens, reviews and client certificates', () => {
  let kcm: KcmProcess;
  let token = '';
  before(async () => {
    kcm = await startApiServerProcess({}, ['--authorization-mode=RBAC']);
    await kcm.kubectlOk(['create', 'serviceaccount', 'default']);
    token = (await kcm.kubectlOk(['create', 'token', 'default'])).trim();
  });
  after(async () => {
    await kcm?.stop();
  });

  it('issues a bound token with kubectl create token', () => {
    const claims = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, any>;
    assert.equal(claims.iss, 'https://kubernetes.default.svc.cluster.local');
    assert.equal(claims.sub, 'system:serviceaccount:default:default');
    assert.equal(claims.exp - claims.iat, 3600);
    assert.equal(claims['kubernetes.io'].serviceaccount.name, 'default');
  });

  it('authenticates the token: whoami, forbidden until a RoleBinding to view, then allowed', async () => {
    const whoami = await kcm.kubectlOk(['auth', 'whoami', `--token=${token}`]);
    assert.match(whoami, /Username\s+system:serviceaccount:default:default/);
    assert.match(whoami, /Groups\s+\[system:serviceaccounts system:serviceaccounts:default system:authenticated\]/);

    const denied = await kcm.kubectl(['get', 'pods', `--token=${token}`]);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /pods is forbidden: User "system:serviceaccount:default:default" cannot list resource "pods" in API group "" in the namespace "default"/);
    const no = await kcm.kubectl(['auth', 'can-i', 'list', 'pods', `--token=${token}`]);
    assert.equal(no.stdout.trim(), 'no');

    await kcm.kubectlOk(['create', 'rolebinding', 'default-view', '--clusterrole=view', '--serviceaccount=default:default']);
    const allowed = await kcm.kubectl(['get', 'pods', `--token=${token}`]);
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.equal((await kcm.kubectl(['auth', 'can-i', 'list', 'pods', `--token=${token}`])).stdout.trim(), 'yes');
    assert.equal((await kcm.kubectl(['auth', 'can-i', 'create', 'pods', `--token=${token}`])).stdout.trim(), 'no');
    const list = await kcm.kubectlOk(['auth', 'can-i', '--list', `--token=${token}`]);
    assert.match(list, /pods\s+\[\]\s+\[\]\s+\[get list watch\]/);
  });

  it('refuses a tampered token with 401 and a token whose service account is gone', async () => {
    const [h, p, s] = token.split('.');
    const bad = await kcm.kubectl(['get', 'pods', `--token=${h}.${p}.${s!.slice(0, -4)}AAAA`]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /Unauthorized|must be logged in/);
    await kcm.kubectlOk(['create', 'serviceaccount', 'temp']);
    const t2 = (await kcm.kubectlOk(['create', 'token', 'temp'])).trim();
    assert.match(await kcm.kubectlOk(['auth', 'whoami', `--token=${t2}`]), /system:serviceaccount:default:temp/);
    await kcm.kubectlOk(['delete', 'serviceaccount', 'temp']);
    const gone = await kcm.kubectl(['auth', 'whoami', `--token=${t2}`]);
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /Unauthorized|must be logged in/);
  });

  it('impersonates with --as: can-i answers for that user and requests run as it', async () => {
    await kcm.kubectlOk(['create', 'rolebinding', 'bob-view', '--clusterrole=view', '--user=bob']);
    const as = ['--as=bob'];
    assert.equal((await kcm.kubectl(['auth', 'can-i', 'list', 'pods', ...as])).stdout.trim(), 'yes');
    const no = await kcm.kubectl(['auth', 'can-i', 'delete', 'pods', ...as]);
    assert.equal(no.stdout.trim(), 'no');
    assert.equal(no.code, 1);
    const denied = await kcm.kubectl(['get', 'nodes', ...as]);
    assert.match(denied.stderr, /nodes is forbidden: User "bob" cannot list resource "nodes" in API group "" at the cluster scope/);
    assert.match(await kcm.kubectlOk(['auth', 'whoami', '--as=system:serviceaccount:ns1:bot']), /Groups\s+\[system:serviceaccounts system:serviceaccounts:ns1 system:authenticated\]/);
  });

  it('answers can-i for the admin and reviews tokens', async () => {
    assert.equal((await kcm.kubectl(['auth', 'can-i', 'create', 'pods'])).stdout.trim(), 'yes');
    const review = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } };
    const r = await kcm.api('POST', '/apis/authentication.k8s.io/v1/tokenreviews', review);
    assert.equal(r.status, 201);
    const st = (r.json as { status: { authenticated: boolean; user: { username: string; groups: string[] } } }).status;
    assert.equal(st.authenticated, true);
    assert.equal(st.user.username, 'system:serviceaccount:default:default');
    assert.ok(st.user.groups.includes('system:authenticated'));
  });

  it('authenticates a client certificate signed by the cluster CA: denied, then allowed by a RoleBinding', async () => {
    const pki = join(kcm.dataDir, 'pki');
    const ca = { certPem: readFileSync(join(pki, 'ca.crt'), 'utf8'), keyPem: readFileSync(join(pki, 'ca.key'), 'utf8') };
    const user = newSignedCert(ca, { commonName: 'jane', organizations: ['devs'], usage: 'client' });
    const certFile = join(kcm.dataDir, 'jane.crt');
    const keyFile = join(kcm.dataDir, 'jane.key');
    writeFileSync(certFile, user.certPem);
    writeFileSync(keyFile, user.keyPem, { mode: 0o600 });
    // A kubeconfig of its own: kubectl refuses a token and a client certificate together.
    const kubeconfig = join(kcm.dataDir, 'jane.kubeconfig');
    writeFileSync(kubeconfig, [
      'apiVersion: v1', 'kind: Config', 'current-context: jane',
      'clusters:', '- name: kcm', '  cluster:', `    server: ${kcm.url}`, `    certificate-authority: ${join(pki, 'ca.crt')}`,
      'users:', '- name: jane', '  user:', `    client-certificate: ${certFile}`, `    client-key: ${keyFile}`,
      'contexts:', '- name: jane', '  context: {cluster: kcm, user: jane, namespace: default}', '',
    ].join('\n'));
    const as = ['--kubeconfig', kubeconfig];
    assert.match(await kcm.kubectlOk(['auth', 'whoami', ...as]), /Username\s+jane[\s\S]*Groups\s+\[devs system:authenticated\]/);
    const denied = await kcm.kubectl(['get', 'configmaps', ...as]);
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /configmaps is forbidden: User "jane" cannot list resource "configmaps"/);
    await kcm.kubectlOk(['create', 'rolebinding', 'devs-edit', '--clusterrole=edit', '--group=devs']);
    assert.equal((await kcm.kubectl(['get', 'configmaps', ...as])).code, 0);
    await kcm.kubectlOk(['create', 'configmap', 'from-jane', '--from-literal=a=b', ...as]);
    assert.equal((await kcm.kubectl(['auth', 'can-i', 'delete', 'configmaps', ...as])).stdout.trim(), 'yes');
    assert.equal((await kcm.kubectl(['auth', 'can-i', 'list', 'nodes', ...as])).stdout.trim(), 'no');
  });
});
