/**
 * `kcm apiserver` driven by the real kubectl, as a user would. No controllers
 * run: objects end as kube-apiserver leaves them without a garbage collector,
 * namespace controller or kubelet.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startApiServerProcess, startKubectl, waitFor, type KcmProcess } from './harness.js';

let kcm: KcmProcess;

before(async () => {
  kcm = await startApiServerProcess();
});
after(async () => {
  await kcm?.stop();
});

const json = async (args: string[]) => JSON.parse(await kcm.kubectlOk([...args, '-o', 'json'])) as Record<string, any>;

/**
 * Creates a namespace from a manifest (`kubectl create -f` sends JSON; typed generators send protobuf).
 * Tests pass --validate=false so that they do not depend on /openapi (covered by its own test).
 */
async function newNamespace(name: string): Promise<string> {
  await kcm.kubectlOk(['create', '--validate=false', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } }) });
  // The serviceaccount controller would create this; pods are refused without it (ServiceAccount admission).
  await kcm.kubectlOk(['create', '--validate=false', '-n', name, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } }) });
  return name;
}

const deploymentManifest = (name: string, replicas = 1, image = 'nginx:1.27') =>
  JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { app: name } },
    spec: { replicas, selector: { matchLabels: { app: name } }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image }] } } },
  });

