/**
 * Test support for the API server fuzz test (not a test file): a seeded
 * random source, valid objects of the main kinds, and generators of broken
 * bodies, values, patches and query parameters. Everything is a function of
 * the seed, never of the server's answers, so a seed replays a run.
 */
import { stringify as toYaml } from 'yaml';
import { encodeKubernetesProtobuf } from '../protobuf/envelope.js';
import { maxNestingDepth } from '../nesting-depth.js';
import { seededRandom } from '../../util/random/random.js';
import { deepCopy } from '../../util/json/deep-copy.js';

/** Picks test cases from a seeded mulberry32 stream (util/random). */
export class Rng {
  private readonly random: () => number;
  constructor(seed: number) {
    this.random = seededRandom(seed);
  }
  next(): number {
    return this.random();
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

export interface Kind {
  name: string;
  /** Collection path (namespaced ones in `default`). */
  path: string;
  apiVersion: string;
  kind: string;
  /** A valid object named `name`. */
  valid(name: string): Record<string, unknown>;
  customResource?: boolean;
}

const podSpec = () => ({
  containers: [
    {
      name: 'c', image: 'nginx', command: ['sh'], args: ['-c', 'true'],
      ports: [{ name: 'http', containerPort: 80, protocol: 'TCP' }],
      env: [{ name: 'A', value: 'b' }, { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
      resources: { limits: { cpu: '100m', memory: '64Mi' }, requests: { cpu: '50m' } },
      volumeMounts: [{ name: 'cfg', mountPath: '/cfg' }],
      livenessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 10 },
      securityContext: { runAsUser: 1000, capabilities: { drop: ['ALL'] } },
    },
  ],
  initContainers: [{ name: 'init', image: 'busybox' }],
  volumes: [{ name: 'cfg', configMap: { name: 'cfg', items: [{ key: 'a', path: 'a' }] } }, { name: 'tmp', emptyDir: { sizeLimit: '1Gi' } }],
  nodeSelector: { disk: 'ssd' },
  tolerations: [{ key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule', tolerationSeconds: 30 }],
  affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] } } },
  terminationGracePeriodSeconds: 30,
  dnsConfig: { options: [{ name: 'ndots', value: '2' }] },
});
const template = (app: string) => ({ metadata: { labels: { app } }, spec: podSpec() });
const meta = (name: string) => ({
  name, labels: { app: name }, annotations: { note: 'x' }, finalizers: ['example.com/f'],
  ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: '6b1e5a3c-0000-4000-8000-000000000001' }],
});

export const crdGroup = 'fuzz.example.com';

