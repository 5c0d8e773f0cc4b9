import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { runtimeHarness, runtimePod as pod } from './runtime-harness.js';

const harness = (p: Parameters<typeof runtimeHarness>[0]) => runtimeHarness(p, '10.244.0.2');

describe('PodRuntime', () => {
  it('starts a long-running container at once and reports Running and Ready', async () => {
    const h = harness(pod([{ name: 'web', image: 'nginx' }]));
    await h.run(0);
    const s = h.status();
    assert.equal(s.phase, 'Running');
    assert.equal(s.podIP, '10.244.0.2');
    const cs = s.containerStatuses![0]!;
    assert.equal(cs.ready, true);
    assert.equal(cs.started, true);
    assert.ok(cs.state?.running?.startedAt);
    assert.match(cs.containerID!, /^kcm:\/\/[0-9a-f]{64}$/);
    assert.equal(cs.image, 'docker.io/library/nginx:latest');
    assert.equal(s.conditions!.find((c) => c.type === 'Ready')!.status, 'True');
    assert.deepEqual(h.events, [
      'Normal Pulled Container image "nginx" already present on machine',
      'Normal Created Created container: web',
      'Normal Started Started container web',
    ]);
  });

  it('pulls on every start when imagePullPolicy is Always, as the kubelet reports it', async () => {
    const h = harness(pod([{ name: 'web', image: 'nginx', imagePullPolicy: 'Always' }]));
    await h.run(0);
    assert.equal(h.events[0], 'Normal Pulling Pulling image "nginx"');
    assert.match(h.events[1]!, /^Normal Pulled Successfully pulled image "nginx" in 0s \(0s including waiting\)\. Image size: \d+ bytes\.$/);
    assert.deepEqual(h.events.slice(2), ['Normal Created Created container: web', 'Normal Started Started container web']);
  });

  it('becomes ready only after the readiness probe initial delay', async () => {
    const h = harness(pod([{ name: 'web', image: 'nginx', ports: [{ containerPort: 80 }], readinessProbe: { initialDelaySeconds: 5, httpGet: { port: 80 } } }]));
    await h.run(4_999);
    let ready = h.status().conditions!.find((c) => c.type === 'Ready')!;
    assert.equal(ready.status, 'False');
    assert.equal(ready.reason, 'ContainersNotReady');
    assert.equal(ready.message, 'containers with unready status: [web]');
    await h.run(1);
    ready = h.status().conditions!.find((c) => c.type === 'Ready')!;
    assert.equal(ready.status, 'True');
  });

  it('fails a Never pod whose command is "sleep 2; exit 1" after 2 s', async () => {
    const h = harness(pod([{ name: 'c', image: 'busybox', command: ['sh', '-c', 'sleep 2; exit 1'] }], { restartPolicy: 'Never' }));
    await h.run(1_999);
    assert.equal(h.status().phase, 'Running');
    await h.run(1);
    const s = h.status();
    assert.equal(s.phase, 'Failed');
    const t = s.containerStatuses![0]!.state!.terminated!;
    assert.equal(t.exitCode, 1);
    assert.equal(t.reason, 'Error');
    assert.equal(Date.parse(t.finishedAt!) - Date.parse(t.startedAt!), 2000);
    // status.GeneratePodReadyCondition for a terminal phase: PodFailed (PodCompleted when Succeeded).
    assert.equal(s.conditions!.find((c) => c.type === 'Ready')!.reason, 'PodFailed');
  });

  it('succeeds a Never pod whose command exits 0', async () => {
    const h = harness(pod([{ name: 'c', image: 'busybox', command: ['sh', '-c', 'exit 0'] }], { restartPolicy: 'Never' }));
    await h.run(0);
    const s = h.status();
    assert.equal(s.phase, 'Succeeded');
    assert.equal(s.containerStatuses![0]!.state!.terminated!.reason, 'Completed');
  });

  it('restarts an OnFailure container with CrashLoopBackOff delays of 10 s doubling to 300 s', async () => {
    const h = harness(pod([{ name: 'c', image: 'busybox', command: ['sh', '-c', 'exit 1'] }], { restartPolicy: 'OnFailure' }));
    await h.run(0);
    let cs = h.status().containerStatuses![0]!;
    // The end shows as terminated until the next sync (PLEG relist, 1 s).
    assert.equal(cs.state!.terminated!.reason, 'Error');
    await h.run(2_000);
    cs = h.status().containerStatuses![0]!;
    // The first restart goes ahead at once (kuberuntime doBackOff); the second waits 10 s after that run ended.
    assert.equal(cs.restartCount, 1);
    assert.equal(cs.state!.waiting!.reason, 'CrashLoopBackOff');
    assert.equal(cs.state!.waiting!.message, 'back-off 10s restarting failed container=c pod=p_ns(u1)');
    assert.equal(cs.lastState!.terminated!.exitCode, 1);
    assert.equal(h.status().phase, 'Running');
    const expected = [10, 20, 40, 80, 160, 300, 300];
    for (let i = 0; i < expected.length; i++) {
      const delay = expected[i]! * 1000;
      await h.run(delay - 1 - 1_000);
      assert.equal(h.status().containerStatuses![0]!.restartCount, i + 1, `still waiting before ${expected[i]}s`);
      await h.run(1);
      cs = h.status().containerStatuses![0]!;
      assert.equal(cs.restartCount, i + 2, `restarted after ${expected[i]}s`);
      await h.run(1_000);
      cs = h.status().containerStatuses![0]!;
      const next = Math.min(delay * 2, 300_000) / 1000;
      assert.match(cs.state!.waiting!.message!, new RegExp(`^back-off ${next >= 60 ? `${Math.floor(next / 60)}m${next % 60}s` : `${next}s`} `));
    }
    assert.ok(h.events.includes('Warning BackOff Back-off restarting failed container c in pod p_ns(u1)'));
  });

  it('restarts a container that exits 0 under restartPolicy Always', async () => {
    const h = harness(pod([{ name: 'c', image: 'busybox', command: ['sleep', '5'] }]));
    await h.run(5_000);
    assert.equal(h.status().containerStatuses![0]!.state!.terminated!.reason, 'Completed');
    await h.run(1_000);
    const cs = h.status().containerStatuses![0]!;
    assert.equal(cs.restartCount, 1);
    assert.ok(cs.state!.running);
    assert.equal(cs.lastState!.terminated!.reason, 'Completed');
  });

  it('reports ErrImagePull then ImagePullBackOff for an image under .invalid', async () => {
    const h = harness(pod([{ name: 'c', image: 'nginx.invalid/x:1' }]));
    await h.run(0);
    let s = h.status();
    assert.equal(s.phase, 'Pending');
    assert.equal(s.containerStatuses![0]!.state!.waiting!.reason, 'ErrImagePull');
    await h.run(1_000);
    s = h.status();
    assert.equal(s.containerStatuses![0]!.state!.waiting!.reason, 'ImagePullBackOff');
    assert.equal(s.containerStatuses![0]!.state!.waiting!.message, 'Back-off pulling image "nginx.invalid/x:1"');
    assert.equal(s.conditions!.find((c) => c.type === 'Ready')!.status, 'False');
    assert.deepEqual(h.events.slice(0, 3).map((e) => e.split(' ').slice(0, 2).join(' ')), ['Normal Pulling', 'Warning Failed', 'Warning Failed']);
    assert.ok(h.events.includes('Normal BackOff Back-off pulling image "nginx.invalid/x:1"'));
    // The next pull attempt comes 10 s after the first failure.
    const pullsBefore = h.events.filter((e) => e.startsWith('Normal Pulling')).length;
    await h.run(9_000);
    assert.equal(h.events.filter((e) => e.startsWith('Normal Pulling')).length, pullsBefore + 1);
  });

  it('runs init containers one after another before the app container', async () => {
    const h = harness(
      pod([{ name: 'app', image: 'nginx' }], {
        initContainers: [
          { name: 'i1', image: 'busybox', command: ['sleep', '1'] },
          { name: 'i2', image: 'busybox', command: ['sleep', '2'] },
        ],
      }),
    );
    await h.run(0);
    let s = h.status();
    assert.equal(s.phase, 'Pending');
    assert.equal(s.conditions!.find((c) => c.type === 'Initialized')!.message, 'containers with incomplete status: [i1 i2]');
    assert.ok(s.initContainerStatuses![0]!.state!.running);
    assert.equal(s.initContainerStatuses![1]!.state!.waiting!.reason, 'PodInitializing');
    assert.equal(s.containerStatuses![0]!.state!.waiting!.reason, 'PodInitializing');
    await h.run(1_000);
    assert.ok(h.status().initContainerStatuses![1]!.state!.running);
    await h.run(2_000);
    s = h.status();
    assert.equal(s.phase, 'Running');
    assert.equal(s.conditions!.find((c) => c.type === 'Initialized')!.status, 'True');
    assert.equal(s.initContainerStatuses![1]!.state!.terminated!.reason, 'Completed');
  });

  it('stops containers for deletion: servers exit 0, sleeps are killed with 137', async () => {
    const h = harness(pod([{ name: 'web', image: 'nginx' }, { name: 's', image: 'busybox', command: ['sleep', '100'] }]));
    await h.run(1_000);
    h.rt.stop(h.clock.now());
    h.rt.finishTermination();
    const s = h.status();
    assert.equal(s.containerStatuses![0]!.state!.terminated!.exitCode, 0);
    assert.equal(s.containerStatuses![1]!.state!.terminated!.exitCode, 137);
    assert.equal(s.phase, 'Failed');
  });
});

describe('image pull rule', () => {
  it('fails images an unpullable pattern matches, and with a pullable list every image outside it', async () => {
    const { isPullable } = await import('./image.js');
    assert.equal(isPullable('nginx'), true);
    assert.equal(isPullable('nginx:broken', { unpullable: ['*:broken'] }), false);
    assert.equal(isPullable('registry.example.com/team/app:1', { unpullable: ['registry.example.com/*'] }), false);
    assert.equal(isPullable('nginx', { unpullable: ['docker.io/library/nginx:latest'] }), false);
    assert.equal(isPullable('busybox', { pullable: ['nginx*', 'docker.io/library/nginx*'] }), false);
    assert.equal(isPullable('nginx:1.25', { pullable: ['nginx*'] }), true);
    assert.equal(isPullable('foo:404', { pullable: ['*'] }), false);
  });
});
