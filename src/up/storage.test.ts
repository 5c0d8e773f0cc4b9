import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GVR } from '../api/gvr.js';
import { newFakeClient } from '../controller/testing/fake-client.js';
import { newLogger, setLogOutput } from '../util/log/logger.js';
import { ensureDefaultStorageClass, STORAGE_CLASS_MARKER } from './storage.js';

describe('kcm up default StorageClass', () => {
  before(() => setLogOutput(() => {}));

  it('creates standard once per data directory, and keeps a class the user removed deleted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kcm-up-storage-'));
    try {
      const fake = newFakeClient();
      await ensureDefaultStorageClass(fake, dir, true, new AbortController().signal, newLogger('test'));
      const sc = fake.stored<Record<string, unknown> & { metadata: { annotations?: Record<string, string> } }>(GVR.storageClasses, '', 'standard');
      assert.ok(sc);
      assert.equal(sc.metadata.annotations?.['storageclass.kubernetes.io/is-default-class'], 'true');
      assert.equal(sc.provisioner, 'local-path.kcm.io');
      assert.equal(sc.volumeBindingMode, 'WaitForFirstConsumer');
      assert.equal(sc.reclaimPolicy, 'Delete');
      assert.equal(sc.allowVolumeExpansion, true);
      assert.ok(existsSync(join(dir, STORAGE_CLASS_MARKER)));
      await fake.resource(GVR.storageClasses).delete('standard');
      await ensureDefaultStorageClass(fake, dir, true, new AbortController().signal, newLogger('test'));
      assert.equal(fake.stored(GVR.storageClasses, '', 'standard'), undefined, 'not recreated');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('creates it at every start with memory storage, and accepts one that exists', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kcm-up-storage-'));
    try {
      const fake = newFakeClient();
      await ensureDefaultStorageClass(fake, dir, false, new AbortController().signal, newLogger('test'));
      await ensureDefaultStorageClass(fake, dir, false, new AbortController().signal, newLogger('test'));
      assert.ok(fake.stored(GVR.storageClasses, '', 'standard'));
      assert.ok(!existsSync(join(dir, STORAGE_CLASS_MARKER)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
