import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { countReady, countSchedulable, isAllReady, newStatusView, renderStatusLine } from './status.js';

function capture(tty: boolean) {
  const out = new PassThrough() as PassThrough & { isTTY?: boolean };
  out.isTTY = tty;
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  return { out, text: () => text };
}

describe('kcm up status', () => {
  it('is ready only when the API server, caches, scheduler and all nodes are', () => {
    const base = { nodesReady: 3, nodesWanted: 3, restarts: 0, apiServerReadyMs: 10, cachesSyncedMs: 20 };
    assert.equal(isAllReady({ ...base, schedulerStarted: true }, true), true);
    assert.equal(isAllReady(base, true), false);
    assert.equal(isAllReady(base, false), true);
    assert.equal(isAllReady({ ...base, nodesReady: 2, schedulerStarted: true }, true), false);
  });

  it('prints one plain line per change when not on a terminal', async () => {
    const c = capture(false);
    const v = newStatusView(c.out, 2);
    v.update({ apiServerReadyMs: 12 });
    v.update({ nodesReady: 1 });
    v.update({ nodesReady: 1 });
    v.update({ cachesSyncedMs: 300, controllers: { started: 5, skipped: 1 } });
    await new Promise((r) => setImmediate(r));
    assert.equal(
      c.text(),
      'kcm up: API server ready (12 ms)\nkcm up: nodes Ready 1/2\nkcm up: controller-manager caches synced (300 ms), 5 controllers running\n',
    );
  });

  it('redraws a single line on a terminal', async () => {
    const c = capture(true);
    const v = newStatusView(c.out, 1);
    v.update({ apiServerReadyMs: 1 });
    v.update({ nodesReady: 1 });
    v.finish();
    await new Promise((r) => setImmediate(r));
    assert.equal(c.text().split('\n').length, 2);
    assert.match(c.text(), /\r\x1b\[2K✔ API server ready .*nodes Ready 1\/1\n$/);
    assert.match(renderStatusLine({ nodesReady: 0, nodesWanted: 3, restarts: 2 }), /… API server ready.*restarts 2/);
  });
});

describe('countReady and countSchedulable', () => {
  const ready = { status: { conditions: [{ type: 'Ready', status: 'True' }] } };
  const nodes = [
    ready,
    { ...ready, spec: { taints: [{ key: 'node.cloudprovider.kubernetes.io/uninitialized' }] } },
    { ...ready, spec: { taints: [{ key: 'node.kubernetes.io/not-ready' }] } },
    { ...ready, spec: { taints: [{ key: 'dedicated' }] } },
    { status: { conditions: [{ type: 'Ready', status: 'False' }] } },
  ];
  it('counts Ready nodes', () => {
    assert.equal(countReady(nodes), 4);
  });
  it('counts Ready nodes that take pods: not those still tainted uninitialized (cloud) or not-ready', () => {
    assert.equal(countSchedulable(nodes), 2);
  });
});
