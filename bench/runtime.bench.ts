/**
 * kcm/runtime and informer benchmarks against a real API server over HTTP.
 *
 * The API server (kcm/testing's startTestEnv: embedded server, memory
 * storage, one CRD `widgets.bench.kcm.io`) runs in a child process; the
 * setup writer (this process) and each measured client (one forked process
 * per phase, with --expose-gc) are separate processes, so heap and CPU
 * figures of the measured side are its own.
 *
 * 1. kcm/runtime: a manager (leader election off) with one controller
 *    `.for(Widget)`, 4 workers, over 10,000 Widgets: time from start until
 *    every object was reconciled once, reconciles/s, heap per cached object;
 *    then the same with a status write per reconcile (client QPS unlimited).
 * 2. Informers side by side: kcm's newSharedIndexInformer (listWatchFromClient,
 *    no transform, so both caches hold the same objects) against
 *    @kubernetes/client-node's makeInformer, each alone in turn: time to
 *    sync (list done, all adds delivered), heap per cached object, watch
 *    events while another client makes 5,000 merge patches (live, bound by
 *    the server's write rate; the informer's CPU per event is its own cost),
 *    and the same 5,000 events replayed from the server's history
 *    (a watch from the resourceVersion of an earlier list: ingest capacity).
 *    Each informer runs twice (kcm, client-node, client-node, kcm); each
 *    metric is the better run.
 *
 * Run: node scripts/run-bench.mjs runtime (after tsc); not part of npm test.
 * BENCH_CPU_PROF=<dir> writes a CPU profile of each measured process there.
 */
import { fork, spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { KubeList, KubeObject } from '../src/api/types.js';
import { GVR } from '../src/api/gvr.js';
import { newKubeClient, type KubeClient } from '../src/client/client.js';
import { newRestConfig } from '../src/client/rest-config.js';
import type { ListerWatcher } from '../src/tools/cache/interfaces.js';
import { listWatchFromClient } from '../src/tools/cache/list-watch.js';
import { newSharedIndexInformer } from '../src/tools/cache/shared-informer.js';
import { namespaceIndexers } from '../src/tools/cache/store.js';
import { newManager } from '../src/runtime/manager.js';
import { controller } from '../src/runtime/builder.js';
import { defineKind } from '../src/runtime/kinds.js';
import { generationChanged } from '../src/runtime/predicates.js';
import { setLogOutput } from '../src/util/log/logger.js';

const OBJECTS = 10_000;
const NAMESPACES = 10;
const CREATE_IN_FLIGHT = 50;
const PATCHES = 5_000;
const PATCH_IN_FLIGHT = 50;
const WORKERS = 4;

const GROUP = 'bench.kcm.io';
const VERSION = 'v1';
const PLURAL = 'widgets';
const WIDGET_GVR = { group: GROUP, version: VERSION, resource: PLURAL };

interface WidgetSpec {
  color: string;
  size: string;
  replicas: number;
  image: string;
  revision: number;
}
interface WidgetStatus {
  observedGeneration?: number;
  phase?: string;
  readyReplicas?: number;
}
interface Widget extends KubeObject {
  spec: WidgetSpec;
  status?: WidgetStatus;
}

const widgetCrd: CustomResourceDefinition = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `${PLURAL}.${GROUP}` },
  spec: {
    group: GROUP,
    scope: 'Namespaced',
    names: { kind: 'Widget', listKind: 'WidgetList', plural: PLURAL, singular: 'widget' },
    versions: [
      {
        name: VERSION,
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                properties: {
                  color: { type: 'string' },
                  size: { type: 'string', enum: ['small', 'medium', 'large'] },
                  replicas: { type: 'integer', minimum: 0 },
                  image: { type: 'string' },
                  revision: { type: 'integer' },
                },
              },
              status: {
                type: 'object',
                properties: {
                  observedGeneration: { type: 'integer', format: 'int64' },
                  phase: { type: 'string' },
                  readyReplicas: { type: 'integer' },
                },
              },
            },
          },
        },
      },
    ],
  },
};

const COLORS = ['red', 'green', 'blue', 'amber', 'violet'];
const SIZES = ['small', 'medium', 'large'];