export const kinds: Kind[] = [
  { name: 'pod', path: '/api/v1/namespaces/default/pods', apiVersion: 'v1', kind: 'Pod', valid: (n) => ({ metadata: meta(n), spec: podSpec() }) },
  { name: 'configmap', path: '/api/v1/namespaces/default/configmaps', apiVersion: 'v1', kind: 'ConfigMap', valid: (n) => ({ metadata: meta(n), data: { a: 'b' }, binaryData: { c: 'ZA==' } }) },
  { name: 'secret', path: '/api/v1/namespaces/default/secrets', apiVersion: 'v1', kind: 'Secret', valid: (n) => ({ metadata: meta(n), type: 'Opaque', data: { a: 'Yg==' }, stringData: { c: 'd' } }) },
  {
    name: 'service', path: '/api/v1/namespaces/default/services', apiVersion: 'v1', kind: 'Service',
    valid: (n) => ({
      metadata: meta(n),
      spec: {
        type: 'NodePort', selector: { app: n }, externalTrafficPolicy: 'Local', sessionAffinity: 'ClientIP', sessionAffinityConfig: { clientIP: { timeoutSeconds: 60 } },
        ports: [{ name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' }, { name: 'udp', port: 53, targetPort: 53, protocol: 'UDP' }],
      },
    }),
  },
  { name: 'namespace', path: '/api/v1/namespaces', apiVersion: 'v1', kind: 'Namespace', valid: (n) => ({ metadata: meta(n), spec: { finalizers: ['kubernetes'] } }) },
  {
    name: 'node', path: '/api/v1/nodes', apiVersion: 'v1', kind: 'Node',
    valid: (n) => ({
      metadata: meta(n),
      spec: { taints: [{ key: 'k', value: 'v', effect: 'NoSchedule' }], podCIDR: '10.1.0.0/24', podCIDRs: ['10.1.0.0/24'] },
      status: { capacity: { cpu: '2', pods: '110' }, conditions: [{ type: 'Ready', status: 'True' }], addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] },
    }),
  },
  {
    name: 'deployment', path: '/apis/apps/v1/namespaces/default/deployments', apiVersion: 'apps/v1', kind: 'Deployment',
    valid: (n) => ({ metadata: meta(n), spec: { replicas: 1, selector: { matchLabels: { app: n } }, template: template(n), strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } } } }),
  },
  {
    name: 'statefulset', path: '/apis/apps/v1/namespaces/default/statefulsets', apiVersion: 'apps/v1', kind: 'StatefulSet',
    valid: (n) => ({
      metadata: meta(n),
      spec: {
        serviceName: n, replicas: 1, selector: { matchLabels: { app: n } }, template: template(n),
        volumeClaimTemplates: [{ metadata: { name: 'data' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } }],
      },
    }),
  },
  { name: 'daemonset', path: '/apis/apps/v1/namespaces/default/daemonsets', apiVersion: 'apps/v1', kind: 'DaemonSet', valid: (n) => ({ metadata: meta(n), spec: { selector: { matchLabels: { app: n } }, template: template(n) } }) },
  {
    name: 'job', path: '/apis/batch/v1/namespaces/default/jobs', apiVersion: 'batch/v1', kind: 'Job',
    valid: (n) => ({ metadata: meta(n), spec: { backoffLimit: 2, completions: 2, parallelism: 1, activeDeadlineSeconds: 600, ttlSecondsAfterFinished: 60, template: { metadata: { labels: { app: n } }, spec: { ...podSpec(), restartPolicy: 'Never' } } } }),
  },
  {
    name: 'cronjob', path: '/apis/batch/v1/namespaces/default/cronjobs', apiVersion: 'batch/v1', kind: 'CronJob',
    valid: (n) => ({
      metadata: meta(n),
      spec: { schedule: '*/5 * * * *', startingDeadlineSeconds: 100, concurrencyPolicy: 'Forbid', successfulJobsHistoryLimit: 1, jobTemplate: { spec: { template: { spec: { ...podSpec(), restartPolicy: 'OnFailure' } } } } },
    }),
  },
  {
    name: 'crd', path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition',
    valid: (n) => crd(`${n.replace(/[^a-z0-9]/g, '')}s`, `K${n.replace(/[^a-z0-9]/g, '')}`),
  },
  {
    name: 'widget', path: `/apis/${crdGroup}/v1/namespaces/default/widgets`, apiVersion: `${crdGroup}/v1`, kind: 'Widget', customResource: true,
    valid: (n) => ({ metadata: meta(n), spec: { size: 3, color: 'red', port: 80, tags: ['a'], items: [{ name: 'x', value: 1 }], free: { any: [1, { x: null }] } } }),
  },
];

/** The CRD of kind `Widget` and friends: typed fields, a list map, int-or-string, a preserved subtree, defaults, status and scale. */
export function crd(plural: string, kind: string): Record<string, unknown> {
  return {
    metadata: { name: `${plural}.${crdGroup}` },
    spec: {
      group: crdGroup,
      scope: 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1', served: true, storage: true,
          subresources: { status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size' } },
          additionalPrinterColumns: [{ name: 'Color', type: 'string', jsonPath: '.spec.color' }, { name: 'Size', type: 'integer', jsonPath: '.spec.size' }],
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: {
                spec: {
                  type: 'object',
                  properties: {
                    size: { type: 'integer', minimum: 0, default: 1 },
                    color: { type: 'string', enum: ['red', 'blue'] },
                    port: { 'x-kubernetes-int-or-string': true },
                    tags: { type: 'array', items: { type: 'string' } },
                    items: { type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'], items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, value: { type: 'integer' } } } },
                    maybe: { type: 'object', nullable: true, properties: { x: { type: 'string' } } },
                    free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  },
                },
                status: { type: 'object', properties: { size: { type: 'integer' } } },
              },
            },
          },
        },
      ],
    },
  };
}

