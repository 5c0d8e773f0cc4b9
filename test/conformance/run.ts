/**
 * `npm run conformance`: the conformance report of kcm's controllers against
 * the real kube-controller-manager.
 *
 * Each scenario (below) runs twice on the same kind of cluster, a real
 * kube-apiserver and kube-scheduler v1.20 with simulated nodes
 * (test/e2e/real-cluster.ts): once under the real kube-controller-manager,
 * once under `kcm controller-manager`. What the controllers left behind
 * (objects in the scenario's namespace and its events) is normalised
 * (normalize.ts) and diffed; docs/conformance.md gets, per scenario,
 * "identical" or the differences.
 *
 * Needs $KCM_REAL_BIN (default /tmp/k8sbin) with kube-apiserver,
 * kube-scheduler and kube-controller-manager (../shared/tools/build-real-k8s.sh)
 * and etcd on PATH. Usage: npm run conformance [-- scenario-name ...]
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startRealCluster } from '../e2e/real-cluster.js';
import { waitFor, type KcmProcess } from '../e2e/harness.js';
import { diffSnapshots, snapshot, type Snapshot } from './normalize.js';

interface Scenario {
  name: string;
  what: string;
  /** Drives the cluster with kubectl in namespace `ns`; resolves once the controllers settled. */
  run(c: Ctx): Promise<void>;
  /** Resource types whose objects in `ns` are compared (default below). */
  kinds?: string[];
}

interface Ctx {
  ns: string;
  apply(manifest: unknown): Promise<void>;
  kubectl(args: string[]): Promise<string>;
  json(args: string[]): Promise<{ items?: Array<Record<string, unknown>> } & Record<string, unknown>>;
  until(what: string, fn: () => Promise<boolean>, timeoutMs?: number): Promise<void>;
}

const defaultKinds = ['deployments', 'replicasets', 'pods', 'statefulsets', 'daemonsets', 'controllerrevisions', 'jobs', 'services', 'endpoints', 'endpointslices', 'poddisruptionbudgets', 'configmaps', 'serviceaccounts', 'persistentvolumeclaims'];

const container = (image: string, command?: string[]) => ({ name: 'c', image, ...(command ? { command } : {}) });
const podTemplate = (app: string, image = 'nginx:1.25', command?: string[]) => ({ metadata: { labels: { app } }, spec: { containers: [container(image, command)] } });

const readyCount = async (c: Ctx, kind: string, name: string, field: string) => {
  const o = await c.json(['get', kind, name]);
  return ((o.status as Record<string, number> | undefined)?.[field] ?? 0) as number;
};

