/**
 * Durability of `kcm apiserver` with SQLite: a write-heavy client, the server
 * killed with SIGKILL mid-stream, a restart on the same data directory. Every
 * write the server acknowledged must be there, and resourceVersions keep
 * increasing across the restart.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { Agent, request } from 'undici';
import { startApiServerProcess, waitFor, type KcmProcess } from './harness.js';

let running: KcmProcess | undefined;
let dataDir: string | undefined;
after(async () => {
  await running?.stop();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

interface Ack {
  name: string;
  rv: number;
}

describe('kcm apiserver durability', () => {
  it('keeps every acknowledged write across a SIGKILL and restart', async () => {
    running = await startApiServerProcess();
    dataDir = running.dataDir;
    const first = running;
    const dispatcher = new Agent({ connect: { ca: first.caPem }, connections: 16 });
    const acked: Ack[] = [];
    let attempts = 0;
    let stop = false;

    const writer = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const name = `w${w}-${i}`;
        attempts++;
        try {
          const r = await request(`${first.url}/api/v1/namespaces/default/configmaps`, {
            method: 'POST',
            dispatcher,
            headers: { authorization: `Bearer ${first.adminToken}`, 'content-type': 'application/json' },
            body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { i: String(i), pad: 'x'.repeat(512) } }),
          });
          const body = (await r.body.json()) as { metadata?: { resourceVersion?: string } };
          if (r.statusCode !== 201) throw new Error(`create ${name}: HTTP ${r.statusCode} ${JSON.stringify(body)}`);
          acked.push({ name, rv: Number(body.metadata!.resourceVersion) });
        } catch (err) {
          if (stop || first.child.exitCode !== null || first.child.signalCode !== null) return;
          // The server is being killed: connection errors end this writer.
          if ((err as { code?: string }).code?.startsWith('UND_ERR') || /ECONNRESET|ECONNREFUSED|socket/i.test(String(err))) return;
          throw err;
        }
      }
    };

    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    await waitFor(() => acked.length >= 300, 30_000, '300 acknowledged writes');
    first.child.kill('SIGKILL');
    await first.exited;
    stop = true;
    await Promise.all(writers);
    await dispatcher.close();
    assert.ok(attempts > acked.length || acked.length >= 300);

    running = await startApiServerProcess({ dataDir });
    const list = await running.api('GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(list.status, 200);
    const stored = new Map(((list.json as { items: { metadata: { name: string; resourceVersion: string } }[] }).items).map((i) => [i.metadata.name, Number(i.metadata.resourceVersion)]));
    const lost = acked.filter((a) => stored.get(a.name) !== a.rv);
    assert.deepEqual(lost, [], `${lost.length} of ${acked.length} acknowledged writes lost or changed`);

    const maxAcked = Math.max(...acked.map((a) => a.rv));
    const after = await running.api('POST', '/api/v1/namespaces/default/configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after-restart' } });
    assert.equal(after.status, 201);
    const rv = Number((after.json as { metadata: { resourceVersion: string } }).metadata.resourceVersion);
    assert.ok(rv > maxAcked, `resourceVersion after restart (${rv}) must exceed every acknowledged one (${maxAcked})`);

    // kubectl sees the same data through the rewritten kubeconfig (the port changed).
    const count = (await running.kubectlOk(['get', 'configmaps', '-n', 'default', '-o', 'name'])).split('\n').filter(Boolean).length;
    assert.ok(count >= acked.length + 1);
    await running.stop({ keepDataDir: true });
    running = undefined;
  });
});