function nsOf(i: number): string {
  return `bench-${i % NAMESPACES}`;
}
function nameOf(i: number): string {
  return `widget-${String(i).padStart(5, '0')}`;
}
function newWidget(i: number): Widget {
  return {
    apiVersion: `${GROUP}/${VERSION}`,
    kind: 'Widget',
    metadata: { name: nameOf(i), namespace: nsOf(i), labels: { app: 'bench', shard: `s${i % 16}` } },
    spec: {
      color: COLORS[i % COLORS.length]!,
      size: SIZES[i % SIZES.length]!,
      replicas: 1 + (i % 5),
      image: `registry.example.com/widgets/server:v1.${i % 7}.0`,
      revision: 100,
    },
  };
}

// ---------------------------------------------------------------- helpers

const now = () => performance.now();
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function settle(): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((r) => setImmediate(r));
  }
}
const heap = () => process.memoryUsage().heapUsed;
function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

/** Counts events and resolves waiters at a threshold. */
class Counter {
  n = 0;
  private waiters: Array<{ at: number; resolve: (t: number) => void }> = [];
  hit(): void {
    this.n++;
    if (this.waiters.length === 0) return;
    const t = now();
    this.waiters = this.waiters.filter((w) => {
      if (this.n < w.at) return true;
      w.resolve(t);
      return false;
    });
  }
  /** Resolves with the time the count reached `at`. */
  reach(at: number, timeoutMs: number, what: string): Promise<number> {
    if (this.n >= at) return Promise.resolve(now());
    return new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${what}: ${this.n} of ${at} after ${timeoutMs} ms`)), timeoutMs);
      this.waiters.push({
        at,
        resolve: (t) => {
          clearTimeout(timer);
          resolve(t);
        },
      });
    });
  }
}

async function pool(count: number, inFlight: number, fn: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

// ---------------------------------------------------------------- the API server child

interface ServerProc {
  url: string;
  child: ChildProcess;
  /** utime + stime of the server process, in ms. */
  cpuMs(): number;
  waitIdle(): Promise<void>;
  stop(): Promise<void>;
}

let clockTicks = 100;
try {
  clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
} catch {
  // keep 100
}

function procCpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicks;
}

/** Keeps the last few KB of a stream (drained, so the child never blocks on a full pipe). */
function tail(stream: NodeJS.ReadableStream | null): () => string {
  let buf = '';
  stream?.setEncoding('utf8');
  stream?.on('data', (s: string) => {
    buf = (buf + s).slice(-4000);
  });
  return () => buf;
}

async function startServer(): Promise<ServerProc> {
  const testEnv = fileURLToPath(new URL('../src/testing/test-env.js', import.meta.url));
  const script = [
    `import { startTestEnv } from ${JSON.stringify(testEnv)};`,
    `const env = await startTestEnv({ crds: [${JSON.stringify(widgetCrd)}] });`,
    `process.stdout.write(env.url + '\\n');`,
    `process.on('SIGTERM', () => { env.stop().finally(() => process.exit(0)); });`,
  ].join('\n');
  const child = spawn(process.execPath, ['--max-old-space-size=4096', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  const errTail = tail(child.stderr);
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (s: Buffer) => {
      out += s.toString('utf8');
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        child.stdout!.off('data', onData);
        child.stdout!.resume();
        resolve(out.slice(0, nl).trim());
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`API server exited (${code}): ${errTail()}`)));
    setTimeout(() => reject(new Error(`API server did not start in 60 s: ${errTail()}`)), 60_000).unref();
  });
  const pid = child.pid!;
  return {
    url,
    child,
    cpuMs: () => procCpuMs(pid),
    async waitIdle() {
      // Idle: under 5 % of a core over 250 ms (at most 20 s).
      const deadline = Date.now() + 20_000;
      let last = procCpuMs(pid);
      while (Date.now() < deadline) {
        await sleep(250);
        const c = procCpuMs(pid);
        if (c - last < 12.5) return;
        last = c;
      }
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(t);
    },
  };
}

// ---------------------------------------------------------------- measured phases (child processes)

type PhaseName = 'runtime-read' | 'runtime-write' | 'informer-kcm' | 'informer-client-node';

type ToChild = { type: 'go' };
type FromChild =
  | { type: 'mark'; name: string }
  | { type: 'ready' }
  | { type: 'result'; result: Record<string, number | string> }
  | { type: 'error'; message: string };

interface PhaseIO {
  send(msg: FromChild): void;
  /** Resolves at the parent's next 'go'. */
  go(): Promise<void>;
}

function childIO(): PhaseIO {
  const waiting: Array<() => void> = [];
  process.on('message', (m: ToChild) => {
    if (m.type === 'go') waiting.shift()?.();
  });
  return {
    send: (msg) => process.send!(msg),
    go: () => new Promise<void>((r) => waiting.push(r)),
  };
}

const Widget = defineKind<Widget>({ group: GROUP, version: VERSION, kind: 'Widget', plural: PLURAL, namespaced: true });

async function phaseRuntime(url: string, write: boolean, io: PhaseIO): Promise<Record<string, number | string>> {
  setLogOutput(() => {});
  await settle();
  const before = heap();
  const mgr = newManager({ name: 'bench', restConfig: newRestConfig({ host: url, qps: -1 }), leaderElection: false });
  const reconciled = new Counter();
  let writes = 0;
  controller(mgr)
    .for(Widget, write ? { predicates: [generationChanged()] } : {})
    .withOptions({ maxConcurrentReconciles: WORKERS })
    .complete(async (ctx) => {
      const w = await ctx.get();
      if (!w) return;
      if (write) {
        const gen = w.metadata?.generation;
        if (w.status?.observedGeneration !== gen) {
          w.status = { observedGeneration: gen, phase: 'Ready', readyReplicas: w.spec.replicas };
          await ctx.client.updateStatus(w);
          writes++;
        }
      }
      reconciled.hit();
    });
  const ac = new AbortController();
  io.send({ type: 'mark', name: 'start' });
  const cpu0 = process.cpuUsage();
  const t0 = now();
  const running = mgr.start(ac.signal);
  let syncedAt = 0;
  void mgr.cache.waitForSync(ac.signal).then((ok) => {
    if (ok) syncedAt = now();
  });
  const doneAt = await Promise.race([reconciled.reach(OBJECTS, 120_000, 'reconciles'), running.then(() => Promise.reject(new Error('manager stopped early')))]);
  const cpu = cpuMs(cpu0);
  io.send({ type: 'mark', name: 'done' });
  // Let stragglers (none expected) finish, then weigh the full cache.
  await sleep(200);
  await settle();
  const after = heap();
  const cached = await mgr.client.list(Widget);
  const sample = cached[0]!;
  const cachedJson = cached.reduce((s, o) => s + JSON.stringify(o).length, 0) / cached.length;
  const live = (await mgr.client.live.get(Widget, { namespace: sample.metadata!.namespace!, name: sample.metadata!.name! }))!;
  const liveJson = JSON.stringify(live).length;
  ac.abort();
  await running;
  return {
    objects: cached.length,
    totalMs: doneAt - t0,
    syncMs: syncedAt ? syncedAt - t0 : NaN,
    reconciles: reconciled.n,
    writes,
    cpuMs: cpu,
    heapPerObject: (after - before) / cached.length,
    cachedJson,
    liveJson,
  };
}

interface InformerUnderTest {
  /** Starts an informer counting adds and updates; `list` replaces its first list (the replay). */
  start(adds: Counter, updates: Counter, firstList?: unknown): { stop(): Promise<void>; size(): number; items(): readonly unknown[]; watchStartedAt(): number };
  /** A plain list of every Widget through this client (for the replay). */
  list(): Promise<unknown>;
  /** One small request, so connection and first-request costs are not measured. */
  warm(): Promise<unknown>;
  errors(): number;
}

function kcmInformer(url: string): InformerUnderTest {
  const client = newKubeClient(newRestConfig({ host: url, qps: -1 }));
  const ri = client.resource<KubeObject>(WIDGET_GVR);
  return {
    errors: () => 0,
    list: () => ri.list({}),
    warm: () => ri.list({ limit: 1 }),
    start(adds, updates, firstList) {
      let lw: ListerWatcher<KubeObject> = listWatchFromClient(ri);
      let watchAt = 0;
      if (firstList) {
        // The replay: the first list is an earlier one; the watch waits until every add was delivered.
        let listed = false;
        const inner = lw;
        lw = {
          list: async (o) => {
            if (listed) return inner.list(o);
            listed = true;
            return firstList as KubeList<KubeObject>;
          },
          watch: async (o, signal) => {
            await adds.reach(OBJECTS, 60_000, 'replay adds');
            watchAt ||= now();
            return inner.watch(o, signal);
          },
        };
      }
      const inf = newSharedIndexInformer<KubeObject>(lw, { name: 'widgets', indexers: namespaceIndexers() });
      inf.addEventHandler({ onAdd: () => adds.hit(), onUpdate: () => updates.hit() });
      const ac = new AbortController();
      const running = inf.run(ac.signal);
      return {
        size: () => inf.getStore().listKeys().length,
        items: () => inf.getStore().list(),
        watchStartedAt: () => watchAt,
        async stop() {
          ac.abort();
          await running;
        },
      };
    },
  };
}

async function clientNodeInformer(url: string): Promise<InformerUnderTest> {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  // client-node 1.4.0 refuses an http:// server unless skipTLSVerify is set (KubeConfig.createAgent).
  kc.loadFromOptions({
    clusters: [{ name: 'bench', server: url, skipTLSVerify: true }],
    users: [{ name: 'bench' }],
    contexts: [{ name: 'bench', cluster: 'bench', user: 'bench' }],
    currentContext: 'bench',
  });
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  const path = `/apis/${GROUP}/${VERSION}/${PLURAL}`;
  type Obj = import('@kubernetes/client-node').KubernetesObject;
  type List = import('@kubernetes/client-node').KubernetesListObject<Obj>;
  const listAll = () => api.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL }) as Promise<List>;
  let errors = 0;
  return {
    errors: () => errors,
    list: listAll,
    warm: () => api.listClusterCustomObject({ group: GROUP, version: VERSION, plural: PLURAL, limit: 1 }),
    start(adds, updates, firstList) {
      let listed = !firstList;
      let watchAt = 0;
      const inf = k8s.makeInformer<Obj>(kc, path, () => {
        if (listed) return listAll();
        listed = true;
        return Promise.resolve(firstList as List);
      });
      inf.on('add', () => {
        adds.hit();
        // Its list is delivered synchronously before it opens the watch.
        if (firstList && adds.n === OBJECTS) watchAt = now();
      });
      inf.on('update', () => updates.hit());
      let stopping = false;
      inf.on('error', () => {
        // client-node's informer stops on an error; its documented remedy is to start it again.
        if (stopping) return;
        errors++;
        setTimeout(() => void inf.start().catch(() => {}), 1_000);
      });
      void inf.start().catch(() => {});
      return {
        size: () => inf.list().length,
        items: () => inf.list(),
        watchStartedAt: () => watchAt,
        async stop() {
          stopping = true;
          await inf.stop();
        },
      };
    },
  };
}

async function phaseInformer(url: string, which: 'kcm' | 'client-node', io: PhaseIO): Promise<Record<string, number | string>> {
  setLogOutput(() => {});
  // Clients and modules are loaded before the heap baseline: only the cache is weighed.
  const impl = which === 'kcm' ? kcmInformer(url) : await clientNodeInformer(url);
  await impl.warm();
  await settle();
  const before = heap();
  const adds = new Counter();
  const updates = new Counter();
  io.send({ type: 'mark', name: 'start' });
  let cpu0 = process.cpuUsage();
  let t0 = now();
  const first = impl.start(adds, updates);
  const syncedAt = await adds.reach(OBJECTS, 120_000, 'initial adds');
  const syncCpu = cpuMs(cpu0);
  io.send({ type: 'mark', name: 'synced' });
  const syncMs = syncedAt - t0;
  await sleep(100);
  await settle();
  const after = heap();
  const size = first.size();
  const json = first.items().reduce<number>((s, o) => s + JSON.stringify(o).length, 0) / size;
  const heapPerObject = (after - before) / size;

  // Live: another client patches 5,000 objects; count the updates delivered.
  const snapshot = await impl.list();
  io.send({ type: 'ready' });
  await io.go();
  cpu0 = process.cpuUsage();
  t0 = now();
  const liveAt = await updates.reach(PATCHES, 120_000, 'live updates');
  const liveCpu = cpuMs(cpu0);
  io.send({ type: 'mark', name: 'live-done' });
  const liveMs = liveAt - t0;
  await first.stop();
  await sleep(100);
  await settle();

  // Replay: a new informer whose first list is the one from before the patches; its watch
  // (opened once every add was delivered) gets the 5,000 MODIFIED events from the server's history.
  const adds2 = new Counter();
  const updates2 = new Counter();
  const second = impl.start(adds2, updates2, snapshot);
  await adds2.reach(OBJECTS, 60_000, 'replay adds');
  cpu0 = process.cpuUsage();
  io.send({ type: 'mark', name: 'replay' });
  const replayAt = await updates2.reach(PATCHES, 120_000, 'replay updates');
  const replayCpu = cpuMs(cpu0);
  io.send({ type: 'mark', name: 'replay-done' });
  const replayMs = replayAt - second.watchStartedAt();
  await second.stop();
  return {
    objects: size,
    syncMs,
    syncCpuMs: syncCpu,
    heapPerObject,
    json,
    liveMs,
    liveCpuMs: liveCpu,
    replayMs,
    replayCpuMs: replayCpu,
    errors: impl.errors(),
  };
}

async function runPhase(name: PhaseName, url: string): Promise<void> {
  const io = childIO();
  try {
    const result =
      name === 'runtime-read'
        ? await phaseRuntime(url, false, io)
        : name === 'runtime-write'
          ? await phaseRuntime(url, true, io)
          : await phaseInformer(url, name === 'informer-kcm' ? 'kcm' : 'client-node', io);
    io.send({ type: 'result', result });
  } catch (err) {
    io.send({ type: 'error', message: String((err as Error)?.stack ?? err) });
  }
  process.disconnect?.();
  setTimeout(() => process.exit(0), 50);
}

// ---------------------------------------------------------------- orchestration (this process)

interface PhaseRun {
  result: Record<string, number>;
  /** Server CPU ms between marks, keyed `from->to`. */
  serverCpu: Record<string, number>;
  /** Wall ms of the patch writer (informer phases). */
  writerMs?: number;
}

async function forkPhase(name: PhaseName, server: ServerProc, onReady?: (child: ChildProcess) => Promise<number>): Promise<PhaseRun> {
  await server.waitIdle();
  // BENCH_CPU_PROF=<dir>: write a CPU profile of each measured process there.
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`, `--cpu-prof-name=${name}.cpuprofile`] : [];
  const child = fork(fileURLToPath(import.meta.url), ['--phase', name, server.url], {
    execArgv: ['--expose-gc', '--max-old-space-size=4096', ...prof],
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const errTail = tail(child.stderr);
  tail(child.stdout);
  const marks: Array<[string, number]> = [];
  let writerMs: number | undefined;
  const result = await new Promise<Record<string, number>>((resolve, reject) => {
    child.on('message', (m: FromChild) => {
      if (m.type === 'mark') marks.push([m.name, server.cpuMs()]);
      else if (m.type === 'ready') {
        void (async () => {
          await server.waitIdle();
          marks.push(['go', server.cpuMs()]);
          child.send({ type: 'go' } satisfies ToChild);
          writerMs = await onReady!(child);
        })().catch(reject);
      } else if (m.type === 'result') resolve(m.result as Record<string, number>);
      else if (m.type === 'error') reject(new Error(`${name}: ${m.message}`));
    });
    child.once('exit', (code) => reject(new Error(`${name} exited (${code}) without a result: ${errTail()}`)));
  });
  await new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
  const serverCpu: Record<string, number> = {};
  for (let i = 1; i < marks.length; i++) serverCpu[`${marks[i - 1]![0]}->${marks[i]![0]}`] = marks[i]![1] - marks[i - 1]![1];
  return { result, serverCpu, writerMs };
}

async function createWidgets(client: KubeClient): Promise<number> {
  const nsApi = client.resource(GVR.namespaces);
  for (let n = 0; n < NAMESPACES; n++) await nsApi.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: `bench-${n}` } });
  const ri = client.resource<Widget>(WIDGET_GVR);
  const t0 = now();
  await pool(OBJECTS, CREATE_IN_FLIGHT, (i) => ri.namespace(nsOf(i)).create(newWidget(i)));
  return now() - t0;
}