const scenarios: Scenario[] = [
  {
    name: 'replicaset',
    what: 'A ReplicaSet of 3, then scaled to 1.',
    async run(c) {
      await c.apply({ apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'rs' }, spec: { replicas: 3, selector: { matchLabels: { app: 'rs' } }, template: podTemplate('rs') } });
      await c.until('3 ready', async () => (await readyCount(c, 'rs', 'rs', 'readyReplicas')) === 3);
      await c.kubectl(['scale', 'rs/rs', '--replicas=1']);
      await c.until('1 pod', async () => (await c.json(['get', 'pods', '-l', 'app=rs'])).items!.length === 1 && (await readyCount(c, 'rs', 'rs', 'replicas')) === 1);
    },
  },
  {
    name: 'deployment-rollout',
    what: 'A Deployment of 3, an image update rolled out, a Service selecting it.',
    async run(c) {
      await c.apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template: podTemplate('web') } });
      await c.apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'web' }, spec: { selector: { app: 'web' }, ports: [{ port: 80 }] } });
      await c.until('available', async () => (await readyCount(c, 'deploy', 'web', 'availableReplicas')) === 3);
      await c.kubectl(['set', 'image', 'deploy/web', 'c=nginx:1.26']);
      await c.until('rolled out', async () => {
        const d = await c.json(['get', 'deploy', 'web']);
        const s = d.status as Record<string, number>;
        return s.updatedReplicas === 3 && s.availableReplicas === 3 && s.replicas === 3 && s.observedGeneration === 2 && (await c.json(['get', 'pods', '-l', 'app=web'])).items!.length === 3;
      });
    },
  },
  {
    name: 'deployment-scale-to-zero',
    what: 'A Deployment of 2 scaled to 0.',
    async run(c) {
      await c.apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'zero' }, spec: { replicas: 2, selector: { matchLabels: { app: 'zero' } }, template: podTemplate('zero') } });
      await c.until('available', async () => (await readyCount(c, 'deploy', 'zero', 'availableReplicas')) === 2);
      await c.kubectl(['scale', 'deploy/zero', '--replicas=0']);
      await c.until('no pods', async () => (await c.json(['get', 'pods', '-l', 'app=zero'])).items!.length === 0 && (await readyCount(c, 'deploy', 'zero', 'replicas')) === 0);
    },
  },
  {
    name: 'statefulset',
    what: 'A StatefulSet of 2 with a headless Service, then scaled to 0.',
    async run(c) {
      await c.apply({ apiVersion: 'v1', kind: 'Service', metadata: { name: 'db' }, spec: { clusterIP: 'None', selector: { app: 'db' }, ports: [{ port: 5432 }] } });
      await c.apply({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'db' }, spec: { replicas: 2, serviceName: 'db', selector: { matchLabels: { app: 'db' } }, template: podTemplate('db', 'postgres:16') } });
      await c.until('2 ready', async () => (await readyCount(c, 'sts', 'db', 'readyReplicas')) === 2);
      await c.kubectl(['scale', 'sts/db', '--replicas=0']);
      await c.until('no pods', async () => (await c.json(['get', 'pods', '-l', 'app=db'])).items!.length === 0 && (await readyCount(c, 'sts', 'db', 'replicas')) === 0);
    },
  },
  {
    name: 'daemonset-rollout',
    what: 'A DaemonSet on every node, then an image update rolled out.',
    async run(c) {
      await c.apply({ apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: { name: 'agent' }, spec: { selector: { matchLabels: { app: 'agent' } }, template: podTemplate('agent', 'agent:1') } });
      await c.until('ready everywhere', async () => {
        const s = (await c.json(['get', 'ds', 'agent'])).status as Record<string, number>;
        return s.desiredNumberScheduled > 0 && s.numberReady === s.desiredNumberScheduled;
      });
      await c.kubectl(['set', 'image', 'ds/agent', 'c=agent:2']);
      await c.until('rolled out', async () => {
        const s = (await c.json(['get', 'ds', 'agent'])).status as Record<string, number>;
        const pods = (await c.json(['get', 'pods', '-l', 'app=agent'])).items!;
        return s.updatedNumberScheduled === s.desiredNumberScheduled && s.numberReady === s.desiredNumberScheduled && s.observedGeneration === 2 && pods.length === s.desiredNumberScheduled;
      });
    },
  },
  {
    name: 'job',
    what: 'A Job of 2 completions, 2 at a time, whose pods sleep 1 s.',
    async run(c) {
      await c.apply({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'batch' }, spec: { completions: 2, parallelism: 2, template: { spec: { restartPolicy: 'Never', containers: [container('busybox', ['sh', '-c', 'sleep 1'])] } } } });
      await c.until('complete', async () => {
        const s = (await c.json(['get', 'job', 'batch'])).status as { conditions?: Array<{ type: string; status: string }> };
        return !!s.conditions?.some((x) => x.type === 'Complete' && x.status === 'True');
      }, 60_000);
    },
  },
  {
    name: 'job-failure',
    what: 'A Job whose pod fails, backoffLimit 0.',
    async run(c) {
      await c.apply({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'fails' }, spec: { backoffLimit: 0, template: { spec: { restartPolicy: 'Never', containers: [container('busybox', ['sh', '-c', 'exit 1'])] } } } });
      await c.until('failed', async () => {
        const s = (await c.json(['get', 'job', 'fails'])).status as { conditions?: Array<{ type: string; status: string }> };
        return !!s.conditions?.some((x) => x.type === 'Failed' && x.status === 'True');
      }, 60_000);
    },
  },
  {
    name: 'garbage-collection',
    what: 'A Deployment deleted with background cascading deletion; its ReplicaSet and pods go.',
    async run(c) {
      await c.apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'gone' }, spec: { replicas: 2, selector: { matchLabels: { app: 'gone' } }, template: podTemplate('gone') } });
      await c.until('available', async () => (await readyCount(c, 'deploy', 'gone', 'availableReplicas')) === 2);
      await c.kubectl(['delete', 'deploy/gone', '--cascade=background', '--wait=false']);
      await c.until('dependents gone', async () => (await c.json(['get', 'rs,pods', '-l', 'app=gone'])).items!.length === 0, 60_000);
    },
  },
  {
    name: 'pod-disruption-budget',
    what: 'A PodDisruptionBudget (minAvailable 2) over a Deployment of 3.',
    async run(c) {
      await c.apply({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'guarded' }, spec: { replicas: 3, selector: { matchLabels: { app: 'guarded' } }, template: podTemplate('guarded') } });
      await c.apply({ apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget', metadata: { name: 'guard' }, spec: { minAvailable: 2, selector: { matchLabels: { app: 'guarded' } } } });
      await c.until('budget computed', async () => {
        const s = (await c.json(['get', 'pdb', 'guard'])).status as Record<string, number> | undefined;
        return s?.currentHealthy === 3 && s.disruptionsAllowed === 1;
      });
    },
  },
  {
    name: 'namespace-defaults',
    what: 'What a new namespace gets: the default ServiceAccount and the kube-root-ca.crt ConfigMap.',
    kinds: ['serviceaccounts', 'configmaps'],
    async run(c) {
      await c.until('defaults', async () => (await c.json(['get', 'sa,cm'])).items!.length >= 2);
    },
  },
];

