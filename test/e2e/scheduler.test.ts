/**
 * The scheduler with kubectl against `kcm up`: preemption (a cluster filled
 * with low-priority pods, a high-priority Deployment arrives and runs; the
 * victims' owner recreates them and they stay Pending) and profiles from
 * --scheduler-config (a second schedulerName that packs pods).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor, type KcmProcess } from './harness.js';
import { onRealCluster, startCluster } from './cluster.js';

const configDir = mkdtempSync(join(tmpdir(), 'kcm-e2e-sched-'));
const configFile = join(configDir, 'scheduler.yaml');
writeFileSync(
  configFile,
  `apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: packer
  plugins:
    score:
      disabled: [{name: '*'}]
      enabled: [{name: NodeResourcesFit}]
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
`,
);

let kcm: KcmProcess;
before(async () => {
  kcm = await startCluster(onRealCluster ? [] : ['--nodes', '2', '--scheduler-config', configFile]);
});
after(async () => {
  await kcm?.stop();
  rmSync(configDir, { recursive: true, force: true });
});

const apply = (obj: unknown) => kcm.kubectlOk(['apply', '--validate=false', '-f', '-'], { input: JSON.stringify(obj) });
const getJson = async (args: string[]) => JSON.parse(await kcm.kubectlOk(['get', '-o', 'json', ...args]));

interface P {
  metadata: { name: string; deletionTimestamp?: string };
  spec: { nodeName?: string; priority?: number };
  status?: { phase?: string; nominatedNodeName?: string; conditions?: Array<{ type: string; status: string; reason?: string }> };
}

async function pods(ns: string, app: string): Promise<P[]> {
  return ((await getJson(['pods', '-n', ns, '-l', `app=${app}`])).items as P[]).filter((p) => !p.metadata.deletionTimestamp);
}

function deployment(name: string, replicas: number, cpu: string, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'app:1', resources: { requests: { cpu } } }], ...spec },
      },
    },
  };
}

/** Whole cpus each node has left, once at least two nodes are Ready. */
async function freeCpus(): Promise<Map<string, number>> {
  return waitFor(
    async () => {
      const nodes = (await getJson(['nodes'])).items as Array<{ metadata: { name: string }; spec?: { taints?: unknown[] }; status: { allocatable: { cpu: string }; conditions: Array<{ type: string; status: string }> } }>;
      const ready = nodes.filter((n) => n.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True') && !(n.spec?.taints ?? []).length);
      if (ready.length < 2) return undefined;
      const all = (await getJson(['pods', '-A'])).items as Array<{ spec: { nodeName?: string; containers: Array<{ resources?: { requests?: { cpu?: string } } }> } }>;
      const milli = (q: string | undefined) => (!q ? 0 : q.endsWith('m') ? Number(q.slice(0, -1)) : Number(q) * 1000);
      const free = new Map<string, number>();
      for (const n of ready) {
        const used = all.filter((p) => p.spec.nodeName === n.metadata.name).reduce((s, p) => s + p.spec.containers.reduce((t, c) => t + milli(c.resources?.requests?.cpu), 0), 0);
        free.set(n.metadata.name, Math.floor((milli(n.status.allocatable.cpu) - used) / 1000));
      }
      return free;
    },
    60_000,
    'two Ready nodes',
  );
}

describe('scheduler e2e', () => {
  it('serves a second schedulerName from --scheduler-config, which packs pods onto the fullest node', { skip: onRealCluster && 'kcm up flag' }, async () => {
    const ns = 'profiles';
    await kcm.kubectlOk(['create', 'namespace', ns]);
    await kcm.kubectlOk(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(deployment('packed', 3, '10m', { schedulerName: 'packer' })) });
    const placed = await waitFor(async () => {
      const ps = await pods(ns, 'packed');
      return ps.length === 3 && ps.every((p) => p.spec.nodeName) ? ps : undefined;
    }, 60_000, 'packed pods scheduled');
    // MostAllocated puts them together (the node with the most requested already).
    assert.equal(new Set(placed.map((p) => p.spec.nodeName)).size, 1, JSON.stringify(placed.map((p) => p.spec.nodeName)));
    const evs = (await getJson(['events', '-n', ns, '--field-selector', 'reason=Scheduled'])).items as Array<{ source?: { component?: string }; reportingComponent?: string }>;
    assert.ok(evs.length >= 3);
    for (const e of evs) assert.equal(e.source?.component ?? e.reportingComponent, 'packer');
    // A schedulerName no profile serves is left Pending for that other scheduler, with no event.
    await kcm.kubectlOk(['run', 'orphan', '-n', ns, '--image=app:1', '--overrides', JSON.stringify({ spec: { schedulerName: 'not-here' } })]);
    await new Promise((r) => setTimeout(r, 2000));
    const orphan = (await getJson(['pod', 'orphan', '-n', ns])) as P;
    assert.equal(orphan.spec.nodeName, undefined);
    assert.equal(orphan.status?.conditions, undefined);
    // Leave the nodes empty for the next test (these pods of priority 0 would be the first victims).
    await kcm.kubectlOk(['delete', 'namespace', ns, '--wait=false']);
    await waitFor(async () => ((await getJson(['pods', '-n', ns])).items.length === 0 ? true : undefined), 60_000, 'profiles namespace emptied');
  });

  it('preempts low-priority pods for a high-priority Deployment; the recreated victims stay Pending', async () => {
    const ns = 'preemption';
    await kcm.kubectlOk(['create', 'namespace', ns]);
    await apply({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'e2e-low' }, value: 100 });
    await apply({ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: { name: 'e2e-high' }, value: 100000 });
    const free = await freeCpus();
    const fill = [...free.values()].reduce((a, b) => a + b, 0);
    assert.ok(fill >= 2, `room for at least two filler pods: ${JSON.stringify([...free])}`);
    await kcm.kubectlOk(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(deployment('filler', fill, '1', { priorityClassName: 'e2e-low' })) });
    await waitFor(async () => {
      const ps = await pods(ns, 'filler');
      return ps.length === fill && ps.every((p) => p.status?.phase === 'Running') ? true : undefined;
    }, 90_000, `${fill} filler pods Running`);

    await kcm.kubectlOk(['apply', '-n', ns, '-f', '-'], { input: JSON.stringify(deployment('important', 2, '1', { priorityClassName: 'e2e-high' })) });
    const important = await waitFor(async () => {
      const ps = await pods(ns, 'important');
      return ps.length === 2 && ps.every((p) => p.status?.phase === 'Running') ? ps : undefined;
    }, 120_000, 'both important pods Running');
    assert.ok(important.every((p) => p.spec.priority === 100000));

    // Two victims were preempted (events on them), and their ReplicaSet recreated them: Pending, with no nominated node.
    const preempted = await waitFor(async () => {
      const evs = (await getJson(['events', '-n', ns, '--field-selector', 'reason=Preempted'])).items as Array<{ message: string; involvedObject: { name: string }; source?: { component?: string } }>;
      return evs.length >= 2 ? evs : undefined;
    }, 30_000, 'Preempted events').catch(async (err: Error) => {
      throw new Error(`${err.message}\n${await kcm.kubectlOk(['get', 'events', '-n', ns, '--sort-by=.lastTimestamp'])}\n${await kcm.kubectlOk(['get', 'pods', '-A', '-o', 'wide'])}`);
    });
    for (const e of preempted) {
      assert.match(e.involvedObject.name, /^filler-/);
      // Current kube-scheduler names the preemptor by uid; kube-scheduler 1.20 (on a real cluster) by namespace/name.
      assert.match(e.message, onRealCluster ? /^Preempted by \S+\/important-\S+ on node \S+$/ : /^Preempted by pod [0-9a-f-]{36} on node \S+$/);
      assert.equal(e.source?.component, 'default-scheduler');
    }
    const pending = await waitFor(async () => {
      const ps = (await pods(ns, 'filler')).filter((p) => !p.spec.nodeName);
      return ps.length === 2 ? ps : undefined;
    }, 30_000, 'two filler pods Pending');
    await waitFor(async () => {
      const ps = (await pods(ns, 'filler')).filter((p) => !p.spec.nodeName);
      const msgs = ps.map((p) => p.status?.conditions?.find((c) => c.type === 'PodScheduled'));
      return msgs.every((c) => c?.status === 'False' && c.reason === 'Unschedulable') ? true : undefined;
    }, 30_000, 'PodScheduled=False on the recreated victims');
    assert.equal(pending.filter((p) => p.status?.nominatedNodeName).length, 0);
    const failed = (await getJson(['events', '-n', ns, '--field-selector', `involvedObject.name=${pending[0]!.metadata.name},reason=FailedScheduling`])).items as Array<{ message: string }>;
    // kube-scheduler 1.20 has no "preemption:" part yet.
    const expected = onRealCluster ? /^0\/\d+ nodes are available: .*Insufficient cpu/ : /^0\/\d+ nodes are available: .*Insufficient cpu.* preemption: 0\/\d+ nodes are available: .*No preemption victims found for incoming pod/;
    assert.ok(
      failed.some((e) => expected.test(e.message)),
      failed.map((e) => e.message).join('\n'),
    );
    // The filler pods still running are the ones preemption did not need.
    assert.equal((await pods(ns, 'filler')).filter((p) => p.status?.phase === 'Running').length, fill - 2);
  });
});
