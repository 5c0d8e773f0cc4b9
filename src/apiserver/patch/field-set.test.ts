import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fieldSetAndChanges, fieldSetOf, newValueLookup, pathKey, readFieldsV1, toFieldsV1, valueAt } from './field-set.js';
import { schemaForKind } from './schema.js';
import { isObject, jsonEqual, type JsonObject } from './json-value.js';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', labels: { app: 'web', tier: 'fe' }, finalizers: ['a/b'] },
  spec: {
    containers: [
      { name: 'app', image: 'nginx:1', ports: [{ containerPort: 80, protocol: 'TCP' }, { containerPort: 53, protocol: 'UDP' }], args: ['-v', '2'] },
      { name: 'side', image: 'busybox', env: [{ name: 'A', value: '1' }] },
    ],
    nodeSelector: { disk: 'ssd' },
    tolerations: [{ key: 'k', operator: 'Exists' }],
  },
  status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
} as unknown as JsonObject;

describe('field paths', () => {
  it('resolves every path of an object with a memoised lookup exactly as valueAt does', () => {
    const schema = schemaForKind({ group: '', version: 'v1', kind: 'Pod' })!;
    const paths = [...fieldSetOf(pod, schema, true)];
    assert.ok(paths.length > 20);
    const at = newValueLookup(pod);
    for (const p of paths) {
      assert.deepEqual(at(p), valueAt(pod, p), p);
      assert.notEqual(at(p), undefined, p);
    }
  });

  it('gives undefined for paths that are absent, below absent parents, or below scalars', () => {
    const at = newValueLookup(pod);
    for (const tokens of [['f:spec', 'f:hostname'], ['f:spec', 'f:affinity', 'f:nodeAffinity'], ['f:spec', 'f:containers', 'k:{"name":"nope"}', 'f:image'], ['f:status', 'f:phase', 'f:x']]) {
      assert.equal(at(pathKey(tokens)), undefined);
      assert.equal(valueAt(pod, pathKey(tokens)), undefined);
    }
    assert.equal(newValueLookup(undefined)(pathKey(['f:spec'])), undefined);
  });
});

/** A small seeded generator (mulberry32): rand(n) is in [0, n). */
function mulberry32(seed: number): (n: number) => number {
  let a = seed >>> 0;
  return (n) => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

describe('toFieldsV1', () => {
  it('builds the canonical tree of random sets: read back, the same set and canonical (sorted keys, "." exactly on members with children)', () => {
    const rand = mulberry32(7);
    const tokens = ['f:a', 'f:ab', 'f:b', 'f:spec', 'f:status', 'k:{"name":"x"}', 'k:{"name":"x-1"}', 'v:"q"', 'v:1', 'f:a.b', 'f:A', 'f:a_b', 'f:a-b', 'i:3'];
    for (let round = 0; round < 300; round++) {
      const set = new Set<string>();
      const n = 1 + rand(40);
      for (let i = 0; i < n; i++) {
        const depth = 1 + rand(5);
        set.add(pathKey(Array.from({ length: depth }, () => tokens[rand(tokens.length)]!)));
      }
      if (rand(10) === 0) set.add('');
      const tree = toFieldsV1(set);
      const back = readFieldsV1(tree);
      assert.equal(back.canonical, true, JSON.stringify(tree));
      set.delete('');
      assert.deepEqual([...back.set].sort(), [...set].sort());
    }
  });

  it('marks members with children, keeps a "__proto__" token as a key, and gives {} for an empty set', () => {
    assert.deepEqual(toFieldsV1(new Set()), {});
    const tree = toFieldsV1(new Set([pathKey(['f:spec']), pathKey(['f:spec', 'f:replicas']), pathKey(['f:metadata', 'f:labels', 'f:app'])]));
    assert.equal(JSON.stringify(tree), '{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{".":{},"f:replicas":{}}}');
    const odd = toFieldsV1(new Set([pathKey(['f:data', '__proto__'])]));
    assert.equal(JSON.stringify(odd), '{"f:data":{"__proto__":{}}}');
    assert.equal(Object.getPrototypeOf((odd as Record<string, JsonObject>)['f:data']), Object.prototype);
  });
});

describe('fieldSetAndChanges', () => {
  it('finds the changed paths of random pod writes as path-by-path lookups do (duplicate keys, missing and null key fields)', () => {
    const schema = schemaForKind({ group: '', version: 'v1', kind: 'Pod' })!;
    const rand = mulberry32(11);
    const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)]!;
    const port = () => {
      const p: Record<string, unknown> = { containerPort: pick([80, 53, 8080]) };
      const proto = pick(['TCP', 'UDP', undefined, null]);
      if (proto !== undefined) p.protocol = proto;
      if (rand(2)) p.name = pick(['http', 'dns']);
      return p;
    };
    const container = () => {
      const c: Record<string, unknown> = { image: pick(['nginx:1', 'nginx:2']), ports: Array.from({ length: rand(3) }, port), args: rand(2) ? ['-v'] : ['-q'] };
      const name = pick(['app', 'side', undefined, null]);
      if (name !== undefined) c.name = name;
      return c;
    };
    const condition = () => ({ type: pick(['Ready', 'Initialized', 'PodScheduled']), status: pick(['True', 'False']) });
    const randomPod = () => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', labels: rand(2) ? { app: 'web' } : { app: 'web', tier: pick(['a', 'b']) } },
      spec: { containers: Array.from({ length: 1 + rand(3) }, container), tolerations: rand(2) ? [{ key: 'k', operator: 'Exists' }] : [] },
      status: { phase: pick(['Pending', 'Running']), conditions: Array.from({ length: rand(4) }, condition) },
    });
    const atomic = new Set(['f:args', 'f:tolerations']);
    for (let round = 0; round < 400; round++) {
      const now = randomPod() as unknown as JsonObject;
      const old = (rand(5) ? randomPod() : undefined) as unknown as JsonObject | undefined;
      const { set, changed } = fieldSetAndChanges(now, old, schema, true);
      const at = newValueLookup(now);
      const was = newValueLookup(old);
      const want = [...set].filter((p) => {
        if (!old) return true;
        const nv = at(p);
        const ov = was(p);
        const last = p.slice(p.lastIndexOf('\n') + 1);
        return isObject(nv) || (Array.isArray(nv) && !atomic.has(last)) ? ov === undefined : !jsonEqual(nv, ov);
      });
      assert.deepEqual(changed, want, JSON.stringify({ now, old }));
    }
  });
});
