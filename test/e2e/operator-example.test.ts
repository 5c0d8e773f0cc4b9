/**
 * The example operator (examples/operator) against `kcm up`, driven by
 * kubectl as a user would: CRD generated with `kcm crd generate` and
 * applied, the operator started as its own process, a StaticSite applied,
 * scaled with `kubectl scale`, listed with its printer columns and in
 * `kubectl get all`, deleted (its DNS record cleaned up by the finalizer),
 * and the operator stopped with SIGTERM.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startCluster } from './cluster.js';
import { kcmBin, waitFor, type KcmProcess } from './harness.js';

const root = join(kcmBin, '..', '..');
const operatorMain = join(root, 'examples', 'operator', 'dist', 'src', 'main.js');
const resources = join(root, 'examples', 'operator', 'dist', 'src', 'resources.js');

const site = `apiVersion: sites.example.com/v1
kind: StaticSite
metadata:
  name: home
spec:
  domain: home.example.com
  replicas: 2
  content:
    index.html: "<h1>Welcome home</h1>"
`;

describe('the example operator on kcm up', { skip: !existsSync(operatorMain) && 'examples/operator is not built (npm test builds it)' }, () => {
  let cluster: KcmProcess;
  let operator: ChildProcess;
  let operatorOut = '';
  let operatorExit: Promise<number | null>;

  before(async () => {
    cluster = await startCluster(['--nodes', '1']);
  });
  after(async () => {
    if (operator && operator.exitCode === null) operator.kill('SIGKILL');
    await cluster?.stop();
  });

  it('installs the generated CRD, runs, reconciles, scales, lists and cleans up', async () => {
    const crdFile = join(cluster.dataDir, 'staticsite-crd.yaml');
    const gen = spawn(process.execPath, [kcmBin, 'crd', 'generate', resources, '--out', crdFile]);
    assert.equal(await new Promise((r) => gen.on('exit', r)), 0);
    await cluster.kubectlOk(['apply', '-f', crdFile]);
    await cluster.kubectlOk(['wait', '--for=condition=Established', 'crd/staticsites.sites.example.com', '--timeout=30s']);

    operator = spawn(process.execPath, [operatorMain, '--kubeconfig', cluster.kubeconfigPath, '--health-probe-bind-address', '127.0.0.1:0', '--webhook-bind-address', '127.0.0.1:0', '--install-webhooks', '--quiet'], { stdio: ['ignore', 'pipe', 'pipe'] });
    operator.stdout!.setEncoding('utf8').on('data', (d: string) => (operatorOut += d));
    operator.stderr!.setEncoding('utf8').on('data', (d: string) => (operatorOut += d));
    operatorExit = new Promise((r) => operator.on('exit', (code) => r(code)));
    await waitFor(() => operatorOut.includes('leading'), 20_000, `the operator to lead (output: ${operatorOut})`);
    await waitFor(() => operatorOut.includes('webhooks installed'), 20_000, `the operator's webhooks (output: ${operatorOut})`);
    // kcm up calls the operator's defaulting webhook, served by the operator process on the host.
    const loud = await cluster.kubectlOk(['create', '-f', '-', '--dry-run=server', '-o', 'jsonpath={.spec.domain}'], {
      input: 'apiVersion: sites.example.com/v1\nkind: StaticSite\nmetadata:\n  name: loud\n  namespace: default\nspec:\n  domain: LOUD.Example.com.\n',
    });
    assert.equal(loud, 'loud.example.com');

    await cluster.kubectlOk(['apply', '-f', '-'], { input: site });
    await cluster.kubectlOk(['wait', 'staticsite/home', '--for=condition=Ready', '--timeout=60s']);
    const table = await cluster.kubectlOk(['get', 'staticsites']);
    assert.match(table, /^NAME\s+DOMAIN\s+REPLICAS\s+AVAILABLE\s+READY\s+AGE\n/);
    assert.match(table, /\nhome\s+home\.example\.com\s+2\s+2\s+True\s+\S+\n/);
    assert.match(await cluster.kubectlOk(['get', 'site', 'home', '-o', 'name']), /^staticsite\.sites\.example\.com\/home\n$/);
    const all = await cluster.kubectlOk(['get', 'all', '-o', 'name']);
    for (const want of ['staticsite.sites.example.com/home', 'deployment.apps/home', 'service/home']) assert.ok(all.includes(want), `${want} in kubectl get all:\n${all}`);
    const ip = await cluster.kubectlOk(['get', 'service', 'home', '-o', 'jsonpath={.spec.clusterIP}']);
    assert.equal(await cluster.kubectlOk(['get', 'configmap', 'records', '-n', 'dns', '-o', 'jsonpath={.data.home\\.example\\.com}']), ip);

    await cluster.kubectlOk(['scale', 'staticsite/home', '--replicas=3']);
    await waitFor(async () => (await cluster.kubectlOk(['get', 'staticsite', 'home', '-o', 'jsonpath={.status.availableReplicas}'])) === '3', 60_000, 'three available replicas');
    assert.equal(await cluster.kubectlOk(['get', 'deployment', 'home', '-o', 'jsonpath={.spec.replicas}']), '3');
    const events = await cluster.kubectlOk(['get', 'events', '--field-selector', 'involvedObject.kind=StaticSite,involvedObject.name=home', '-o', 'jsonpath={.items[*].reason}']);
    for (const r of ['CreatedDeployment', 'CreatedService', 'DNSRecordPublished', 'Ready']) assert.ok(events.includes(r), `${r} in ${events}`);

    await cluster.kubectlOk(['delete', 'staticsite', 'home', '--timeout=60s']);
    assert.equal(await cluster.kubectlOk(['get', 'configmap', 'records', '-n', 'dns', '-o', 'jsonpath={.data.home\\.example\\.com}']), '');
    // The garbage collector learns of a new CRD at its next discovery resync (every 30 s, as upstream's): up to a minute here.
    await waitFor(async () => (await cluster.kubectl(['get', 'deployment', 'home'])).code !== 0, 90_000, 'the Deployment to be garbage-collected', 500);

    operator.kill('SIGTERM');
    assert.equal(await operatorExit, 0, operatorOut);
  });
});
