/**
 * Restart time of the API server against the size of its database: a data
 * directory holding N objects (ConfigMaps and Pods across 50 namespaces, a
 * tenth of them updated once so the revision log has some history), written
 * straight into SQLite, then started once with `kcm apiserver` (PKI,
 * bootstrap objects) and stopped. Each measured run spawns
 * `node bin/kcm.js apiserver` on it and times process start to the first
 * `GET /readyz` answered 200, then the first LIST of all pods and all
 * ConfigMaps (the reads that follow a restart: informers re-listing) and the
 * server's resident memory. Median of RUNS restarts at each size; then
 * RUNS more restarts each after deleting the stored index image (sqlite.ts),
 * as the first start after an upgrade or a crash without a recent image.
 *
 * `KCM_BENCH_ROOT` runs another build's bin/kcm.js (e.g. a copy of dist/
 * taken before a change); `KCM_BENCH_SIZES` overrides the sizes
 * (comma-separated). `fill(dataDir, n)` is exported to make a data directory
 * for profiling a restart by hand (`node --cpu-prof bin/kcm.js apiserver`).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { KubeObject } from '../src/api/types.js';
import { openSqliteStorage } from '../src/apiserver/storage/index.js';

const RUNS = 3;
const NAMESPACES = 50;

function repoRoot(): string {
  if (process.env.KCM_BENCH_ROOT) return process.env.KCM_BENCH_ROOT;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'bin', 'kcm.js')) && existsSync(join(dir, 'package.json'))) return dir;
    dir = dirname(dir);
  }
  return process.cwd();
}

function configMap(ns: string, name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns, uid: `0a1b2c3d-${name.padStart(12, '0').slice(-12)}`, creationTimestamp: '2026-01-01T00:00:00Z', labels: { app: `app-${name.length % 7}` } },
    data: { 'app.properties': `name=${name}\nreplicas=3\n`, mode: 'production' },
  };
}

function pod(ns: string, name: string): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ns,
      uid: `6b1f3c2e-0d4e-4c1a-9f3b-${name.padStart(12, '0').slice(-12)}`,
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: { app: 'web', 'pod-template-hash': '7d4b9c8f5d' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-7d4b9c8f5d', uid: '0c8e1f7a-2b3d-4e5f-8a9b-1c2d3e4f5a6b', controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      containers: [{ name: 'web', image: 'registry.k8s.io/nginx-slim:0.27', ports: [{ containerPort: 80, protocol: 'TCP' }], terminationMessagePath: '/dev/termination-log', terminationMessagePolicy: 'File', imagePullPolicy: 'IfNotPresent' }],
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 30,
      dnsPolicy: 'ClusterFirst',
      serviceAccountName: 'default',
      nodeName: 'node-1',
      schedulerName: 'default-scheduler',
    },
    status: { phase: 'Running', hostIP: '10.0.0.1', podIP: '10.244.1.17', startTime: '2026-01-01T00:00:01Z', qosClass: 'BestEffort' },
  };
}

/** Writes `n` objects (half ConfigMaps, half Pods) and n/10 updates into `<dataDir>/db`. */
export async function fill(dataDir: string, n: number): Promise<void> {
  const s = openSqliteStorage(join(dataDir, 'db'));
  try {
    const batch = 2000;
    const ns = (i: number) => `ns-${i % NAMESPACES}`;
    for (let i = 0; i < NAMESPACES; i++) await s.create(`/registry/namespaces/${ns(i)}`, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns(i) }, spec: { finalizers: ['kubernetes'] }, status: { phase: 'Active' } });
    for (let i = 0; i < n; i += batch) {
      const writes: Promise<unknown>[] = [];
      for (let j = i; j < Math.min(n, i + batch); j++) {
        const name = `obj-${j}`;
        writes.push(j % 2 === 0 ? s.create(`/registry/configmaps/${ns(j)}/${name}`, configMap(ns(j), name)) : s.create(`/registry/pods/${ns(j)}/${name}`, pod(ns(j), name)));
      }
      await Promise.all(writes);
    }
    const updates: Promise<unknown>[] = [];
    for (let j = 0; j < n; j += 10) {
      const name = `obj-${j}`;
      const cm = configMap(ns(j), name);
      updates.push(s.update(`/registry/configmaps/${ns(j)}/${name}`, { ...cm, data: { ...(cm as { data: Record<string, string> }).data, updated: 'yes' } }));
      if (updates.length >= batch) await Promise.all(updates.splice(0));
    }
    await Promise.all(updates);
  } finally {
    await s.close();
  }
}

