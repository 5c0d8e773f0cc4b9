import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { newMemoryStorage } from './memory.js';
import { runStorageSuite } from './storage.suite.js';
import { StorageError } from './storage.js';

runStorageSuite('memory', async () => ({ storage: newMemoryStorage() }));

describe('memory storage', () => {
  it('compacts history beyond historyLimit on its own', async () => {
    const s = newMemoryStorage({ historyLimit: 10 });
    for (let i = 0; i < 200; i++) await s.create(`/registry/pods/default/p${i}`, { metadata: { name: `p${i}` } });
    assert.ok(s.compactedRevision() >= 200 - 10 - 100, `compacted ${s.compactedRevision()}`);
    assert.ok(s.compactedRevision() <= 190);
    assert.throws(() => s.watch('/registry/', 1, () => {}), (err: unknown) => err instanceof StorageError && err.code === 'Compacted');
    assert.equal((await s.list('/registry/pods/')).items.length, 200);
    await s.close();
  });
});