describe('kubectl against kcm apiserver', () => {
  it('lists the served API versions and resources', async () => {
    const versions = (await kcm.kubectlOk(['api-versions'])).split('\n');
    for (const v of ['v1', 'apps/v1', 'batch/v1', 'coordination.k8s.io/v1']) assert.ok(versions.includes(v), `api-versions lacks ${v}`);
    const resources = await kcm.kubectlOk(['api-resources', '--no-headers']);
    assert.match(resources, /^pods\s+po\s+v1\s+true\s+Pod$/m);
    assert.match(resources, /^deployments\s+deploy\s+apps\/v1\s+true\s+Deployment$/m);
    assert.match(resources, /^namespaces\s+ns\s+v1\s+false\s+Namespace$/m);
  });

  it('creates objects with kubectl create namespace, configmap and deployment (typed clients send protobuf)', async () => {
    await kcm.kubectlOk(['create', 'namespace', 'e2e-typed']);
    await kcm.kubectlOk(['create', 'configmap', 'typed', '--from-literal=a=1', '-n', 'e2e-typed']);
    await kcm.kubectlOk(['create', 'deployment', 'typed', '--image=nginx:1.27', '--replicas=2', '-n', 'e2e-typed']);
    assert.equal((await json(['get', 'deployment', 'typed', '-n', 'e2e-typed'])).spec.replicas, 2);
    assert.equal((await json(['get', 'configmap', 'typed', '-n', 'e2e-typed'])).data.a, '1');
  });

  it('validates manifests with the server OpenAPI as kubectl does by default', async () => {
    const ns = await newNamespace('e2e-validate');
    const cm = JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'v' }, data: { a: '1' } });
    await kcm.kubectlOk(['create', '-n', ns, '-f', '-'], { input: cm });
    const bad = await kcm.kubectl(['create', '-n', ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'w' }, bogus: 1 }) });
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /unknown field "bogus"/);
  });

  it('creates a namespace that is Active and listed', async () => {
    await newNamespace('e2e-ns');
    const ns = await json(['get', 'namespace', 'e2e-ns']);
    assert.equal(ns.status.phase, 'Active');
    assert.deepEqual(ns.spec.finalizers, ['kubernetes']);
    const names = await kcm.kubectlOk(['get', 'namespaces', '-o', 'name']);
    assert.match(names, /^namespace\/default$/m);
    assert.match(names, /^namespace\/e2e-ns$/m);
  });

  it('creates objects from a manifest and reads them back as YAML, JSON, by label and by field', async () => {
    const ns = await newNamespace('e2e-get');
    const manifest = ['a', 'b', 'c']
      .map((n, i) => `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-${n}\n  labels:\n    tier: ${i < 2 ? 'front' : 'back'}\ndata:\n  key: value-${n}\n`)
      .join('---\n');
    const created = await kcm.kubectlOk(['create', '--validate=false', '-n', ns, '-f', '-'], { input: manifest });
    assert.match(created, /configmap\/cm-a created/);
    assert.match(created, /configmap\/cm-c created/);

    const yaml = await kcm.kubectlOk(['get', 'configmap', 'cm-a', '-n', ns, '-o', 'yaml']);
    assert.match(yaml, /^kind: ConfigMap$/m);
    assert.match(yaml, /^ {2}key: value-a$/m);
    assert.match(yaml, /^ {2}uid: [0-9a-f-]{36}$/m);

    const one = await json(['get', 'configmap', 'cm-b', '-n', ns]);
    assert.equal(one.data.key, 'value-b');
    assert.match(one.metadata.resourceVersion, /^\d+$/);
    assert.match(one.metadata.creationTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const front = await json(['get', 'configmaps', '-n', ns, '-l', 'tier=front']);
    assert.deepEqual(front.items.map((i: any) => i.metadata.name).sort(), ['cm-a', 'cm-b']);
    const notFront = await json(['get', 'configmaps', '-n', ns, '-l', 'tier!=front,tier']);
    assert.deepEqual(notFront.items.map((i: any) => i.metadata.name), ['cm-c']);
    const byField = await json(['get', 'configmaps', '-n', ns, '--field-selector', 'metadata.name=cm-c']);
    assert.deepEqual(byField.items.map((i: any) => i.metadata.name), ['cm-c']);

    const all = await json(['get', 'configmaps', '--all-namespaces', '-l', 'tier']);
    assert.equal(all.items.filter((i: any) => i.metadata.namespace === ns).length, 3);

    const missing = await kcm.kubectl(['get', 'configmap', 'nope', '-n', ns]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /Error from server \(NotFound\): configmaps "nope" not found/);

    const dup = await kcm.kubectl(['create', '--validate=false', '-n', ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm-a' } }) });
    assert.equal(dup.code, 1);
    assert.match(dup.stderr, /Error from server \(AlreadyExists\): error when creating "STDIN": configmaps "cm-a" already exists/);
  });

  it('prints the columns kube-apiserver serves for kubectl get tables', async () => {
    const ns = await newNamespace('e2e-table');
    await kcm.kubectlOk(['create', '--validate=false', '-n', ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 't' }, data: { a: '1', b: '2' } }) });
    const cms = await kcm.kubectlOk(['get', 'configmaps', 't', '-n', ns]);
    assert.match(cms, /^NAME\s+DATA\s+AGE\n/);
    assert.match(cms, /^t\s+2\s+\d+s$/m);
    const svc = await kcm.kubectlOk(['get', 'service', 'kubernetes', '-n', 'default']);
    assert.match(svc, /^NAME\s+TYPE\s+CLUSTER-IP\s+EXTERNAL-IP\s+PORT\(S\)\s+AGE\n/);
    assert.match(svc, /^kubernetes\s+ClusterIP\s+10\.0\.0\.1\s+<none>\s+443\/TCP\s+\S+$/m);
    await kcm.kubectlOk(['create', '--validate=false', '-n', ns, '-f', '-'], { input: deploymentManifest('tbl', 3) });
    const dep = await kcm.kubectlOk(['get', 'deployment', 'tbl', '-n', ns]);
    assert.match(dep, /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\n/);
    assert.match(dep, /^tbl\s+0\/3\s+0\s+0\s+\S+$/m);
  });

  it('creates and scales a deployment, bumping its generation', async () => {
    const ns = await newNamespace('e2e-deploy');
    await kcm.kubectlOk(['create', '--validate=false', '-n', ns, '-f', '-'], { input: deploymentManifest('web', 2) });
    const d = await json(['get', 'deployment', 'web', '-n', ns]);
    assert.equal(d.spec.replicas, 2);
    assert.equal(d.metadata.generation, 1);
    assert.equal(d.spec.strategy.type, 'RollingUpdate');
    assert.equal(d.spec.template.spec.containers[0].image, 'nginx:1.27');
    assert.equal(d.spec.revisionHistoryLimit, 10);

    assert.match(await kcm.kubectlOk(['scale', 'deployment', 'web', '--replicas=5', '-n', ns]), /deployment.apps\/web scaled/);
    const scaled = await json(['get', 'deployment', 'web', '-n', ns]);
    assert.equal(scaled.spec.replicas, 5);
    assert.equal(scaled.metadata.generation, 2);

    const cond = await kcm.kubectl(['scale', 'deployment', 'web', '--replicas=1', '--current-replicas=3', '-n', ns]);
    assert.notEqual(cond.code, 0, 'a stale --current-replicas must fail');
    assert.equal((await json(['get', 'deployment', 'web', '-n', ns])).spec.replicas, 5);
  });

  it('labels, annotates and patches with merge and JSON patches', async () => {
    const ns = await newNamespace('e2e-patch');
    await kcm.kubectlOk(['create', '--validate=false', '-n', ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'p' }, data: { a: '1' } }) });
    await kcm.kubectlOk(['label', 'configmap', 'p', 'env=prod', 'team=core', '-n', ns]);
    await kcm.kubectlOk(['annotate', 'configmap', 'p', 'note=hello', '-n', ns]);
    let cm = await json(['get', 'configmap', 'p', '-n', ns]);
    assert.deepEqual(cm.metadata.labels, { env: 'prod', team: 'core' });
    assert.equal(cm.metadata.annotations.note, 'hello');

    const relabel = await kcm.kubectl(['label', 'configmap', 'p', 'env=dev', '-n', ns]);
    assert.notEqual(relabel.code, 0, 'changing a label needs --overwrite');
    await kcm.kubectlOk(['label', 'configmap', 'p', 'env=dev', '--overwrite', 'team-', '-n', ns]);
    cm = await json(['get', 'configmap', 'p', '-n', ns]);
    assert.deepEqual(cm.metadata.labels, { env: 'dev' });

    await kcm.kubectlOk(['patch', 'configmap', 'p', '--type', 'merge', '-p', '{"data":{"b":"2","a":null}}', '-n', ns]);
    cm = await json(['get', 'configmap', 'p', '-n', ns]);
    assert.deepEqual(cm.data, { b: '2' });

    await kcm.kubectlOk(['patch', 'configmap', 'p', '--type', 'json', '-p', '[{"op":"add","path":"/data/c","value":"3"},{"op":"remove","path":"/data/b"}]', '-n', ns]);
    cm = await json(['get', 'configmap', 'p', '-n', ns]);
    assert.deepEqual(cm.data, { c: '3' });

    const badTest = await kcm.kubectl(['patch', 'configmap', 'p', '--type', 'json', '-p', '[{"op":"test","path":"/data/c","value":"4"}]', '-n', ns]);
    assert.notEqual(badTest.code, 0, 'a failing JSON-patch test op must refuse the patch');

    await kcm.kubectlOk(['patch', 'deployment', 'x', '-n', ns, '-p', '{}']).then(
      () => assert.fail('patching a missing object must fail'),
      (err: Error) => assert.match(err.message, /NotFound/),
    );
  });

  it('streams changes to kubectl get -w while another kubectl writes', async () => {
    const ns = await newNamespace('e2e-watch');
    const watcher = startKubectl(kcm.kubeconfigPath, ['get', 'pods', '-w', '-o', 'name', '-n', ns]);
    try {
      // No need to wait for the watch to open: kubectl lists, then watches from the list's resourceVersion.
      await kcm.kubectlOk(['run', 'w1', '--image=busybox', '-n', ns]);
      await kcm.kubectlOk(['run', 'w2', '--image=busybox', '-n', ns]);
      await waitFor(() => watcher.lines().includes('pod/w1') && watcher.lines().includes('pod/w2'), 10_000, 'watch lines for w1 and w2');
      const before = watcher.lines().length;
      await kcm.kubectlOk(['label', 'pod', 'w1', 'seen=yes', '-n', ns]);
      await waitFor(() => watcher.lines().length > before, 10_000, 'a watch line for the label change');
      assert.equal(watcher.lines().at(-1), 'pod/w1');
    } finally {
      await watcher.stop();
    }
    assert.equal(watcher.stderr(), '');
  });

  it('deletes with each cascade mode, leaving GC finalizers as kube-apiserver does', async () => {
    const ns = await newNamespace('e2e-cascade');
    for (const n of ['bg', 'fg', 'or']) await kcm.kubectlOk(['create', '--validate=false', '-n', ns, '-f', '-'], { input: deploymentManifest(n) });

    assert.match(await kcm.kubectlOk(['delete', 'deployment', 'bg', '--cascade=background', '-n', ns]), /deployment.apps "bg" deleted/);
    assert.equal((await kcm.kubectl(['get', 'deployment', 'bg', '-n', ns])).code, 1);

    // Foreground and orphan deletion wait for the garbage collector, which does not run here.
    await kcm.kubectlOk(['delete', 'deployment', 'fg', '--cascade=foreground', '--wait=false', '-n', ns]);
    const fg = await json(['get', 'deployment', 'fg', '-n', ns]);
    assert.ok(fg.metadata.deletionTimestamp, 'foreground deletion sets deletionTimestamp');
    assert.deepEqual(fg.metadata.finalizers, ['foregroundDeletion']);

    await kcm.kubectlOk(['delete', 'deployment', 'or', '--cascade=orphan', '--wait=false', '-n', ns]);
    const or = await json(['get', 'deployment', 'or', '-n', ns]);
    assert.ok(or.metadata.deletionTimestamp);
    assert.deepEqual(or.metadata.finalizers, ['orphan']);

    // Removing the finalizer (as the GC would) lets the deletion finish.
    await kcm.kubectlOk(['patch', 'deployment', 'or', '--type', 'json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]', '-n', ns]);
    await waitFor(async () => (await kcm.kubectl(['get', 'deployment', 'or', '-n', ns])).code === 1, 5000, 'the orphaned deployment to go');
  });

  it('honours --grace-period for scheduled pods and deletes unscheduled ones at once', async () => {
    const ns = await newNamespace('e2e-grace');
    const pod = (name: string, node?: string) =>
      JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { ...(node ? { nodeName: node } : {}), containers: [{ name: 'c', image: 'busybox' }] } });
    await kcm.kubectlOk(['create', '--validate=false', '-n', ns, '-f', '-'], { input: pod('bound', 'node-1') });
    await kcm.kubectlOk(['create', '--validate=false', '-n', ns, '-f', '-'], { input: pod('pending') });

    await kcm.kubectlOk(['delete', 'pod', 'pending', '--grace-period=60', '--wait=false', '-n', ns]);
    assert.equal((await kcm.kubectl(['get', 'pod', 'pending', '-n', ns])).code, 1, 'an unscheduled pod is deleted immediately');

    await kcm.kubectlOk(['delete', 'pod', 'bound', '--grace-period=60', '--wait=false', '-n', ns]);
    const p = await json(['get', 'pod', 'bound', '-n', ns]);
    assert.equal(p.metadata.deletionGracePeriodSeconds, 60);
    assert.ok(p.metadata.deletionTimestamp);

    await kcm.kubectlOk(['delete', 'pod', 'bound', '--grace-period=0', '--force', '-n', ns]);
    assert.equal((await kcm.kubectl(['get', 'pod', 'bound', '-n', ns])).code, 1, 'a forced deletion removes the pod');
  });

  it('keeps a deleted namespace Terminating and refuses new objects in it', async () => {
    const ns = await newNamespace('e2e-term');
    await kcm.kubectlOk(['create', '--validate=false', '-n', ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before' } }) });
    await kcm.kubectlOk(['delete', 'namespace', ns, '--wait=false']);
    const got = await json(['get', 'namespace', ns]);
    assert.equal(got.status.phase, 'Terminating');
    assert.ok(got.metadata.deletionTimestamp);
    const refused = await kcm.kubectl(['create', '--validate=false', '-n', ns, '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after' } }) });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /Forbidden.*unable to create new content in namespace e2e-term because it is being terminated/);
    // Existing content can still be read.
    assert.match(await kcm.kubectlOk(['get', 'configmap', 'before', '-n', ns, '-o', 'name']), /configmap\/before/);
  });

  it('refuses pods in a namespace without its default service account, as kube-apiserver does', async () => {
    await kcm.kubectlOk(['create', '--validate=false', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'e2e-nosa' } }) });
    const r = await kcm.kubectl(['run', 'p', '--image=busybox', '-n', 'e2e-nosa']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Forbidden.*error looking up service account e2e-nosa\/default: serviceaccount "default" not found/);
  });

  it('refuses kubectl without credentials', async () => {
    const r = await kcm.kubectl(['get', 'ns', '--token=not-the-token']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /Unauthorized|must be logged in/);
  });
});