function get(port: number, path: string, token?: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {} }, (res) => {
      let bytes = 0;
      res.on('data', (d: Buffer) => (bytes += d.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

interface Started {
  child: ChildProcess;
  port: number;
  /** ms from spawn to the first /readyz 200. */
  readyMs: number;
}

/** Spawns `kcm apiserver` on `dataDir` and waits for /readyz 200. */
function startServer(dataDir: string): Promise<Started> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, [join(repoRoot(), 'bin', 'kcm.js'), 'apiserver', '--data-dir', dataDir, '--secure-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let done = false;
    const fail = (e: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(e);
    };
    const timer = setTimeout(() => fail(new Error(`kcm apiserver not ready after 120 s: ${out} ${err.slice(-500)}`)), 120_000);
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-4000)));
    child.once('exit', (code) => fail(new Error(`kcm apiserver exited (${code}) before ready: ${out} ${err.slice(-500)}`)));
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /listening on https:\/\/[^:]+:(\d+)/.exec(out);
      if (!m || done) return;
      const port = Number(m[1]);
      const poll = (): void => {
        get(port, '/readyz').then(
          (r) => {
            if (r.status === 200) {
              if (done) return;
              done = true;
              clearTimeout(timer);
              child.removeAllListeners('exit');
              resolve({ child, port, readyMs: performance.now() - started });
            } else setTimeout(poll, 5);
          },
          () => setTimeout(poll, 5),
        );
      };
      poll();
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Deletes the stored index image, if this build writes one; true when there was one. */
function dropIndexImage(dataDir: string): boolean {
  const db = new Database(join(dataDir, 'db', 'kcm.db'));
  try {
    return db.prepare('DELETE FROM index_image').run().changes > 0;
  } catch {
    return false; // no such table: a build without the image
  } finally {
    db.close();
  }
}

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fmt = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');

export async function run(): Promise<string[]> {
  const lines: string[] = [];
  const sizes = (process.env.KCM_BENCH_SIZES ?? '4000,68000,100000').split(',').map(Number);
  for (const n of sizes) {
    const dir = mkdtempSync(join(tmpdir(), 'kcm-bench-restart-'));
    try {
      const t0 = performance.now();
      await fill(dir, n);
      const fillMs = performance.now() - t0;
      const first = await startServer(dir);
      await stop(first.child);
      const token = readFileSync(join(dir, 'kubeconfig'), 'utf8').match(/token: (\S+)/)?.[1];
      const ready: number[] = [];
      const listPods: number[] = [];
      const listCms: number[] = [];
      const relist: number[] = [];
      const rss: number[] = [];
      const rssReady: number[] = [];
      for (let i = 0; i < RUNS; i++) {
        const s = await startServer(dir);
        try {
          ready.push(s.readyMs);
          rssReady.push(rssMiB(s.child.pid!));
          let t = performance.now();
          const p = await get(s.port, '/api/v1/pods', token);
          listPods.push(performance.now() - t);
          t = performance.now();
          const c = await get(s.port, '/api/v1/configmaps', token);
          listCms.push(performance.now() - t);
          if (p.status !== 200 || c.status !== 200) throw new Error(`list failed: pods ${p.status}, configmaps ${c.status}`);
          t = performance.now();
          await get(s.port, '/api/v1/pods', token);
          relist.push(performance.now() - t);
          rss.push(rssMiB(s.child.pid!));
        } finally {
          await stop(s.child);
        }
      }
      const noImage: number[] = [];
      let hadImage = false;
      for (let i = 0; i < RUNS; i++) {
        hadImage = dropIndexImage(dir) || hadImage;
        const s = await startServer(dir);
        noImage.push(s.readyMs);
        await stop(s.child);
      }
      const label = `${n.toLocaleString('en-US')} objects (+${Math.ceil(n / 10).toLocaleString('en-US')} updates; written in ${(fillMs / 1000).toFixed(1)} s)`;
      lines.push(`${label}: restart to /readyz 200 ${median(ready).toFixed(0)} ms (median of ${RUNS}; runs ${fmt(ready)}); server RSS at ready ${median(rssReady).toFixed(0)} MiB`);
      lines.push(
        `${label}: then first LIST of all pods ${median(listPods).toFixed(0)} ms, of all ConfigMaps ${median(listCms).toFixed(0)} ms, pods again ${median(relist).toFixed(0)} ms; server RSS after the lists ${median(rss).toFixed(0)} MiB`,
      );
      if (hadImage) lines.push(`${label}: restart without the index image (revision log scanned) ${median(noImage).toFixed(0)} ms (median of ${RUNS}; runs ${fmt(noImage)})`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return lines;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const line of await run()) console.log(line);
}