async function runScenario(k: KcmProcess, s: Scenario, ns: string): Promise<Snapshot> {
  const kubectl = async (args: string[]) => k.kubectlOk(['-n', ns, ...args], { timeoutMs: 60_000 });
  const c: Ctx = {
    ns,
    kubectl,
    apply: async (m) => {
      await k.kubectlOk(['-n', ns, 'apply', '-f', '-'], { input: JSON.stringify(m), timeoutMs: 60_000 });
    },
    json: async (args) => JSON.parse(await kubectl([...args, '-o', 'json'])),
    until: async (what, fn, timeoutMs = 90_000) => {
      await waitFor(fn, timeoutMs, `${s.name}: ${what}`, 500);
    },
  };
  await k.kubectlOk(['create', 'namespace', ns]);
  await s.run(c);
  // Let status writes and events that follow the last change land.
  await new Promise((r) => setTimeout(r, 3000));
  const kinds = s.kinds ?? defaultKinds;
  const objects = ((await c.json(['get', kinds.join(',')])).items ?? []) as Array<Record<string, unknown>>;
  const events = ((await c.json(['get', 'events'])).items ?? []) as Array<Record<string, unknown>>;
  // Objects every namespace gets are compared only where the scenario asks for them.
  const own = s.kinds ? objects : objects.filter((o) => !['ServiceAccount', 'ConfigMap'].includes(o.kind as string) && !(o.kind === 'Endpoints' && (o.metadata as { name: string }).name === 'kubernetes'));
  return snapshot(own, events);
}

async function runAll(controllerManager: 'real' | 'kcm', chosen: Scenario[]): Promise<Map<string, Snapshot | Error>> {
  const out = new Map<string, Snapshot | Error>();
  process.stderr.write(`conformance: starting a real API server with ${controllerManager === 'real' ? 'kube-controller-manager' : 'kcm controller-manager'}\n`);
  const k = await startRealCluster({ controllerManager, readyTimeoutMs: 180_000 });
  try {
    for (const s of chosen) {
      process.stderr.write(`conformance: ${controllerManager}: ${s.name}\n`);
      try {
        out.set(s.name, await runScenario(k, s, `conf-${s.name}`));
      } catch (err) {
        out.set(s.name, err as Error);
      }
    }
  } finally {
    await k.stop();
  }
  return out;
}