/** 5,000 merge patches of objects 0..4999 (spec.revision, same width), 50 in flight, by the setup client. */
function patcher(client: KubeClient, revision: number): () => Promise<number> {
  const ri = client.resource<Widget>(WIDGET_GVR);
  return async () => {
    const t0 = now();
    await pool(PATCHES, PATCH_IN_FLIGHT, (i) => ri.namespace(nsOf(i)).patch(nameOf(i), 'merge', { spec: { revision } }));
    return now() - t0;
  };
}

export async function run(): Promise<string[]> {
  if (!(globalThis as { gc?: unknown }).gc) return ['runtime: skipped, run node with --expose-gc'];
  const lines: string[] = [];
  const server = await startServer();
  const client = newKubeClient(newRestConfig({ host: server.url, qps: -1 }));
  try {
    const createMs = await createWidgets(client);
    lines.push(
      `setup: API server (startTestEnv, memory storage) in its own process; ${fmt(OBJECTS)} Widgets (CRD ${PLURAL}.${GROUP}, ${NAMESPACES} namespaces) created with ${CREATE_IN_FLIGHT} in flight in ${fmt(createMs / 1000, 2)} s = ${fmt(OBJECTS / (createMs / 1000))} creates/s`,
    );

    // Informers, each alone, on the same objects, twice in the order kcm, client-node, client-node, kcm;
    // each metric is the better of the two runs (other work may share the machine).
    const kcmRuns: PhaseRun[] = [];
    const cnRuns: PhaseRun[] = [];
    let revision = 101;
    kcmRuns.push(await forkPhase('informer-kcm', server, patcher(client, revision++)));
    cnRuns.push(await forkPhase('informer-client-node', server, patcher(client, revision++)));
    cnRuns.push(await forkPhase('informer-client-node', server, patcher(client, revision++)));
    kcmRuns.push(await forkPhase('informer-kcm', server, patcher(client, revision++)));
    const best = (runs: PhaseRun[], key: string) => runs.reduce((a, b) => (b.result[key]! < a.result[key]! ? b : a));
    const inf = (label: string, runs: PhaseRun[]) => {
      const s = best(runs, 'syncMs');
      const h = best(runs, 'heapPerObject');
      const l = best(runs, 'liveMs');
      const r = best(runs, 'replayMs');
      const errors = runs.reduce((n, p) => n + p.result.errors!, 0);
      return [
        `${label}: sync of ${fmt(s.result.objects!)} Widgets (list + all adds delivered) ${fmt(s.result.syncMs!)} ms (informer CPU ${fmt(s.result.syncCpuMs!)} ms, server CPU ${fmt(s.serverCpu['start->synced'] ?? NaN)} ms)`,
        `${label}: heap per cached object ${fmt(h.result.heapPerObject!)} B vs ${fmt(h.result.json!)} B of JSON = ${(h.result.heapPerObject! / h.result.json!).toFixed(2)}x (objects as served, managedFields kept)`,
        `${label}: live watch, ${fmt(PATCHES)} merge patches by another client (${PATCH_IN_FLIGHT} in flight, writer done in ${fmt(l.writerMs! / 1000, 2)} s): all delivered in ${fmt(l.result.liveMs! / 1000, 2)} s = ${fmt(PATCHES / (l.result.liveMs! / 1000))} events/s (bound by the server's writes: server CPU ${fmt(l.serverCpu['go->live-done'] ?? NaN)} ms); informer CPU ${fmt((l.result.liveCpuMs! * 1000) / PATCHES, 1)} µs/event`,
        `${label}: replayed watch, the same ${fmt(PATCHES)} MODIFIED events from the server's history: ${fmt(r.result.replayMs!)} ms = ${fmt(PATCHES / (r.result.replayMs! / 1000))} events/s; informer CPU ${fmt((r.result.replayCpuMs! * 1000) / PATCHES, 1)} µs/event, server CPU ${fmt(r.serverCpu['replay->replay-done'] ?? NaN)} ms${errors ? `; ${errors} informer errors (restarted)` : ''}`,
      ];
    };
    lines.push(...inf('kcm informer (newSharedIndexInformer + listWatchFromClient), best of 2', kcmRuns));
    lines.push(...inf('client-node 1.4.0 informer (makeInformer + CustomObjectsApi list), best of 2', cnRuns));
    const k = (key: string) => best(kcmRuns, key).result;
    const c = (key: string) => best(cnRuns, key).result;
    lines.push(`kcm vs client-node: time to sync ${ratio(k('syncMs').syncMs!, c('syncMs').syncMs!)} (${fmt(k('syncMs').syncMs!)} vs ${fmt(c('syncMs').syncMs!)} ms)`);
    lines.push(
      `kcm vs client-node: heap per cached object ${ratio(k('heapPerObject').heapPerObject!, c('heapPerObject').heapPerObject!)} (${fmt(k('heapPerObject').heapPerObject!)} vs ${fmt(c('heapPerObject').heapPerObject!)} B)`,
    );
    const kl = k('liveMs');
    const cl = c('liveMs');
    lines.push(
      `kcm vs client-node: live watch events/s ${ratio(cl.liveMs!, kl.liveMs!)} (${fmt(PATCHES / (kl.liveMs! / 1000))} vs ${fmt(PATCHES / (cl.liveMs! / 1000))}); informer CPU per event ${ratio(kl.liveCpuMs!, cl.liveCpuMs!)}`,
    );
    const kr = k('replayMs');
    const cr = c('replayMs');
    lines.push(
      `kcm vs client-node: replayed watch events/s ${ratio(cr.replayMs!, kr.replayMs!)} (${fmt(PATCHES / (kr.replayMs! / 1000))} vs ${fmt(PATCHES / (cr.replayMs! / 1000))}); informer CPU per event ${ratio(kr.replayCpuMs!, cr.replayCpuMs!)}`,
    );

    // kcm/runtime.
    const rt = (label: string, p: PhaseRun, extra: string) => {
      const r = p.result;
      return `${label}: ${fmt(r.objects!)} Widgets each reconciled once ${fmt(r.totalMs! / 1000, 2)} s after manager start (cache synced at ${fmt(r.syncMs!)} ms) = ${fmt(r.reconciles! / (r.totalMs! / 1000))} reconciles/s, ${fmt(r.reconciles! / ((r.totalMs! - r.syncMs!) / 1000))}/s after the sync${extra}; manager CPU ${fmt(r.cpuMs!)} ms, server CPU ${fmt(p.serverCpu['start->done'] ?? NaN)} ms`;
    };
    const reads = [await forkPhase('runtime-read', server), await forkPhase('runtime-read', server)];
    const read = best(reads, 'totalMs');
    lines.push(rt(`kcm/runtime, reconcile = ctx.get() only, ${WORKERS} workers, best of 2`, read, ''));
    const rr = best(reads, 'heapPerObject').result;
    lines.push(
      `kcm/runtime: heap per cached object ${fmt(rr.heapPerObject!)} B (whole manager, after gc) vs ${fmt(rr.cachedJson!)} B of JSON as cached (managedFields dropped) = ${(rr.heapPerObject! / rr.cachedJson!).toFixed(2)}x; one object as served: ${fmt(rr.liveJson!)} B of JSON`,
    );
    const wr = await forkPhase('runtime-write', server);
    lines.push(
      rt(
        `kcm/runtime, reconcile = ctx.get() + ctx.client.updateStatus(), ${WORKERS} workers, client QPS unlimited (qps -1), generationChanged() filter`,
        wr,
        ` (${fmt(wr.result.writes!)} status writes)`,
      ),
    );
  } finally {
    await client.close();
    await server.stop();
  }
  return lines;
}

if (process.argv[2] === '--phase') {
  await runPhase(process.argv[3] as PhaseName, process.argv[4]!);
} else if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of await run()) console.log(line);
}