/** `{"a":{"a":...}}` nesting `depth` objects (1 is `{"a":1}`). */
export function nested(depth: number): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = i % 3 === 2 ? [v] : { a: v };
  return v;
}

/** A JSON value of the wrong type for most fields, or a strange one for any. */
export function badValue(r: Rng): unknown {
  switch (r.int(24)) {
    case 0: return null;
    case 1: return true;
    case 2: return 0;
    case 3: return -1;
    case 4: return 1.5;
    case 5: return r.pick([1e308, -1e308, 2 ** 63, 2 ** 53 + 1, -(2 ** 31) - 1, 2 ** 31, 4294967296]);
    case 6: return '';
    case 7: return r.pick(['x', 'UPPER', '-', '.', '..', '1', 'true', 'null', '10Gi', '-1', '1e3', '1.5', '99999999999999999999', '25%', 'a/b', '%', '\u0000', '\ud800', '日本', '<&>']);
    case 8: return 'a'.repeat(r.pick([63, 64, 253, 254, 317, 4096, 262145]));
    case 9: return [];
    case 10: return [null];
    case 11: return [1, 'x', {}, [], true];
    case 12: return {};
    case 13: return { '': null };
    case 14: return { a: null, b: [null], c: { d: null } };
    case 15: return { a: 1, b: true, c: [] };
    case 16: return nested(r.int(maxNestingDepth - 6));
    case 17: return nested(maxNestingDepth + r.int(4));
    case 18: return ['a', 'b', null];
    case 19: return { name: 1, value: {}, key: [], port: 'x', image: null };
    case 20: return [{ name: null }, { name: 5 }, 'x'];
    case 21: return { 'a.b/c': 'd', 'x y': 'z', 'UPPER/x': 1 };
    case 22: return Array.from({ length: 200 }, (_, i) => i);
    default: return { $patch: r.pick(['replace', 'delete', 'merge', 'bogus']), $retainKeys: r.pick([['a'], 'x', null]) };
  }
}

type Container = Record<string, unknown> | unknown[];

/** Every container in `v` with its path (the root is []). */
function containers(v: unknown, path: (string | number)[] = [], out: { c: Container; path: (string | number)[] }[] = []): { c: Container; path: (string | number)[] }[] {
  if (v === null || typeof v !== 'object') return out;
  out.push({ c: v as Container, path });
  if (Array.isArray(v)) v.forEach((x, i) => containers(x, [...path, i], out));
  else for (const [k, x] of Object.entries(v)) containers(x, [...path, k], out);
  return out;
}

const sweepValues: readonly unknown[] = [true, 1, 1.5, 'x', [], {}, [null], { a: null }, -1, ''];

/**
 * Every position of `obj` (each field and list item, at every level) with
 * a null and with one value of another type, rotating through the types:
 * the objects to send, each `obj` with one position replaced.
 */
export function* sweep(obj: Record<string, unknown>): Generator<{ path: string; obj: Record<string, unknown> }> {
  let n = 0;
  for (const { path } of containers(obj)) {
    const at = (o: Record<string, unknown>) => path.reduce<unknown>((c, k) => (c as Record<string | number, unknown>)[k], o) as Record<string | number, unknown>;
    for (const key of Object.keys(at(obj))) {
      const field = [...path, key].join('.');
      for (const v of [null, sweepValues[n++ % sweepValues.length]]) {
        const copy = deepCopy(obj);
        at(copy)[key] = deepCopy(v);
        yield { path: `${field}=${JSON.stringify(v)}`, obj: copy };
      }
    }
  }
}