const code = (v: unknown) => '`' + JSON.stringify(v) + '`';

function report(chosen: Scenario[], real: Map<string, Snapshot | Error>, kcm: Map<string, Snapshot | Error>): string {
  const lines: string[] = [
    '# Conformance: kcm controller-manager against kube-controller-manager',
    '',
    '(The upstream `[Conformance]` e2e tests of Kubernetes v1.20 run against `kcm up`, group by group',
    'with the reason for each failure, are in [upstream-conformance.md](upstream-conformance.md).)',
    '',
    'Written by `npm run conformance` (test/conformance/run.ts). Each scenario runs on a real',
    'kube-apiserver and kube-scheduler v1.20 with simulated nodes (`kcm nodes`), once under the',
    'real kube-controller-manager v1.20 and once under `kcm controller-manager`. The objects in',
    "the scenario's namespace and its events are normalised (uids, resource versions, timestamps,",
    'random name suffixes, template hashes, IPs and node names replaced by placeholders) and compared.',
    'Differences that are deliberate are explained in docs/architecture.md.',
    '',
    `Run on ${new Date().toISOString().slice(0, 10)}.`,
    '',
    '| scenario | result |',
    '| --- | --- |',
  ];
  const details: string[] = [];
  for (const s of chosen) {
    const r = real.get(s.name);
    const k = kcm.get(s.name);
    if (r instanceof Error || k instanceof Error || !r || !k) {
      lines.push(`| ${s.name} | scenario failed (${r instanceof Error ? 'real' : 'kcm'}) |`);
      details.push(`## ${s.name}`, '', s.what, '', '```', ((r instanceof Error ? r : (k as Error))?.message ?? 'no result').slice(0, 1500), '```', '');
      continue;
    }
    const d = diffSnapshots(r, k);
    const n = d.objects.length + d.eventsOnlyReal.length + d.eventsOnlyKcm.length;
    lines.push(`| ${s.name} | ${n === 0 ? 'identical' : `${n} difference${n === 1 ? '' : 's'}`} |`);
    details.push(`## ${s.name}`, '', s.what, '');
    details.push(`Objects compared: ${Object.keys(r.objects).join(', ') || 'none'}.`, '');
    if (n === 0) {
      details.push('Identical.', '');
      continue;
    }
    if (d.objects.length) {
      details.push('| field | kube-controller-manager | kcm |', '| --- | --- | --- |');
      for (const x of d.objects) details.push(`| \`${x.path}\` | ${x.real === undefined ? '(absent)' : code(x.real)} | ${x.kcm === undefined ? '(absent)' : code(x.kcm)} |`);
      details.push('');
    }
    if (d.eventsOnlyReal.length) details.push('Events only from kube-controller-manager:', '', ...d.eventsOnlyReal.map((e) => `- ${e}`), '');
    if (d.eventsOnlyKcm.length) details.push('Events only from kcm:', '', ...d.eventsOnlyKcm.map((e) => `- ${e}`), '');
  }
  return [...lines, '', ...details].join('\n');
}

async function main(): Promise<void> {
  const bin = (process.env.KCM_REAL_BIN ??= '/tmp/k8sbin');
  for (const b of ['kube-apiserver', 'kube-scheduler', 'kube-controller-manager']) {
    if (!existsSync(join(bin, b))) {
      process.stderr.write(`conformance: ${join(bin, b)} not found; build it with ../shared/tools/build-real-k8s.sh or set KCM_REAL_BIN\n`);
      process.exit(2);
    }
  }
  const names = process.argv.slice(2);
  const chosen = names.length ? scenarios.filter((s) => names.includes(s.name)) : scenarios;
  if (chosen.length === 0) {
    process.stderr.write(`conformance: no such scenario; known: ${scenarios.map((s) => s.name).join(', ')}\n`);
    process.exit(2);
  }
  const real = await runAll('real', chosen);
  const kcm = await runAll('kcm', chosen);
  const out = join(process.cwd(), 'docs', 'conformance.md');
  writeFileSync(out, report(chosen, real, kcm) + '\n');
  process.stderr.write(`conformance: wrote ${out}\n`);
}

await main();
