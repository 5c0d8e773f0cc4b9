/**
 * Test support for the lifecycle controllers (garbage collector, namespace,
 * podgc): a fake DiscoveryClient over fixed resource lists, a ControllerContext
 * over a fake client, and a bounded wait that lets informers catch up.
 */
import type { APIResource, APIResourceList } from 'kubernetes-types/meta/v1.js';
import type { DiscoveryClient, GroupsAndResources, PreferredResources } from '../../client/discovery.js';
import { GroupDiscoveryFailedError } from '../../client/discovery.js';
import { newFakeClient, type FakeClient } from '../../controller/testing/fake-client.js';
import { newSharedInformerFactory } from '../../tools/cache/factory.js';
import { newFakeRecorder, type FakeEventRecorder } from '../../tools/record/fake-recorder.js';
import { FakeClock, flushMicrotasks } from '../../util/clock/clock.js';
import { newLogger } from '../../util/log/logger.js';
import type { ControllerContext, ControllerOptions } from '../types.js';
import { deepCopy } from '../../util/json/deep-copy.js';

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** An APIResource with every verb. */
export function res(name: string, kind: string, namespaced = true, verbs = ALL_VERBS): APIResource {
  return { name, singularName: '', kind, namespaced, verbs };
}

/** The resources most tests need (core, apps, a custom group). */
export function defaultResourceLists(): APIResourceList[] {
  return [
    {
      groupVersion: 'v1',
      resources: [
        res('pods', 'Pod'),
        res('pods/status', 'Pod'),
        res('configmaps', 'ConfigMap'),
        res('secrets', 'Secret'),
        res('services', 'Service'),
        res('events', 'Event'),
        res('namespaces', 'Namespace', false),
        res('nodes', 'Node', false),
        res('replicationcontrollers', 'ReplicationController'),
      ],
    },
    { groupVersion: 'apps/v1', resources: [res('deployments', 'Deployment'), res('replicasets', 'ReplicaSet')] },
    { groupVersion: 'example.com/v1', resources: [res('widgets', 'Widget'), res('clusterwidgets', 'ClusterWidget', false)] },
  ];
}

export interface FakeDiscovery extends DiscoveryClient {
  /** The lists served; change them to simulate new or removed APIs. */
  lists: APIResourceList[];
  /** Group versions that fail discovery. */
  failing: Set<string>;
}

/** Every group version is its group's only (hence preferred) version. */
export function newFakeDiscovery(lists: APIResourceList[] = defaultResourceLists()): FakeDiscovery {
  const d: FakeDiscovery = {
    lists,
    failing: new Set(),
    invalidate() {},
    async serverGroups() {
      return {
        groups: d.lists.map((l) => {
          const i = l.groupVersion.indexOf('/');
          const name = i < 0 ? '' : l.groupVersion.slice(0, i);
          const version = i < 0 ? l.groupVersion : l.groupVersion.slice(i + 1);
          const v = { groupVersion: l.groupVersion, version };
          return { name, versions: [v], preferredVersion: v };
        }),
      };
    },
    async serverResourcesForGroupVersion(gv: string) {
      if (d.failing.has(gv)) throw new Error(`${gv} unavailable`);
      const l = d.lists.find((x) => x.groupVersion === gv);
      if (!l) throw new Error(`${gv} not found`);
      return deepCopy(l);
    },
    async serverGroupsAndResources(): Promise<GroupsAndResources> {
      const { groups } = await d.serverGroups();
      const ok = d.lists.filter((l) => !d.failing.has(l.groupVersion)).map((l) => deepCopy(l));
      const failed = new Map<string, unknown>([...d.failing].map((gv) => [gv, new Error(`${gv} unavailable`)]));
      return failed.size ? { groups, resources: ok, error: new GroupDiscoveryFailedError(failed) } : { groups, resources: ok };
    },
    async serverPreferredResources(): Promise<PreferredResources> {
      const { resources, error } = await d.serverGroupsAndResources();
      const out = resources.map((l) => ({ ...l, resources: l.resources.filter((r) => !r.name.includes('/')) }));
      return error ? { resources: out, error } : { resources: out };
    },
    async serverVersion() {
      return { major: '1', minor: '31', gitVersion: 'v1.31.0', gitCommit: '', gitTreeState: '', buildDate: '', goVersion: '', compiler: '', platform: '' };
    },
  };
  return d;
}

export interface TestContext {
  ctx: ControllerContext;
  fake: FakeClient;
  clock: FakeClock;
  discovery: FakeDiscovery;
  recorder: FakeEventRecorder;
  stop: AbortController;
  /** Stops informers started through ctx.informers. */
  close(): Promise<void>;
}

export function newTestContext(opts: { options?: Partial<ControllerOptions>; lists?: APIResourceList[] } = {}): TestContext {
  const clock = new FakeClock();
  const fake = newFakeClient({ clock });
  const discovery = newFakeDiscovery(opts.lists);
  const recorder = newFakeRecorder();
  const informers = newSharedInformerFactory(fake, { clock });
  const stop = new AbortController();
  const ctx: ControllerContext = {
    client: fake,
    discovery,
    informers,
    clock,
    options: { concurrency: {}, extra: {}, terminatedPodGCThreshold: 12500, ...opts.options } as ControllerOptions,
    recorder: () => recorder,
    logger: (n) => newLogger(n),
  };
  return {
    ctx,
    fake,
    clock,
    discovery,
    recorder,
    stop,
    async close() {
      stop.abort();
      await informers.shutdown();
    },
  };
}

/** Lets promise continuations and informer deliveries run until `cond` holds (bounded, no timers). */
export async function until(cond: () => boolean, what: string, rounds = 5000): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    if (cond()) return;
    await flushMicrotasks();
  }
  throw new Error(`never happened: ${what}`);
}