/** A value of the same JSON type as `v` that validation may still refuse: empty, zero, negative, huge, odd text, an empty or repeated item. */
export function oddValueLike(r: Rng, v: unknown): unknown {
  if (v === null) return badValue(r);
  if (typeof v === 'string') return r.pick(['', ' ', 'UPPER', '-', 'a..b', '*', '0', '-1', '1e3', '10Gi', '100m', '::1', '300.1.1.1', 'a'.repeat(r.pick([63, 64, 254, 1025])), `${v}${v}`, '\u0000', 'x/y']);
  if (typeof v === 'number') return r.pick([0, -1, -2147483648, 2147483647, 2147483648, 9007199254740991, 1e21, v + 1]);
  if (typeof v === 'boolean') return !v;
  if (Array.isArray(v)) return r.pick([[], v.length ? [v[0], v[0]] : [], v.length ? [{}] : [null], [...v, ...v]]);
  return r.pick([{}, { ...(v as object), '': '' }]);
}

/**
 * Breaks `obj` (a copy is changed) somewhere at a random level: a value of
 * the wrong type, a null, an odd value of the right type, a deleted or an
 * unknown field.
 */
export function mutate(r: Rng, obj: Record<string, unknown>, times = 1 + r.int(3)): Record<string, unknown> {
  const out = deepCopy(obj);
  for (let n = 0; n < times; n++) {
    const all = containers(out);
    const { c } = r.pick(all);
    const typed = r.chance(0.5);
    if (Array.isArray(c)) {
      if (c.length && r.chance(0.7)) {
        const i = r.int(c.length);
        c[i] = typed ? oddValueLike(r, c[i]) : badValue(r);
      } else c.push(typed && c.length ? deepCopy(c[0]) : badValue(r));
      continue;
    }
    const keys = Object.keys(c);
    const op = r.int(10);
    if (keys.length && op < 6) {
      const k = r.pick(keys);
      c[k] = typed ? oddValueLike(r, c[k]) : badValue(r);
    } else if (keys.length && op < 8) delete c[r.pick(keys)];
    else c[r.pick(['unknownField', 'metadata', 'spec', 'status', 'kind', 'apiVersion', 'items', '$patch', 'x'])] = badValue(r);
  }
  return out;
}

