import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { canonicalControllerName, controllerTable, isImplemented, loadController, resolveEnabledControllers, UnknownControllerError } from './registry.js';

describe('controller registry', () => {
  it('lists every canonical name once, each ending in -controller', () => {
    const names = controllerTable.map((e) => e.name);
    assert.equal(new Set(names).size, names.length);
    for (const n of names) assert.match(n, /^[a-z]([-a-z]*[a-z])?-controller$/);
    const aliases = controllerTable.flatMap((e) => e.aliases);
    assert.equal(new Set(aliases).size, aliases.length);
  });

  it('maps the old names to canonical ones', () => {
    assert.equal(canonicalControllerName('replicaset'), 'replicaset-controller');
    assert.equal(canonicalControllerName('podgc'), 'pod-garbage-collector-controller');
    assert.equal(canonicalControllerName('root-ca-cert-publisher'), 'root-ca-certificate-publisher-controller');
    assert.equal(canonicalControllerName('endpoint'), 'endpoints-controller');
    assert.equal(canonicalControllerName('ttl-after-finished'), 'ttl-after-finished-controller');
    assert.equal(canonicalControllerName('nope'), undefined);
  });

  it('enables every on-by-default controller with * and leaves bootstrapsigner and tokencleaner off', () => {
    const all = resolveEnabledControllers(['*']);
    assert.ok(all.includes('deployment-controller'));
    assert.ok(!all.includes('bootstrap-signer-controller'));
    assert.ok(!all.includes('token-cleaner-controller'));
    assert.equal(all.length, controllerTable.filter((e) => !e.disabledByDefault).length);
  });

  it('disables a controller named with a dash, by name or alias', () => {
    assert.ok(!resolveEnabledControllers(['*', '-deployment']).includes('deployment-controller'));
    assert.ok(!resolveEnabledControllers(['*', '-deployment-controller']).includes('deployment-controller'));
    assert.ok(resolveEnabledControllers(['*', '-deployment']).includes('replicaset-controller'));
  });

  it('enables only the named controllers without *', () => {
    assert.deepEqual(resolveEnabledControllers(['replicaset', 'tokencleaner']), ['replicaset-controller', 'token-cleaner-controller']);
    assert.deepEqual(resolveEnabledControllers([]), []);
  });

  it('lets the first mention of a controller decide', () => {
    assert.ok(resolveEnabledControllers(['deployment', '-deployment']).includes('deployment-controller'));
    assert.ok(!resolveEnabledControllers(['-deployment', '*', 'deployment']).includes('deployment-controller'));
  });

  it('rejects an unknown name with a one-line error', () => {
    assert.throws(() => resolveEnabledControllers(['*', '-bogus']), (err: unknown) => err instanceof UnknownControllerError && err.message === '"bogus" is not in the list of known controllers');
  });

  it('loads an implemented controller descriptor and reports unwritten ones as not implemented', async () => {
    const gc = await loadController('garbage-collector-controller');
    assert.equal(gc.kind, 'implemented');
    if (gc.kind === 'implemented') assert.equal(gc.descriptor.name, 'garbage-collector-controller');
    const rc = await loadController('replicationcontroller-controller');
    assert.equal(rc.kind, 'implemented');
    const cloud = await loadController('service-lb-controller');
    assert.equal(cloud.kind, 'implemented');
  });

  it('loads every controller file from its row, each exporting the descriptor of that row', async () => {
    const here = fileURLToPath(new URL('.', import.meta.url));
    const files = readdirSync(here, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) => readdirSync(join(here, d.name)).filter((f) => f.endsWith('-controller.js') && !f.endsWith('.test.js')).map((f) => `./${d.name}/${f}`))
      .sort();
    const loaded = controllerTable.filter((e) => e.load).map((e) => /import\('([^']+)'\)/.exec(String(e.load))?.[1]);
    assert.deepEqual([...new Set(loaded)].sort(), files, 'a controller file no row loads (add `load` to its row)');
    for (const e of controllerTable.filter((x) => x.load)) {
      const r = await loadController(e.name);
      assert.equal(r.kind, 'implemented', e.name);
    }
  });

  it('tells implemented controllers from known-but-unwritten ones without loading them', () => {
    const byName = (n: string) => controllerTable.find((e) => e.name === n)!;
    assert.equal(isImplemented(byName('replicaset-controller')), true);
    assert.equal(isImplemented(byName('service-lb-controller')), true);
    assert.equal(byName('service-lb-controller').cloudProvider, true);
    const unwritten = controllerTable.filter((e) => e.module && !isImplemented(e)).map((e) => e.name);
    assert.ok(unwritten.includes('resourceclaim-controller'), unwritten.join(','));
  });
});
