/**
 * Test scaffolding for the network and protection controllers: a fake client,
 * a real informer factory over it, a FakeClock, and object builders.
 */
import type { Pod, Service } from 'kubernetes-types/core/v1.js';
import { newFakeClient, type FakeClient } from '../../controller/testing/fake-client.js';
import type { Controller } from '../../controller/types.js';
import { newSharedInformerFactory, type SharedInformerFactory } from '../../tools/cache/factory.js';
import { newFakeRecorder, type FakeEventRecorder } from '../../tools/record/fake-recorder.js';
import { FakeClock, flushMicrotasks } from '../../util/clock/clock.js';
import { newLogger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerOptions } from '../types.js';
import type { Kube } from '../../tools/cache/factory.js';

/** Resolves once `cond()` holds, flushing microtasks; throws after 2000 rounds. */
export async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (cond()) return;
    await flushMicrotasks();
  }
  throw new Error(`never happened: ${what}`);
}

export interface TestEnv<C> {
  fake: FakeClient;
  clock: FakeClock;
  informers: SharedInformerFactory;
  recorder: FakeEventRecorder;
  ctx: ControllerContext;
  c: C;
  stop(): Promise<void>;
}

/** Seeds the fake client, builds the controller, starts informers and waits for `hasSynced`. */
export async function setupController<C extends Controller & { hasSynced(): boolean }>(
  seed: (fake: FakeClient, clock: FakeClock) => void,
  create: (ctx: ControllerContext) => C,
  extra: Record<string, string | number | boolean> = {},
): Promise<TestEnv<C>> {
  const clock = new FakeClock(Date.parse('2024-01-01T00:00:00Z'));
  const fake = newFakeClient({ clock });
  seed(fake, clock);
  const informers = newSharedInformerFactory(fake, { clock });
  const recorder = newFakeRecorder();
  const ctx: ControllerContext = {
    client: fake,
    informers,
    clock,
    options: { concurrency: {}, extra } as unknown as ControllerOptions,
    recorder: () => recorder,
    logger: (n) => newLogger(n),
  };
  const c = create(ctx);
  const abort = new AbortController();
  informers.start(abort.signal);
  await until(() => c.hasSynced(), 'informers synced');
  return {
    fake,
    clock,
    informers,
    recorder,
    ctx,
    c,
    stop: async () => {
      abort.abort();
      await informers.shutdown();
    },
  };
}

export interface PodSpecOpts {
  ns?: string;
  labels?: Record<string, string>;
  ip?: string;
  ready?: boolean;
  node?: string;
  phase?: string;
  ports?: Array<{ name?: string; containerPort: number; protocol?: string }>;
  deleting?: boolean;
  readySince?: string;
}

export function pod(name: string, o: PodSpecOpts = {}): Kube<Pod> {
  const p: Kube<Pod> = {
    metadata: { name, namespace: o.ns ?? 'default', labels: o.labels ?? { app: 'web' }, uid: `uid-${name}`, ...(o.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
    spec: { nodeName: o.node ?? 'node-1', containers: [{ name: 'c', image: 'nginx', ports: o.ports ?? [{ name: 'http', containerPort: 8080 }] }] },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True', lastTransitionTime: o.readySince ?? '2024-01-01T00:00:00Z' }],
    },
  };
  if (o.ip !== '') {
    p.status!.podIP = o.ip ?? '10.0.0.1';
    p.status!.podIPs = [{ ip: o.ip ?? '10.0.0.1' }];
  }
  return p;
}

export function service(name: string, spec: Service['spec'] = {}, ns = 'default', labels?: Record<string, string>): Kube<Service> {
  return {
    metadata: { name, namespace: ns, uid: `uid-svc-${name}`, ...(labels ? { labels } : {}) },
    spec: { selector: { app: 'web' }, clusterIP: '10.96.0.10', ipFamilies: ['IPv4'], ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }], ...spec },
  };
}