/** A body that no decoder should accept whole: truncated, spliced, binary or badly encoded text. */
export function malformed(r: Rng, valid: Record<string, unknown>): Buffer {
  const json = JSON.stringify(valid);
  switch (r.int(12)) {
    case 0: return Buffer.from(json.slice(0, r.int(json.length)));
    case 1: {
      const i = r.int(json.length);
      return Buffer.from(json.slice(0, i) + r.pick(['{', '}', '[', ']', '"', ',', ':', '\\', 'x', '\u0000', 'NaN', '-', '1e999']) + json.slice(i));
    }
    case 2: return Buffer.from(Array.from({ length: 1 + r.int(64) }, () => r.int(256)));
    case 3: return Buffer.concat([Buffer.from(json.slice(0, 20)), Buffer.from([0xff, 0xfe, 0xc3, 0x28]), Buffer.from(json.slice(20))]);
    case 4: return Buffer.from(`${json}${json}`);
    case 5: return Buffer.from(r.pick(['null', '[]', '"x"', '5', 'true', '{}', '{"metadata":null}', '{"apiVersion":5}', '{"kind":[]}', '{"metadata":"x"}', '{"metadata":[]}', '  ', '{"a":1,"a":2}']));
    case 6: return Buffer.from('['.repeat(50_000) + ']'.repeat(50_000));
    case 7: return Buffer.from('{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000));
    case 8: return Buffer.from(`{"x":"${'\\u'.repeat(3)}"}`);
    case 9: return Buffer.from(json.replace(/"/g, "'"));
    case 10: return Buffer.from(`${json.slice(0, -1)},"big":"${'x'.repeat(1 << 20)}"}`);
    default: return Buffer.from(json.replace(/:/, ':: '));
  }
}

/** YAML bodies: the object itself, broken YAML, alias bombs, deep flow or block nesting, YAML-only values. */
export function yamlBody(r: Rng, obj: Record<string, unknown>): Buffer {
  const text = toYaml(obj);
  switch (r.int(12)) {
    case 0:
    case 1: return Buffer.from(text);
    case 2: return Buffer.from(text.slice(0, r.int(text.length)));
    case 3: return Buffer.from(`${text}x: [&a [*a]]\n`);
    case 4: {
      let s = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n';
      for (let i = 1; i < 12; i++) s += `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]\n`;
      return Buffer.from(`${text}${s}`);
    }
    case 5: return Buffer.from(`${text}deep: ${'['.repeat(maxNestingDepth + r.int(3) - 1)}${']'.repeat(maxNestingDepth + 1)}\n`);
    case 6: return Buffer.from(`${text}deep:\n${Array.from({ length: maxNestingDepth + 2 }, (_, i) => `${' '.repeat(i + 1)}a${i}:`).join('\n')} 1\n`);
    case 7: return Buffer.from(`${text}x: ${r.pick(['.inf', '-.inf', '.nan', '!!binary aGk=', '!!set {a, b}', '2001-12-14t21:59:43.10-05:00', '0x1F', '0o17', '~', '"\\ud800"', '!!float 1', '*nope'])}\n`);
    case 8: return Buffer.from(`${text}? [a, b]\n: c\n? {x: 1}\n: d\n~: e\n`);
    case 9: return Buffer.from(`${text}---\nkind: Other\n---\n: :\n`);
    case 10: return Buffer.from(`\t${text}`);
    default: return Buffer.from(`base: &b\n${text.replace(/^/gm, '  ')}\ncopy: *b\n<<: *b\n`);
  }
}

/** A protobuf body: the object encoded (when it encodes), damaged, or random bytes behind the magic prefix. */
export function protobufBody(r: Rng, obj: Record<string, unknown>): Buffer {
  let enc: Buffer | undefined;
  try {
    enc = encodeKubernetesProtobuf(obj);
  } catch {
    enc = undefined;
  }
  const magic = Buffer.from([0x6b, 0x38, 0x73, 0x00]);
  if (!enc || r.chance(0.3)) return Buffer.concat([magic, Buffer.from(Array.from({ length: r.int(200) }, () => r.int(256)))]);
  const b = Buffer.from(enc);
  switch (r.int(4)) {
    case 0: return b;
    case 1: return b.subarray(0, r.int(b.length));
    case 2:
      for (let i = 0; i < 1 + r.int(8); i++) b[4 + r.int(Math.max(1, b.length - 4))] = r.int(256);
      return b;
    default: return Buffer.concat([b, Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f])]);
  }
}

/** A JSON patch: plausible operations on real and made-up paths, with bad values, ops and pointers. */
export function jsonPatch(r: Rng, obj: Record<string, unknown>): unknown {
  if (r.chance(0.1)) return badValue(r);
  const paths = containers(obj).map((x) => `/${x.path.join('/')}`).concat(['', '/', '/metadata/labels/x', '/spec/-', '/x/y/z', '/metadata/finalizers/-', '/a~1b', '/~2', '/spec/containers/99']);
  const ops: unknown[] = [];
  for (let i = 0; i < 1 + r.int(4); i++) {
    const op = r.pick(['add', 'remove', 'replace', 'move', 'copy', 'test', 'bogus', '']);
    const o: Record<string, unknown> = { op, path: r.chance(0.9) ? r.pick(paths) : badValue(r) };
    if (op === 'move' || op === 'copy') o.from = r.chance(0.9) ? r.pick(paths) : badValue(r);
    if (r.chance(0.8)) o.value = badValue(r);
    ops.push(r.chance(0.05) ? badValue(r) : o);
  }
  if (r.chance(0.05)) {
    // Copies into themselves: depth and size grow fast.
    return Array.from({ length: 40 }, () => ({ op: 'copy', from: '/metadata', path: '/metadata/annotations2' })).concat(
      Array.from({ length: 20 }, (_, i) => ({ op: 'copy', from: '/spec', path: `/spec${'/x'.repeat(i)}/x` })) as never[],
    );
  }
  return ops;
}

/** A merge, strategic merge or apply patch: the object broken somewhere, or a bare bad value. */
export function objectPatch(r: Rng, k: Kind, name: string, apply: boolean): unknown {
  if (r.chance(0.1)) return badValue(r);
  const base = apply ? { apiVersion: k.apiVersion, kind: k.kind, ...k.valid(name) } : k.valid(name);
  const p = mutate(r, base);
  if (!apply && r.chance(0.3)) {
    const spec = (p.spec ?? (p.spec = {})) as Record<string, unknown>;
    if (spec && typeof spec === 'object') {
      spec[r.pick(['$patch', '$retainKeys', '$setElementOrder/containers', '$deleteFromPrimitiveList/finalizers', 'containers'])] = badValue(r);
    }
  }
  return p;
}

const queryPool: Record<string, readonly string[]> = {
  limit: ['1', '0', '-1', 'x', '1.5', '99999999999999999999', '500', ''],
  continue: ['', 'x', 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiJ4In0', '%%%', 'eyJ2Ijo1fQ', 'bnVsbA'],
  resourceVersion: ['0', '1', '', 'x', '-1', '99999999999', '1.5', '18446744073709551616'],
  resourceVersionMatch: ['Exact', 'NotOlderThan', 'x', ''],
  fieldSelector: ['metadata.name=x', 'metadata.name!=x', 'x', '=', 'spec.nodeName=', 'a==b==c', 'metadata.name=\\', 'metadata.namespace in (a)', ',,'],
  labelSelector: ['app=x', 'app in (a,b)', '!app', 'app', '==', 'a in', 'x=y,', 'a notin ()', 'a/b/c=d', `${'a'.repeat(70)}=b`, 'a=(b'],
  timeoutSeconds: ['1', '0', '-1', 'x', '9999999999999', '99999999999999999999', '1.5', ''],
  dryRun: ['All', 'x', '', 'all'],
  fieldManager: ['m', '', 'a'.repeat(129), 'kubectl/v1', '\u0000'],
  fieldValidation: ['Strict', 'Warn', 'Ignore', 'x', ''],
  propagationPolicy: ['Orphan', 'Background', 'Foreground', 'x', ''],
  gracePeriodSeconds: ['0', '-1', '30', 'x', '9999999999999', '1.5', '99999999999999999999', ''],
  orphanDependents: ['true', 'false', 'x'],
  force: ['true', 'false', 'x'],
  allowWatchBookmarks: ['true', 'x'],
  sendInitialEvents: ['true', 'false', 'x'],
  watch: ['1', 'true', 'false', 'x'],
  pretty: ['true', 'x'],
  includeObject: ['None', 'Metadata', 'Object', 'x'],
};

/** `?a=b&...` with a few parameters, valid or not; `always` are added with random values. */
export function query(r: Rng, always: readonly string[] = []): string {
  const names = Object.keys(queryPool);
  const chosen = new Set(always);
  for (let i = r.int(4); i > 0; i--) chosen.add(r.pick(names));
  const parts = [...chosen].map((n) => `${n}=${encodeURIComponent(r.pick(queryPool[n]!))}`);
  return parts.length ? `?${parts.join('&')}` : '';
}

export const patchTypes = ['application/json-patch+json', 'application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'] as const;

export const oddContentTypes = ['text/plain', 'application/xml', '', 'application/json; charset=utf-16', 'application/vnd.kubernetes.protobuf', 'application/yaml', 'multipart/form-data; boundary=x', '*/*', 'application/json-patch+json'];

export const acceptHeaders = [
  'application/json',
  'application/json;as=Table;v=v1;g=meta.k8s.io',
  'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
  'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
  'application/vnd.kubernetes.protobuf',
  'application/yaml',
  'text/html',
  'application/json;as=Bogus;v=v9;g=x',
  '*/*',
];

/** A request as the fuzz test sends it. */
export interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
}

const json = (v: unknown) => Buffer.from(JSON.stringify(v) ?? 'null');

/** One random request against `k` (the `i`th of the run). */
export function nextRequest(r: Rng, k: Kind, i: number): Sent {
  // The name on the URL is the object's (a CRD's is <plural>.<group>).
  const nameOf = (n: string) => (k.valid(n).metadata as { name: string }).name;
  const fixture = nameOf(`fuzz-${k.name}`);
  const base = r.chance(0.7) ? `fuzz-${k.name}` : r.pick([`new-${i}`, 'UPPER', 'a'.repeat(300), '..', 'x%2Fy', '-x-', 'a.b']);
  const name = nameOf(base);
  const full = (o: Record<string, unknown>) => ({ apiVersion: k.apiVersion, kind: k.kind, ...o });
  const headers: Record<string, string> = {};
  if (r.chance(0.15)) headers.Accept = r.pick(acceptHeaders);
  const op = r.int(100);
  if (op < 28) {
    // create
    const obj = full(k.valid(`c-${i}`));
    const ct = r.int(10);
    let body: Buffer;
    if (ct < 6) body = json(mutate(r, obj));
    else if (ct < 7) body = malformed(r, obj);
    else if (ct < 9) {
      headers['Content-Type'] = 'application/yaml';
      body = yamlBody(r, r.chance(0.5) ? mutate(r, obj) : obj);
    } else {
      headers['Content-Type'] = 'application/vnd.kubernetes.protobuf';
      body = protobufBody(r, r.chance(0.5) ? mutate(r, obj) : obj);
    }
    headers['Content-Type'] ??= r.chance(0.05) ? r.pick(oddContentTypes) : 'application/json';
    return { method: 'POST', path: k.path + query(r), headers, body };
  }
  if (op < 42) {
    // update (status now and then)
    const sub = r.chance(0.2) ? '/status' : r.chance(0.1) && k.kind === 'Deployment' ? '/scale' : '';
    const obj = full(k.valid(base));
    headers['Content-Type'] = r.chance(0.1) ? 'application/yaml' : 'application/json';
    const body = r.chance(0.1) ? malformed(r, obj) : headers['Content-Type'] === 'application/yaml' ? yamlBody(r, mutate(r, obj)) : json(mutate(r, obj));
    return { method: 'PUT', path: `${k.path}/${name}${sub}${query(r)}`, headers, body };
  }
  if (op < 72) {
    // patch
    const type = r.pick(patchTypes);
    headers['Content-Type'] = r.chance(0.03) ? r.pick(oddContentTypes) : type;
    let body: Buffer;
    if (r.chance(0.08)) body = malformed(r, k.valid(base));
    else if (type === 'application/json-patch+json') body = json(jsonPatch(r, full(k.valid(base))));
    else if (type === 'application/apply-patch+yaml' && r.chance(0.3)) body = yamlBody(r, full(k.valid(base)));
    else body = json(objectPatch(r, k, base, type === 'application/apply-patch+yaml'));
    const q = type === 'application/apply-patch+yaml' && r.chance(0.8) ? query(r, ['fieldManager']) : query(r);
    const sub = r.chance(0.15) ? '/status' : '';
    return { method: 'PATCH', path: `${k.path}/${name}${sub}${q}`, headers, body };
  }
  if (op < 80) {
    // delete: fixtures only as a dry run, so the run keeps its targets
    const target = name === fixture ? name : nameOf(`c-${r.int(i + 1)}`);
    const q = query(r, name === fixture ? ['dryRun'] : []).replace(/dryRun=[^&]*/, 'dryRun=All');
    const body = r.chance(0.5) ? json(r.chance(0.5) ? { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: badValue(r), propagationPolicy: badValue(r), preconditions: badValue(r) } : badValue(r)) : undefined;
    if (body) headers['Content-Type'] = 'application/json';
    return { method: 'DELETE', path: `${k.path}/${target}${q}`, headers, ...(body ? { body } : {}) };
  }
  if (op < 90) return { method: 'GET', path: k.path + query(r), headers };
  if (op < 96) return { method: 'GET', path: `${k.path}${query(r, ['watch', 'timeoutSeconds'])}`, headers };
  if (op < 97) return { method: 'GET', path: `${k.path}/${name}${query(r)}`, headers };
  if (op < 98) return { method: 'DELETE', path: `${k.path}${query(r, ['dryRun'])}`, headers };
  return subresourceRequest(r, headers);
}

/** Scale, eviction, binding, namespace finalize and token requests with broken bodies. */
function subresourceRequest(r: Rng, headers: Record<string, string>): Sent {
  const scale = (v: unknown) => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: r.pick(['fuzz-deployment', 'fuzz-statefulset', 'fuzz-widget']), namespace: 'default' }, spec: { replicas: v } });
  const cases: (() => Sent)[] = [
    () => ({ method: 'PUT', path: `${r.pick(['/apis/apps/v1/namespaces/default/deployments/fuzz-deployment', '/apis/apps/v1/namespaces/default/statefulsets/fuzz-statefulset', '/apis/fuzz.example.com/v1/namespaces/default/widgets/fuzz-widget'])}/scale${query(r)}`, headers: { ...headers, 'Content-Type': 'application/json' }, body: json(mutate(r, scale(2))) }),
    () => ({ method: 'PATCH', path: `/apis/apps/v1/namespaces/default/deployments/fuzz-deployment/scale${query(r)}`, headers: { ...headers, 'Content-Type': r.pick(patchTypes) }, body: json(r.chance(0.5) ? { spec: { replicas: badValue(r) } } : badValue(r)) }),
    () => ({ method: 'POST', path: `/api/v1/namespaces/default/pods/fuzz-pod/eviction${query(r)}`, headers: { ...headers, 'Content-Type': 'application/json' }, body: json(mutate(r, { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'fuzz-pod', namespace: 'default' }, deleteOptions: { gracePeriodSeconds: 0, dryRun: ['All'] } })) }),
    () => ({ method: 'POST', path: `/api/v1/namespaces/default/pods/fuzz-pod/binding${query(r)}`, headers: { ...headers, 'Content-Type': 'application/json' }, body: json(mutate(r, { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'fuzz-pod' }, target: { apiVersion: 'v1', kind: 'Node', name: 'fuzz-node' } })) }),
    () => ({ method: 'PUT', path: `/api/v1/namespaces/fuzz-namespace/finalize${query(r)}`, headers: { ...headers, 'Content-Type': 'application/json' }, body: json(mutate(r, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'fuzz-namespace' }, spec: { finalizers: ['kubernetes'] } })) }),
    () => ({ method: 'POST', path: `/api/v1/namespaces/default/serviceaccounts/default/token${query(r)}`, headers: { ...headers, 'Content-Type': 'application/json' }, body: json(mutate(r, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { audiences: ['a'], expirationSeconds: 3600 } })) }),
  ];
  return r.pick(cases)();
}

