/**
 * Two replicas of one kcm/runtime operator (separate processes) against the
 * embedded API server: one leads and reconciles, the other waits; when the
 * leader is killed (SIGKILL: no release of the Lease) the other takes over
 * once the lease expires, and every Widget still has exactly one child. A
 * leader stopped with SIGTERM finishes, releases the Lease and exits 0.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { Lease } from 'kubernetes-types/coordination/v1.js';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../src/api/gvr.js';
import type { KubeObject } from '../../src/api/types.js';
import { startTestEnv, type TestEnv } from '../../src/testing/test-env.js';
import { setLogOutput } from '../../src/util/log/logger.js';

const fixture = new URL('./fixtures/widget-manager.js', import.meta.url).pathname;

const crd: CustomResourceDefinition = {
  metadata: { name: 'widgets.test.kcm.io' },
  spec: {
    group: 'test.kcm.io',
    scope: 'Namespaced',
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: { type: 'object', properties: { size: { type: 'integer' } } },
              status: { type: 'object', properties: { child: { type: 'string' } } },
            },
          },
        },
      },
    ],
  },
};

interface Replica {
  proc: ChildProcess;
  out: string[];
  exited: Promise<void>;
}

function startReplica(url: string, identity: string): Replica {
  const proc = spawn(process.execPath, [fixture, url, identity], { stdio: ['ignore', 'pipe', 'pipe'] });
  const out: string[] = [];
  let buf = '';
  proc.stdout!.setEncoding('utf8');
  proc.stdout!.on('data', (chunk: string) => {
    buf += chunk;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      out.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
  proc.stderr!.setEncoding('utf8');
  proc.stderr!.on('data', (chunk: string) => out.push(`stderr: ${chunk.trim()}`));
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  return { proc, out, exited };
}

async function waitFor(cond: () => boolean | Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('kcm/runtime leader election across processes', () => {
  let env: TestEnv;
  const replicas: Replica[] = [];
  let restoreLog: (line: string) => void;

  before(async () => {
    restoreLog = setLogOutput(() => {});
    env = await startTestEnv({ crds: [crd] });
  });
  after(async () => {
    for (const r of replicas) r.proc.kill('SIGKILL');
    await Promise.all(replicas.map((r) => r.exited));
    await env.stop();
    setLogOutput(restoreLog);
  });

  it('has one leader reconcile, and a successor take over after the leader is killed, with no duplicate children', async () => {
    const widgets = env.client.resource<KubeObject & { status?: { child?: string } }>({ group: 'test.kcm.io', version: 'v1', resource: 'widgets' }).namespace('default');
    const configMaps = env.client.resource<ConfigMap & KubeObject>(GVR.configMaps).namespace('default');
    const leases = env.client.resource<Lease & KubeObject>(GVR.leases).namespace('default');
    const holder = async () => {
      try {
        return (await leases.get('widget-operator-leader')).spec?.holderIdentity ?? '';
      } catch {
        return '';
      }
    };
    const childrenOf = async () => {
      const map = new Map<string, string[]>();
      for (const cm of (await configMaps.list()).items) {
        const owner = cm.metadata?.ownerReferences?.find((r) => r.controller)?.name;
        if (owner) map.set(owner, [...(map.get(owner) ?? []), cm.metadata!.name!]);
      }
      return map;
    };
    const allHaveOneChild = async (names: string[]) => {
      const children = await childrenOf();
      const list = (await widgets.list()).items;
      return names.every((n) => children.get(n)?.length === 1 && list.find((w) => w.metadata?.name === n)?.status?.child === children.get(n)![0]);
    };

    const a = startReplica(env.url, 'replica-a');
    replicas.push(a);
    await waitFor(() => a.out.includes('leading replica-a'), 20_000, 'replica-a to lead');
    const b = startReplica(env.url, 'replica-b');
    replicas.push(b);

    const first = Array.from({ length: 20 }, (_, i) => `w${i}`);
    await Promise.all(first.map((name, i) => widgets.create({ apiVersion: 'test.kcm.io/v1', kind: 'Widget', metadata: { name }, spec: { size: i } })));
    await waitFor(() => allHaveOneChild(first), 20_000, 'one child per widget');
    assert.equal(await holder(), 'replica-a');
    // Give the standby time to (wrongly) act, then check it did not.
    await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual(
      b.out.filter((l) => l.startsWith('reconciled') || l.startsWith('leading')),
      [],
      'the standby reconciles nothing',
    );

    a.proc.kill('SIGKILL');
    await a.exited;
    // While nobody leads: more widgets, and a child deleted by hand.
    const second = Array.from({ length: 10 }, (_, i) => `v${i}`);
    await Promise.all(second.map((name) => widgets.create({ apiVersion: 'test.kcm.io/v1', kind: 'Widget', metadata: { name }, spec: { size: 1 } })));
    const w3child = (await childrenOf()).get('w3')![0]!;
    await configMaps.delete(w3child);

    await waitFor(() => b.out.includes('leading replica-b'), 20_000, 'replica-b to take over');
    assert.equal(await holder(), 'replica-b');
    await waitFor(() => allHaveOneChild([...first, ...second]), 20_000, 'one child per widget after take-over');
    const children = await childrenOf();
    assert.notEqual(children.get('w3')![0], w3child, 'the deleted child was recreated');
    for (const [owner, names] of children) assert.equal(names.length, 1, `${owner} has ${names.join(', ')}`);
    assert.equal(children.size, 30);
  });

  it('releases the Lease when the leader is stopped with SIGTERM, and exits 0', async () => {
    const leases = env.client.resource<Lease & KubeObject>(GVR.leases).namespace('default');
    const b = replicas.find((r) => r.out.includes('leading replica-b'))!;
    assert.ok(b, 'replica-b leads after the first test');
    const code = new Promise<number | null>((resolve) => b.proc.on('exit', (c) => resolve(c)));
    b.proc.kill('SIGTERM');
    assert.equal(await code, 0);
    assert.ok(b.out.includes('stopped replica-b'));
    const lease = await leases.get('widget-operator-leader');
    // client-go's release: holder cleared, lease duration 1 s, so a candidate takes over at its next try.
    assert.equal(lease.spec?.holderIdentity ?? '', '');
    const c = startReplica(env.url, 'replica-c');
    replicas.push(c);
    await waitFor(() => c.out.includes('leading replica-c'), 20_000, 'replica-c to lead');
  });
});
