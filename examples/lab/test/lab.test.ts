/**
 * The four lab steps, each run as its own process (as a learner runs them)
 * against kcm/testing's API server with a scheduler and a simulated node.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ConfigMap, Pod } from 'kubernetes-types/core/v1.js';
import { GVR, type KubeObject } from 'kcm/client';
import { setLogOutput } from 'kcm/runtime';
import { eventually, startTestEnv, type TestEnv } from 'kcm/testing';

const dist = new URL('../src/', import.meta.url).pathname;

interface Run {
  output(): string;
  exited: Promise<number | null>;
}

function step(file: string, kubeconfig: string, args: string[] = []): Run {
  const child = spawn(process.execPath, [join(dist, file), ...args], { env: { ...process.env, KUBECONFIG: kubeconfig }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    }),
  );
  return { output: () => out, exited };
}

describe('the controller lab', () => {
  let env: TestEnv;
  let dir: string;
  let kubeconfig: string;
  let restoreLog: (line: string) => void;
  const pods = () => env.client.resource<Pod & KubeObject>(GVR.pods).namespace('default');
  const pod = (name: string): Pod & KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'web', image: 'nginx:1.27' }] } });

  before(async () => {
    restoreLog = setLogOutput(() => {});
    env = await startTestEnv({ controllers: ['serviceaccount'], nodes: 1 });
    dir = mkdtempSync(join(tmpdir(), 'kcm-lab-'));
    kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, env.kubeconfig);
    await eventually(() => pods().create(pod('web')));
    await eventually(async () => assert.equal((await pods().get('web')).status?.phase, 'Running'));
  });
  after(async () => {
    await env.stop();
    rmSync(dir, { recursive: true, force: true });
    setLogOutput(restoreLog);
  });

  it('1: a client lists the pods', async () => {
    const run = step('1-list-pods.js', kubeconfig);
    assert.equal(await run.exited, 0, run.output());
    assert.match(run.output(), /^NAMESPACE\tNAME\tPHASE\tNODE\n/);
    assert.match(run.output(), /\ndefault\tweb\tRunning\tkcm-node-0\n/);
  });

  it('2: an informer prints adds, updates and deletes as they happen', async () => {
    const run = step('2-informer.js', kubeconfig, ['4']);
    await eventually(() => assert.match(run.output(), /synced: 1 pods in the cache/));
    await pods().create(pod('short-lived'));
    await eventually(() => assert.match(run.output(), /UPDATED default\/short-lived Pending -> Running/));
    await pods().delete('short-lived', { gracePeriodSeconds: 0 });
    assert.equal(await run.exited, 0, run.output());
    assert.match(run.output(), /^ADDED default\/web Running\n/m);
    assert.match(run.output(), /^ADDED default\/short-lived/m);
    assert.match(run.output(), /^DELETED default\/short-lived$/m);
  });

  it('3: a work queue hands keys to a worker that reads the cache', async () => {
    const run = step('3-workqueue.js', kubeconfig, ['3']);
    await eventually(() => assert.match(run.output(), /sync default\/web: Running on kcm-node-0/));
    await pods().create(pod('queued'));
    await eventually(() => assert.match(run.output(), /sync default\/queued: /));
    await pods().delete('queued', { gracePeriodSeconds: 0 });
    assert.equal(await run.exited, 0, run.output());
    assert.match(run.output(), /sync default\/queued: gone/);
  });

  it('4: a controller keeps a pod count per namespace, and puts it back when deleted', async () => {
    const run = step('4-controller.js', kubeconfig, ['5']);
    const configMaps = () => env.client.resource<ConfigMap & KubeObject>(GVR.configMaps).namespace('default');
    const count = () => configMaps().get('pod-count');
    await eventually(async () => assert.equal((await count()).data?.pods, '1'));
    assert.equal((await count()).metadata?.ownerReferences?.[0]?.kind, 'Namespace');
    await pods().create(pod('second'));
    await eventually(async () => assert.equal((await count()).data?.pods, '2'));
    const uid = (await count()).metadata?.uid;
    await configMaps().delete('pod-count');
    await eventually(async () => assert.notEqual((await count()).metadata?.uid, uid));
    assert.equal(await run.exited, 0, run.output());
    assert.match(run.output(), /default: 2 pods \(updated\)/);
  });
});