/** What the sweep sends for position `n` of kind `k`: a create, an update of the fixture, a strategic merge (merge for custom resources) or an apply of it. */
export function sweepRequest(k: Kind, obj: Record<string, unknown>, n: number): Sent {
  const fixture = (k.valid(`fuzz-${k.name}`).metadata as { name: string }).name;
  const body = json({ ...obj, apiVersion: k.apiVersion, kind: k.kind });
  const json_ = { 'Content-Type': 'application/json' };
  switch (n % 4) {
    case 0: {
      const m = (obj.metadata && typeof obj.metadata === 'object' && !Array.isArray(obj.metadata) ? obj.metadata : {}) as Record<string, unknown>;
      if (typeof m.name === 'string') m.name = k.name === 'crd' ? m.name : `s-${n}`;
      return { method: 'POST', path: k.path, headers: json_, body: json({ ...obj, apiVersion: k.apiVersion, kind: k.kind }) };
    }
    case 1:
      return { method: 'PUT', path: `${k.path}/${fixture}`, headers: json_, body };
    case 2:
      return { method: 'PATCH', path: `${k.path}/${fixture}`, headers: { 'Content-Type': k.customResource ? 'application/merge-patch+json' : 'application/strategic-merge-patch+json' }, body };
    default:
      return { method: 'PATCH', path: `${k.path}/${fixture}?fieldManager=sweep&force=true`, headers: { 'Content-Type': 'application/apply-patch+yaml' }, body };
  }
}
