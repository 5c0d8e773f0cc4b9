import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runtimeHarness, runtimePod as pod } from './runtime-harness.js';

const harness = runtimeHarness;

describe('termination', () => {
  it('runs an exec preStop "sleep 3", then SIGTERM ends a server at once with 0', async () => {
    const h = harness(pod([{ name: 'web', image: 'nginx', lifecycle: { preStop: { exec: { command: ['sh', '-c', 'sleep 3'] } } } }]));
    await h.at(1);
    h.del(30);
    await h.at(1);
    assert.ok(h.events.includes('Normal Killing Stopping container web'));
    await h.at(3.9);
    assert.ok(h.state('web').running);
    assert.equal(h.rt.stopped, false);
    await h.at(4);
    assert.equal(h.state('web').terminated!.exitCode, 0);
    assert.equal(h.rt.stopped, true);
  });

  it('kills a SIGTERM-ignoring sleep with 137 at the grace period, preStop time included', async () => {
    const h = harness(pod([{ name: 's', image: 'busybox', command: ['sleep', '3600'], lifecycle: { preStop: { exec: { command: ['sleep', '3'] } } } }]));
    await h.at(0);
    h.del(10);
    await h.at(9.9);
    assert.ok(h.state('s').running);
    await h.at(10);
    assert.equal(h.state('s').terminated!.exitCode, 137);
    assert.equal(h.state('s').terminated!.reason, 'Error');
  });

  it('lets a script that ignores SIGTERM finish by itself within the grace period', async () => {
    const h = harness(pod([{ name: 's', image: 'busybox', command: ['sh', '-c', 'sleep 5; exit 3'] }], { restartPolicy: 'Never' }));
    await h.at(0);
    h.del(30);
    await h.at(5);
    assert.equal(h.state('s').terminated!.exitCode, 3);
  });

  it('ends a script with a TERM trap at once, and an httpGet or sleep preStop takes its time', async () => {
    const h = harness(
      pod([
        { name: 't', image: 'busybox', command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 1; done"], lifecycle: { preStop: { httpGet: { port: 80 } } } },
        { name: 'w', image: 'nginx', lifecycle: { preStop: { sleep: { seconds: 2 } } } },
      ]),
    );
    await h.at(0);
    h.del(30);
    await h.at(0);
    assert.equal(h.state('t').terminated!.exitCode, 0);
    assert.ok(h.state('w').running);
    await h.at(2);
    assert.equal(h.state('w').terminated!.exitCode, 0);
  });

  it('takes at least 2 s to kill (the kubelet minimum grace period)', async () => {
    const h = harness(pod([{ name: 's', image: 'busybox', command: ['sleep', '3600'] }]));
    await h.at(0);
    h.del(0);
    await h.at(1.9);
    assert.ok(h.state('s').running);
    await h.at(2);
    assert.equal(h.state('s').terminated!.exitCode, 137);
  });

  it('stops sidecars after the regular containers, in reverse order', async () => {
    const h = harness(
      pod([{ name: 'app', image: 'busybox', command: ['sleep', '3600'] }], {
        initContainers: [
          { name: 'side1', image: 'proxy', restartPolicy: 'Always' },
          { name: 'side2', image: 'busybox', restartPolicy: 'Always', command: ['sleep', 'infinity'] },
        ],
      }),
    );
    await h.at(1);
    assert.ok(h.state('side1').running && h.state('side2').running && h.state('app').running);
    h.del(5);
    await h.at(1);
    assert.deepEqual(h.events.filter((e) => e.includes('Killing')), ['Normal Killing Stopping container app']);
    await h.at(6);
    assert.equal(h.state('app').terminated!.exitCode, 137);
    assert.deepEqual(h.events.filter((e) => e.includes('Killing')).slice(1), ['Normal Killing Stopping container side2']);
    assert.ok(h.state('side1').running);
    // The grace period is used up: side2 gets the 2 s minimum, then side1 (a server) ends at SIGTERM.
    await h.at(8);
    assert.equal(h.state('side2').terminated!.exitCode, 137);
    assert.equal(h.state('side1').terminated!.exitCode, 0);
    assert.equal(h.events.filter((e) => e.includes('Killing')).at(-1), 'Normal Killing Stopping container side1');
    assert.equal(h.rt.stopped, true);
  });
});

describe('lifecycle', () => {
  it('kills a container whose exec postStart hook fails, with the kubelet events, and restarts it', async () => {
    const h = harness(pod([{ name: 'c', image: 'nginx', lifecycle: { postStart: { exec: { command: ['sh', '-c', 'exit 1'] } } } }]));
    await h.at(0);
    assert.ok(
      h.events.includes('Warning FailedPostStartHook Exec lifecycle hook ([sh -c exit 1]) for Container "c" in Pod "p_ns(u1)" failed - error: command \'sh -c exit 1\' exited with 1: , message: ""'),
    );
    assert.ok(h.events.includes('Normal Killing FailedPostStartHook'));
    await h.at(1);
    assert.equal(h.status().containerStatuses![0]!.restartCount, 1);
  });

  it('runs a passing postStart hook without effect', async () => {
    const h = harness(pod([{ name: 'c', image: 'busybox', command: ['sh', '-c', 'touch /tmp/x; sleep 3600'], lifecycle: { postStart: { exec: { command: ['cat', '/tmp/x'] } } } }]));
    await h.at(5);
    assert.ok(h.state('c').running);
    assert.ok(!h.events.some((e) => e.includes('PostStart')));
  });

  it('fails the pod at activeDeadlineSeconds with DeadlineExceeded and kills its containers', async () => {
    const h = harness(pod([{ name: 'web', image: 'nginx' }, { name: 's', image: 'busybox', command: ['sleep', '3600'] }], { activeDeadlineSeconds: 10, terminationGracePeriodSeconds: 3 }));
    await h.at(9.9);
    assert.equal(h.status().phase, 'Running');
    await h.at(10);
    assert.ok(h.events.includes('Normal DeadlineExceeded Pod was active on the node longer than the specified deadline'));
    assert.equal(h.state('web').terminated!.exitCode, 0);
    assert.ok(h.state('s').running);
    assert.equal(h.rt.settled, false);
    // The status manager reports the terminal phase only once no container runs.
    assert.equal(h.status().phase, 'Running');
    assert.equal(h.status().reason, undefined);
    await h.at(13);
    assert.equal(h.state('s').terminated!.exitCode, 137);
    assert.equal(h.rt.settled, true);
    const s = h.status();
    assert.equal(s.phase, 'Failed');
    assert.equal(s.reason, 'DeadlineExceeded');
    assert.equal(s.message, 'Pod was active on the node longer than the specified deadline');
    const ready = s.conditions!.find((c) => c.type === 'Ready')!;
    assert.deepEqual([ready.status, ready.reason], ['False', 'PodFailed']);
  });
});
