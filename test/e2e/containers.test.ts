/**
 * Simulated containers that answer, with kubectl against `kcm up`: what a
 * container's command prints is its log (`kubectl logs` with -f, --previous,
 * --timestamps, --tail, -c), `kubectl exec` runs commands in its file system
 * (with stdin and exit codes), ConfigMaps reach it as variables and as files
 * that follow updates, nginx serves its html directory through `kubectl
 * port-forward` and the API server's pod proxy, and Services route to
 * agnhost serve-hostname replicas through the service proxy and from
 * another pod's `wget`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { freePort, kubectlEnv, startKcm, stopChild, waitFor, type KcmProcess } from './harness.js';

let kcm: KcmProcess;
before(async () => {
  kcm = await startKcm('up', ['--nodes', '2'], { readyTimeoutMs: 60_000 });
  await waitFor(async () => (await kcm.kubectl(['get', 'serviceaccount', 'default', '-n', 'default'])).code === 0 || undefined, 30_000, 'default service account', 200);
});
after(async () => {
  await kcm?.stop();
});

const apply = (...objs: unknown[]) => kcm.kubectlOk(['apply', '-n', 'default', '-f', '-'], { input: objs.map((o) => JSON.stringify(o)).join('\n---\n') });
const phase = async (pod: string) => (await kcm.kubectl(['get', 'pod', pod, '-n', 'default', '-o', 'jsonpath={.status.phase}'])).stdout;
const running = (pod: string) => waitFor(async () => (await phase(pod)) === 'Running' || undefined, 30_000, `${pod} Running`, 200);
const pod = (name: string, containers: unknown[], extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: name } }, spec: { terminationGracePeriodSeconds: 1, containers, ...extra } });

describe('simulated containers e2e', { timeout: 240_000 }, () => {
  it('a finished container has its output as its log, stdout and stderr, with its exit code', async () => {
    await apply(pod('once', [{ name: 'main', image: 'busybox', command: ['sh', '-c', 'echo hello; echo "sum $((2+3))"; echo oops >&2; exit 3'] }], { restartPolicy: 'Never' }));
    await waitFor(async () => (await phase('once')) === 'Failed' || undefined, 30_000, 'once Failed', 200);
    assert.equal(await kcm.kubectlOk(['logs', 'once', '-n', 'default']), 'hello\nsum 5\noops\n');
    const code = await kcm.kubectlOk(['get', 'pod', 'once', '-n', 'default', '-o', 'jsonpath={.status.containerStatuses[0].state.terminated.exitCode}']);
    assert.equal(code, '3');
    assert.match(await kcm.kubectlOk(['logs', 'once', '-n', 'default', '--timestamps', '--tail=1']), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z oops\n$/);
  });

  it('logs -f follows a running loop; --previous shows the instance before a restart; -c picks the container', async () => {
    await apply(
      pod('ticker', [
        { name: 'tick', image: 'busybox', command: ['sh', '-c', 'i=0; while true; do echo "tick $i"; i=$((i+1)); sleep 1; done'] },
        { name: 'crash', image: 'busybox', command: ['sh', '-c', 'echo "run at $(date +%s)"; sleep 1; exit 1'] },
      ]),
    );
    await running('ticker');
    const follow = spawn('kubectl', ['logs', '-f', 'ticker', '-c', 'tick', '-n', 'default'], { env: kubectlEnv(kcm.kubeconfigPath) });
    let out = '';
    follow.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    try {
      await waitFor(() => /tick 3\n/.test(out) || undefined, 20_000, 'followed lines', 100);
      assert.match(out, /^tick 0\ntick 1\ntick 2\ntick 3\n/);
    } finally {
      await stopChild(follow, 2000);
    }
    assert.match(await kcm.kubectlOk(['logs', 'ticker', '-c', 'tick', '-n', 'default', '--tail=1']), /^tick \d+\n$/);
    // kubectl defaults to the first container; the API itself asks for a name.
    const err = await kcm.kubectl(['get', '--raw', '/api/v1/namespaces/default/pods/ticker/log']);
    assert.notEqual(err.code, 0);
    assert.match(err.stderr, /a container name must be specified for pod ticker, choose one of: \[tick crash\]/);
    await waitFor(async () => Number(await kcm.kubectlOk(['get', 'pod', 'ticker', '-n', 'default', '-o', 'jsonpath={.status.containerStatuses[?(@.name=="crash")].restartCount}'])) >= 1 || undefined, 30_000, 'a restart', 200);
    assert.match(await kcm.kubectlOk(['logs', 'ticker', '-c', 'crash', '--previous', '-n', 'default']), /^run at \d+\n$/);
  });

  it('kubectl run -i --rm shows the output of a one-off pod and deletes it', async () => {
    const out = await kcm.kubectlOk(['run', '-i', '--rm', '--restart=Never', 'oneoff', '--image=busybox', '-n', 'default', '--', 'sh', '-c', 'sleep 1; echo "hello from $(hostname)"'], { timeoutMs: 60_000 });
    assert.match(out, /hello from oneoff\n/);
    await waitFor(async () => (await kcm.kubectl(['get', 'pod', 'oneoff', '-n', 'default'])).code !== 0 || undefined, 30_000, 'oneoff deleted', 300);
  });

  it('exec runs in the container: output, exit code, stdin, and files the container wrote', async () => {
    await apply(pod('shell', [{ name: 'sh', image: 'busybox', command: ['sh', '-c', 'echo ready > /tmp/state; sleep 3600'] }]));
    await running('shell');
    assert.equal(await kcm.kubectlOk(['exec', 'shell', '-n', 'default', '--', 'cat', '/tmp/state']), 'ready\n');
    const r = await kcm.kubectl(['exec', 'shell', '-n', 'default', '--', 'sh', '-c', 'echo $((6*7)); exit 5']);
    assert.equal(r.stdout, '42\n');
    assert.equal(r.code, 5);
    assert.equal(await kcm.kubectlOk(['exec', '-i', 'shell', '-n', 'default', '--', 'tr', 'a-z', 'A-Z'], { input: 'shout\n' }), 'SHOUT\n');
    assert.equal(await kcm.kubectlOk(['exec', 'shell', '-n', 'default', '--', 'hostname']), 'shell\n');
  });

  it('ConfigMaps reach containers as variables and as files that follow updates', async () => {
    await apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { MODE: 'blue', 'app.conf': 'level=1\n' } });
    await apply(
      pod('reader', [
        {
          name: 'r',
          image: 'busybox',
          command: ['sh', '-c', 'echo "mode=$MODE greeting=$GREETING"; sleep 3600'],
          env: [{ name: 'GREETING', value: 'hi-$(MODE)' }],
          envFrom: [{ configMapRef: { name: 'settings' } }],
          volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }],
        },
      ], { volumes: [{ name: 'cfg', configMap: { name: 'settings', items: [{ key: 'app.conf', path: 'app.conf' }] } }] }),
    );
    await running('reader');
    await waitFor(async () => (await kcm.kubectlOk(['logs', 'reader', '-n', 'default'])) === 'mode=blue greeting=hi-blue\n' || undefined, 10_000, 'env in the log', 200);
    assert.equal(await kcm.kubectlOk(['exec', 'reader', '-n', 'default', '--', 'cat', '/etc/cfg/app.conf']), 'level=1\n');
    assert.match(await kcm.kubectlOk(['exec', 'reader', '-n', 'default', '--', 'ls', '-la', '/etc/cfg']), /app\.conf -> \.\.data\/app\.conf/);
    await kcm.kubectlOk(['patch', 'configmap', 'settings', '-n', 'default', '--type=merge', '-p', '{"data":{"app.conf":"level=2\\n"}}']);
    await waitFor(async () => (await kcm.kubectlOk(['exec', 'reader', '-n', 'default', '--', 'cat', '/etc/cfg/app.conf'])) === 'level=2\n' || undefined, 20_000, 'updated file', 300);
  });

  it('nginx serves its html directory through port-forward and the pod proxy; moving index.html away shows', async () => {
    await apply(pod('web', [{ name: 'nginx', image: 'nginx:1.14-alpine', ports: [{ containerPort: 80 }] }]));
    await running('web');
    const port = await freePort();
    const pf = spawn('kubectl', ['port-forward', 'pod/web', `${port}:80`, '-n', 'default'], { env: kubectlEnv(kcm.kubeconfigPath) });
    try {
      const body = await waitFor(async () => {
        const res = await fetch(`http://127.0.0.1:${port}/`);
        return res.status === 200 ? res.text() : undefined;
      }, 20_000, 'a page through port-forward', 300);
      assert.match(body, /<title>Welcome to nginx!<\/title>/);
    } finally {
      await stopChild(pf, 2000);
    }
    assert.match(await kcm.kubectlOk(['get', '--raw', '/api/v1/namespaces/default/pods/web/proxy/']), /Welcome to nginx!/);
    await kcm.kubectlOk(['exec', 'web', '-n', 'default', '--', 'mv', '/usr/share/nginx/html/index.html', '/tmp/']);
    const gone = await kcm.kubectl(['get', '--raw', '/api/v1/namespaces/default/pods/web/proxy/']);
    assert.notEqual(gone.code, 0);
    assert.match(gone.stderr, /403|Forbidden/);
  });

  it('a Service routes to serve-hostname replicas: the service proxy and a wget from another pod answer pod names', async () => {
    await apply(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'hostnames' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'hostnames' } },
          template: { metadata: { labels: { app: 'hostnames' } }, spec: { containers: [{ name: 'h', image: 'registry.k8s.io/e2e-test-images/agnhost:2.21', args: ['serve-hostname'], ports: [{ containerPort: 9376 }] }] } },
        },
      },
      { apiVersion: 'v1', kind: 'Service', metadata: { name: 'hostnames' }, spec: { selector: { app: 'hostnames' }, ports: [{ port: 80, targetPort: 9376 }] } },
      pod('client', [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }]),
    );
    await running('client');
    const names = (await waitFor(async () => {
      const out = await kcm.kubectlOk(['get', 'pods', '-n', 'default', '-l', 'app=hostnames', '-o', 'jsonpath={range .items[*]}{.metadata.name} {.status.phase}{"\\n"}{end}']);
      const lines = out.trim().split('\n').filter((l) => l.endsWith(' Running'));
      return lines.length === 2 ? lines.map((l) => l.split(' ')[0]!) : undefined;
    }, 30_000, 'two replicas running', 300)).sort();
    const seen = new Set<string>();
    await waitFor(async () => {
      const r = await kcm.kubectl(['get', '--raw', '/api/v1/namespaces/default/services/hostnames:80/proxy/']);
      if (r.code === 0) seen.add(r.stdout);
      return seen.size === 2 || undefined;
    }, 30_000, 'both replicas through the service proxy', 200);
    assert.deepEqual([...seen].sort(), names);
    const viaDns = await kcm.kubectlOk(['exec', 'client', '-n', 'default', '--', 'wget', '-qO-', 'http://hostnames.default.svc.cluster.local/']);
    assert.ok(names.includes(viaDns), `${viaDns} is one of ${names.join(', ')}`);
    const refused = await kcm.kubectl(['exec', 'client', '-n', 'default', '--', 'wget', '-qO-', '-T', '1', 'http://hostnames:81/']);
    assert.notEqual(refused.code, 0);
  });
});
