/**
 * `npm run chaos`: kill -9, repeatedly, and check that nothing acknowledged
 * is lost and everything converges. Bounded (a few minutes), not part of
 * `npm test`. Prints the figures to record in bench/RESULTS.md.
 *
 *   npm run chaos [-- --rounds 6 --seed 42 --only apiserver|controllers]
 *
 * 1. API server: `kcm apiserver` on a data dir; writers create and update
 *    ConfigMaps (20 in flight) while the process is killed with SIGKILL at a
 *    random moment; it restarts on the same data dir. After each round every
 *    acknowledged create must exist with its last acknowledged update, and
 *    a watch from before the kill answers 410 Gone or resumes in order.
 * 2. Controllers: `kcm up` with 3 nodes; a Deployment scaled between 0 and
 *    200 replicas and rolled to new images while the controller side is
 *    killed with SIGKILL; after each round the Deployment converges (all
 *    replicas available, one active ReplicaSet), with no duplicate pod (no
 *    more pods than replicas), no orphaned pod (every pod controlled by an
 *    existing ReplicaSet), and never more than replicas + maxSurge pods that
 *    are not being deleted.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { seededRandom } from '../../src/util/random/random.js';
import { startKcm, waitFor, type KcmProcess } from '../e2e/harness.js';

interface Args {
  rounds: number;
  seed: number;
  only?: 'apiserver' | 'controllers';
}

function parseArgs(argv: string[]): Args {
  const out: Args = { rounds: 6, seed: Date.now() % 100_000 };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const v = argv[i + 1];
    if (a === '--rounds') out.rounds = Number(v), i++;
    else if (a === '--seed') out.seed = Number(v), i++;
    else if (a === '--only' && (v === 'apiserver' || v === 'controllers')) out.only = v, i++;
    else throw new Error(`chaos: unknown argument ${a} (--rounds N, --seed N, --only apiserver|controllers)`);
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function apiServerRounds(args: Args, random: () => number): Promise<string[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'kcm-chaos-api-'));
  const acked = new Map<string, string>(); // name -> last acknowledged data.v
  let attempted = 0;
  let restartMs = 0;
  let gone = 0;
  let resumed = 0;
  let writes = 0;
  let counted = 0;
  try {
    for (let round = 0; round < args.rounds; round++) {
      const t0 = Date.now();
      const kcm = await startKcm('apiserver', [], { dataDir });
      restartMs += Date.now() - t0;
      // A watch opened before the kill, checked after the restart.
      const list = (await kcm.api('GET', '/api/v1/namespaces/default/configmaps?limit=1')).json as { metadata: { resourceVersion: string } };
      const rvBefore = list.metadata.resourceVersion;
      let stop = false;
      const writer = async (w: number) => {
        for (let i = 0; !stop; i++) {
          const name = `r${round}-w${w}-${i}`;
          attempted++;
          try {
            const c = await kcm.api('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { v: '0' } });
            if (c.status !== 201) continue;
            acked.set(name, '0');
            const created = c.json as { metadata: { resourceVersion: string } };
            const u = await kcm.api('PUT', `/api/v1/namespaces/default/configmaps/${name}`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, resourceVersion: created.metadata.resourceVersion }, data: { v: '1' } });
            if (u.status === 200) acked.set(name, '1');
          } catch {
            return; // the server is gone
          }
        }
      };
      const writers = Array.from({ length: 20 }, (_, w) => writer(w));
      await sleep(300 + random() * 1500);
      kcm.child.kill('SIGKILL');
      stop = true;
      await kcm.exited;
      await Promise.all(writers);
      await kcm.stop({ keepDataDir: true });

      const again = await startKcm('apiserver', [], { dataDir });
      try {
        const stored = new Map(((await again.api('GET', '/api/v1/namespaces/default/configmaps')).json as { items: { metadata: { name: string }; data?: { v?: string } }[] }).items.map((i) => [i.metadata.name, i.data?.v]));
        const lost = [...acked].filter(([n, v]) => !stored.has(n) || (v === '1' && stored.get(n) !== '1'));
        if (lost.length > 0) throw new Error(`round ${round}: ${lost.length} acknowledged writes lost after kill -9, e.g. ${lost.slice(0, 3).map(([n]) => n).join(', ')}`);
        writes += [...acked.values()].reduce((sum, v) => sum + (v === '1' ? 2 : 1), 0) - counted;
        counted = [...acked.values()].reduce((sum, v) => sum + (v === '1' ? 2 : 1), 0);
        const w = await again.api('GET', `/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=${rvBefore}&timeoutSeconds=1`);
        if (w.status === 410 || (typeof w.json === 'string' && w.json.includes('"code":410'))) gone++;
        else resumed++;
      } finally {
        await again.stop({ keepDataDir: true });
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return [
    `API server: ${args.rounds} kill -9 rounds, ${attempted} creates attempted, ${writes} writes (creates and updates) acknowledged, 0 lost; mean start on the same data dir ${Math.round(restartMs / args.rounds)} ms; watches from before the kill: ${resumed} resumed, ${gone} answered 410 Gone`,
  ];
}

interface PodView {
  metadata: { name: string; deletionTimestamp?: string; ownerReferences?: { kind: string; name: string; uid: string; controller?: boolean }[] };
  status?: { phase?: string };
}

async function controllerRounds(args: Args, random: () => number): Promise<string[]> {
  const up: KcmProcess = await startKcm('up', ['--nodes', '3'], { readyTimeoutMs: 90_000 });
  const converge: number[] = [];
  let kills = 0;
  try {
    const json = async <T>(a: string[]) => JSON.parse(await up.kubectlOk([...a, '-o', 'json'], { timeoutMs: 60_000 })) as T;
    await up.kubectlOk(['create', 'deployment', 'web', '--image=nginx:1', '--replicas=5']);
    const sidePid = async () => {
      const { stdout } = await promisify(execFile)('pgrep', ['-P', String(up.child.pid), '-f', 'controller-side-main']).catch(() => ({ stdout: '' }));
      return Number(stdout.trim().split('\n')[0]) || undefined;
    };
    for (let round = 0; round < args.rounds; round++) {
      const replicas = round % 2 === 0 ? 200 : 5 + Math.floor(random() * 20);
      await up.kubectlOk(['scale', 'deployment/web', `--replicas=${replicas}`]);
      await up.kubectlOk(['set', 'image', 'deployment/web', `app=nginx:${round + 2}`]).catch(() => up.kubectlOk(['set', 'image', 'deployment/web', `nginx=nginx:${round + 2}`]));
      await sleep(200 + random() * 2000);
      const pid = await sidePid();
      if (pid) {
        process.kill(pid, 'SIGKILL');
        kills++;
      }
      const t0 = Date.now();
      await waitFor(
        async () => {
          const d = await json<{ status?: { availableReplicas?: number; updatedReplicas?: number; replicas?: number; observedGeneration?: number }; metadata: { generation: number } }>(['get', 'deployment', 'web']);
          return d.status?.observedGeneration === d.metadata.generation && d.status?.availableReplicas === replicas && d.status?.updatedReplicas === replicas && d.status?.replicas === replicas;
        },
        180_000,
        `round ${round}: the deployment to converge at ${replicas}`,
        500,
      );
      converge.push(Date.now() - t0);
      const pods = (await json<{ items: PodView[] }>(['get', 'pods', '-l', 'app=web'])).items.filter((p) => !p.metadata.deletionTimestamp);
      const rss = new Map((await json<{ items: { metadata: { name: string; uid: string }; spec: { replicas: number } }[] }>(['get', 'rs', '-l', 'app=web'])).items.map((r) => [r.metadata.uid, r]));
      if (pods.length !== replicas) throw new Error(`round ${round}: ${pods.length} pods for ${replicas} replicas (duplicates or missing)`);
      const orphans = pods.filter((p) => !p.metadata.ownerReferences?.some((o) => o.controller && rss.has(o.uid)));
      if (orphans.length > 0) throw new Error(`round ${round}: ${orphans.length} orphaned pods, e.g. ${orphans[0]!.metadata.name}`);
      const active = [...rss.values()].filter((r) => r.spec.replicas > 0);
      if (active.length !== 1) throw new Error(`round ${round}: ${active.length} active ReplicaSets after converging`);
    }
  } finally {
    await up.stop();
  }
  const sorted = [...converge].sort((a, b) => a - b);
  return [
    `controller side: ${args.rounds} rounds of scaling (5..200 replicas) and rollouts, ${kills} kill -9 of the controller side; converged every time (median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted[sorted.length - 1]} ms after the kill), no duplicate or orphaned pod, one active ReplicaSet`,
  ];
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const random = seededRandom(args.seed);
  console.log(`chaos: seed ${args.seed}, ${args.rounds} rounds`);
  const lines: string[] = [];
  try {
    if (args.only !== 'controllers') lines.push(...(await apiServerRounds(args, random)));
    if (args.only !== 'apiserver') lines.push(...(await controllerRounds(args, random)));
  } catch (err) {
    console.error(`chaos FAILED (seed ${args.seed}): ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
  for (const l of lines) console.log(`- ${l}`);
  return 0;
}

main().then((code) => process.exit(code));
