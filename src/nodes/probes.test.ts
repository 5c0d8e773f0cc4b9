import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Container } from 'kubernetes-types/core/v1.js';
import { runtimeHarness, runtimePod as pod } from './runtime-harness.js';

const harness = runtimeHarness;

import { newProbeWorkers, parseForcedFailures, PROBE_FAIL_ANNOTATION } from './probes.js';

const LIVENESS_DEMO: Container = {
  name: 'liveness',
  image: 'registry.k8s.io/busybox',
  args: ['/bin/sh', '-c', 'touch /tmp/healthy; sleep 30; rm -f /tmp/healthy; sleep 600'],
  livenessProbe: { exec: { command: ['cat', '/tmp/healthy'] }, initialDelaySeconds: 5, periodSeconds: 5 },
};

describe('probes', () => {
  it('makes a container without a readiness probe ready when it starts', async () => {
    const h = harness(pod([{ name: 'c', image: 'nginx' }]));
    await h.run(0);
    assert.equal(h.cs().ready, true);
    assert.equal(h.cs().started, true);
  });

  it('needs successThreshold successes, probing every periodSeconds after initialDelaySeconds', async () => {
    const h = harness(pod([{ name: 'c', image: 'nginx', readinessProbe: { exec: { command: ['true'] }, initialDelaySeconds: 3, periodSeconds: 4, successThreshold: 2 } }]));
    await h.at(6.9);
    assert.equal(h.cs().ready, false, 'one success at 3 s is not enough');
    await h.at(7);
    assert.equal(h.cs().ready, true);
    assert.equal(h.ready(), 'True');
  });

  it('gates liveness and readiness on the startup probe, then probes readiness at once', async () => {
    const h = harness(
      pod([
        {
          name: 'c',
          image: 'busybox',
          command: ['sh', '-c', 'sleep 20; touch /tmp/started; sleep 3600'],
          startupProbe: { exec: { command: ['cat', '/tmp/started'] }, periodSeconds: 5, failureThreshold: 10 },
          livenessProbe: { exec: { command: ['cat', '/tmp/never'] }, periodSeconds: 10, failureThreshold: 1 },
          readinessProbe: { exec: { command: ['true'] }, periodSeconds: 30 },
        },
      ]),
    );
    await h.at(19);
    assert.equal(h.cs().started, false);
    assert.equal(h.cs().ready, false);
    assert.ok(!h.events.some((e) => e.includes('Liveness')), 'no liveness probe before started');
    assert.equal(h.events.filter((e) => e.startsWith('Warning Unhealthy Startup probe failed: ')).length, 4);
    await h.at(20);
    assert.equal(h.cs().started, true);
    assert.equal(h.cs().ready, true, 'readiness probed right after startup succeeded');
    // The liveness probe (failureThreshold 1) now fails on its next tick, at 20 s after start.
    assert.ok(h.events.includes('Normal Killing Container c failed liveness probe, will be restarted'));
  });

  it('kills and restarts a container whose startup probe fails failureThreshold times', async () => {
    const h = harness(pod([{ name: 'c', image: 'nginx', startupProbe: { exec: { command: ['cat', '/tmp/started'] }, periodSeconds: 1, failureThreshold: 3 } }]));
    await h.at(2);
    assert.ok(h.events.includes('Normal Killing Container c failed startup probe, will be restarted'));
    assert.equal(h.events.filter((e) => e === "Warning Unhealthy Startup probe failed: cat: can't open '/tmp/started': No such file or directory\n").length, 3);
    // nginx ends at SIGTERM with 0; the restart follows the next sync.
    assert.equal(h.cs().state!.terminated!.exitCode, 0);
    await h.at(3);
    assert.equal(h.cs().restartCount, 1);
    assert.equal(h.cs().started, false);
  });

  it('plays the classic liveness demo: fails after 30 s, killed 137 after the grace period, restarted', async () => {
    const h = harness(pod([LIVENESS_DEMO]));
    await h.at(29);
    assert.equal(h.cs().ready, true);
    assert.ok(!h.events.some((e) => e.includes('Unhealthy')));
    // Failures at 30, 35 and 40 s; the third kills.
    await h.at(40);
    assert.equal(h.events.filter((e) => e === "Warning Unhealthy Liveness probe failed: cat: can't open '/tmp/healthy': No such file or directory\n").length, 3);
    assert.ok(h.events.includes('Normal Killing Container liveness failed liveness probe, will be restarted'));
    // The shell (PID 1) ignores SIGTERM: SIGKILL at the 30 s grace period's end.
    await h.at(69);
    assert.ok(h.cs().state!.running);
    assert.equal(h.cs().restartCount, 0);
    await h.at(70);
    assert.equal(h.cs().state!.terminated!.exitCode, 137);
    assert.equal(h.cs().state!.terminated!.reason, 'Error');
    await h.at(71);
    const cs = h.cs();
    assert.equal(cs.restartCount, 1);
    assert.ok(cs.state!.running);
    assert.equal(cs.lastState!.terminated!.exitCode, 137);
    // The next instance fails again; its end is shown as Error, then CrashLoopBackOff.
    await h.at(71 + 40 + 30);
    assert.equal(h.cs().state!.terminated!.reason, 'Error');
    await h.at(71 + 40 + 30 + 1);
    assert.equal(h.cs().state!.waiting!.reason, 'CrashLoopBackOff');
    assert.equal(h.cs().restartCount, 1);
  });

  it('uses the probe-level terminationGracePeriodSeconds for a liveness kill', async () => {
    const c: Container = { ...LIVENESS_DEMO, livenessProbe: { ...LIVENESS_DEMO.livenessProbe!, terminationGracePeriodSeconds: 3 } };
    const h = harness(pod([c]));
    await h.at(42.9);
    assert.ok(h.cs().state!.running);
    await h.at(43);
    assert.equal(h.cs().state!.terminated!.exitCode, 137);
  });

  it('does not restart a liveness-killed container under restartPolicy Never', async () => {
    const h = harness(pod([{ ...LIVENESS_DEMO, livenessProbe: { ...LIVENESS_DEMO.livenessProbe!, terminationGracePeriodSeconds: 1 } }], { restartPolicy: 'Never' }));
    await h.at(50);
    assert.ok(h.events.includes('Normal Killing Container liveness failed liveness probe'));
    assert.equal(h.status().phase, 'Failed');
  });

  it('probes HTTP, TCP and gRPC ports the container declares and refuses others with kubelet texts', async () => {
    const h = harness(
      pod([
        { name: 'a', image: 'app', ports: [{ name: 'http', containerPort: 8080 }], readinessProbe: { httpGet: { path: '/healthz', port: 'http' } } },
        { name: 'b', image: 'app', readinessProbe: { httpGet: { path: '/healthz', port: 8080 }, failureThreshold: 1 } },
        { name: 'c', image: 'app', readinessProbe: { tcpSocket: { port: 8080 }, failureThreshold: 1 } },
        { name: 'd', image: 'app', ports: [{ containerPort: 9090 }], readinessProbe: { grpc: { port: 9090 } } },
      ]),
    );
    await h.run(0);
    assert.deepEqual([0, 1, 2, 3].map((i) => h.cs(i).ready), [true, false, false, true]);
    assert.ok(h.events.includes('Warning Unhealthy Readiness probe failed: Get "http://10.244.0.5:8080/healthz": dial tcp 10.244.0.5:8080: connect: connection refused'));
    assert.ok(h.events.includes('Warning Unhealthy Readiness probe failed: dial tcp 10.244.0.5:8080: connect: connection refused'));
  });

  it('answers like upstream\'s probe test images: agnhost liveness fails /healthz after 10 s, test-webserver serves port 80 undeclared', async () => {
    const agnhost = 'registry.k8s.io/e2e-test-images/agnhost:2.40';
    const h = harness(
      pod([
        { name: 'live', image: agnhost, args: ['liveness'], livenessProbe: { httpGet: { path: '/healthz', port: 8080 }, initialDelaySeconds: 15, failureThreshold: 1 } },
        { name: 'redir', image: agnhost, args: ['liveness'], livenessProbe: { httpGet: { path: '/redirect?loc=' + encodeURIComponent('http://0.0.0.0/'), port: 8080 }, initialDelaySeconds: 15, failureThreshold: 1 } },
        { name: 'web', image: agnhost, args: ['test-webserver'], readinessProbe: { httpGet: { path: '/', port: 80 } }, livenessProbe: { tcpSocket: { port: 81 }, failureThreshold: 100 } },
      ]),
    );
    await h.at(14);
    assert.equal(h.cs(0).restartCount, 0);
    await h.at(16);
    assert.ok(h.events.includes('Warning Unhealthy Liveness probe failed: HTTP probe failed with statuscode: 500'), h.events.join('\n'));
    await h.at(60);
    assert.ok(h.cs(0).restartCount >= 1, 'the liveness server is restarted');
    assert.equal(h.cs(1).restartCount, 0, 'a redirect to another host is not followed');
    assert.equal(h.cs(2).ready, true);
  });

  it('fails an exec probe whose command runs past timeoutSeconds, as kubelet with ExecProbeTimeout', async () => {
    const h = harness(
      pod([
        { name: 'slow', image: 'busybox', command: ['sleep', '3600'], readinessProbe: { exec: { command: ['sh', '-c', 'sleep 5'] }, timeoutSeconds: 2, failureThreshold: 1 } },
        { name: 'patient', image: 'busybox', command: ['sleep', '3600'], readinessProbe: { exec: { command: ['sh', '-c', 'sleep 1'] }, timeoutSeconds: 2 } },
      ]),
    );
    await h.at(1);
    assert.deepEqual([h.cs(0).ready, h.cs(1).ready], [false, true]);
    assert.ok(h.events.includes('Warning Unhealthy Readiness probe failed: command "sh -c sleep 5" timed out'), h.events.join('\n'));
  });

  it('fails the probes the probe.kcm.dev/fail annotation names, live, and recovers when it is removed', async () => {
    const web: Container = { name: 'web', image: 'nginx', ports: [{ containerPort: 80 }], readinessProbe: { httpGet: { path: '/', port: 80 }, periodSeconds: 2 } };
    const p = pod([web]);
    const h = harness(p);
    await h.at(1);
    assert.equal(h.ready(), 'True');
    h.rt.updatePod({ ...p, metadata: { ...p.metadata, annotations: { [PROBE_FAIL_ANNOTATION]: 'web=readiness' } } });
    await h.at(5);
    assert.equal(h.ready(), 'True', 'two failures (2 s, 4 s) are below failureThreshold 3');
    await h.at(6);
    assert.equal(h.ready(), 'False');
    assert.ok(h.events.includes('Warning Unhealthy Readiness probe failed: HTTP probe failed with statuscode: 500'));
    h.rt.updatePod(p);
    await h.at(8);
    assert.equal(h.ready(), 'True');
    assert.equal(h.cs().restartCount, 0);
  });

  it('starts the regular containers only after the startup probe of a sidecar succeeded, and restarts a sidecar failing liveness', async () => {
    const h = harness(
      pod([{ name: 'app', image: 'nginx' }], {
        terminationGracePeriodSeconds: 1,
        initContainers: [
          {
            name: 'proxy',
            image: 'busybox',
            restartPolicy: 'Always',
            command: ['sh', '-c', 'sleep 3; touch /tmp/up; sleep 10; rm /tmp/up; sleep 3600'],
            startupProbe: { exec: { command: ['test', '-f', '/tmp/up'] }, periodSeconds: 1, failureThreshold: 30 },
            livenessProbe: { exec: { command: ['test', '-f', '/tmp/up'] }, periodSeconds: 1, failureThreshold: 1 },
          },
        ],
      }),
    );
    await h.at(2);
    assert.equal(h.status().containerStatuses![0]!.state!.waiting!.reason, 'PodInitializing');
    assert.equal(h.status().initContainerStatuses![0]!.started, false);
    await h.at(3);
    assert.ok(h.status().containerStatuses![0]!.state!.running);
    assert.equal(h.status().conditions!.find((c) => c.type === 'Initialized')!.status, 'True');
    await h.at(13);
    assert.ok(h.events.includes('Normal Killing Init container proxy failed liveness probe'));
    await h.at(16);
    assert.equal(h.status().initContainerStatuses![0]!.restartCount, 1);
    assert.ok(h.status().containerStatuses![0]!.state!.running, 'the app keeps running');
    assert.equal(h.status().conditions!.find((c) => c.type === 'Initialized')!.status, 'True');
  });

  it('runs a probe first on its tick at or after the initial delay when its ticks have a phase', () => {
    const c: Container = { name: 'c', image: 'nginx', readinessProbe: { exec: { command: ['true'] }, initialDelaySeconds: 5, periodSeconds: 10 }, livenessProbe: { exec: { command: ['true'] } } };
    assert.deepEqual(newProbeWorkers(c, 1_000).map((w) => [w.kind, w.nextAt]), [['liveness', 1_000], ['readiness', 6_000]], 'no phase: at the delay exactly');
    // Ticks at 3 s + k * 10 s: the first at or after 6 s (started 1 s + 5 s delay) is 13 s; liveness (no delay) 3 s.
    const origin = () => 3_000;
    assert.deepEqual(newProbeWorkers(c, 1_000, origin).map((w) => [w.kind, w.nextAt]), [['liveness', 3_000], ['readiness', 13_000]]);
    // A restarted instance keeps the ticker: started at 47 s, the ticks of 53 s (liveness) and 53 s (readiness, after 52 s).
    assert.deepEqual(newProbeWorkers(c, 47_000, origin).map((w) => [w.kind, w.nextAt]), [['liveness', 53_000], ['readiness', 53_000]]);
    // A tick exactly at the delay runs then.
    assert.deepEqual(newProbeWorkers(c, 8_000, origin).map((w) => w.nextAt), [13_000, 13_000]);
  });

  it('parses the annotation per container and probe kind, with * for all', () => {
    const m = parseForcedFailures(pod([], {}, { [PROBE_FAIL_ANNOTATION]: 'app=liveness,readiness; sidecar=startup;*=all' }));
    assert.deepEqual([...m.get('app')!].sort(), ['liveness', 'readiness']);
    assert.deepEqual([...m.get('sidecar')!], ['startup']);
    assert.deepEqual([...m.get('*')!].sort(), ['liveness', 'readiness', 'startup']);
  });
});
