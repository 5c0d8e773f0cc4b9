import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { API_SERVER_BOUNDED_GROWTH_FROM_MB, API_SERVER_OWN_GROWTH_BELOW_MB, API_SERVER_HEAP_GROWING_PERCENT, apiServerHeapGrowingPercent, boundsApiServerHeap, CONTROLLER_SIDE_HEAP_GROWING_PERCENT, CONTROLLER_SIDE_SEMI_SPACE_MB, CONTROLLER_SIDE_YOUNG_GENERATION_MB, controllerSideExecArgv } from './v8-flags.js';

describe('controller side V8 flags', () => {
  it("adds the semi-space size and the heap growth to the parent's flags, drops --inspect, and keeps what the user gave", () => {
    const growth = `--heap-growing-percent=${CONTROLLER_SIDE_HEAP_GROWING_PERCENT}`;
    assert.deepEqual(controllerSideExecArgv(['--enable-source-maps', '--inspect=9229']), ['--enable-source-maps', `--max-semi-space-size=${CONTROLLER_SIDE_SEMI_SPACE_MB}`, growth]);
    assert.deepEqual(controllerSideExecArgv(['--max-semi-space-size=8']), ['--max-semi-space-size=8', growth]);
    assert.deepEqual(controllerSideExecArgv(['--heap_growing_percent=80']), ['--heap_growing_percent=80', `--max-semi-space-size=${CONTROLLER_SIDE_SEMI_SPACE_MB}`]);
    assert.equal(CONTROLLER_SIDE_YOUNG_GENERATION_MB, 3 * CONTROLLER_SIDE_SEMI_SPACE_MB);
  });

  it('gives a process fewer, larger scavenges for the same allocations', () => {
    // Allocates 3 million small objects, keeping one in ten, and counts scavenges (kind 1).
    const script =
      "const { PerformanceObserver } = require('node:perf_hooks'); let n = 0;" +
      "new PerformanceObserver((l) => { n += l.getEntries().filter((e) => e.detail.kind === 1).length; }).observe({ entryTypes: ['gc'] });" +
      "const keep = []; for (let i = 0; i < 3e6; i++) { const o = { a: i, b: 'x' + i }; if (i % 10 === 0) keep.push(o); }" +
      'setTimeout(() => console.log(n), 50);';
    const scavenges = (flags: string[]) => Number(execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8' }).trim());
    const plain = scavenges([]);
    const larger = scavenges(controllerSideExecArgv([]));
    assert.ok(larger < plain, `${larger} scavenges with the flag, ${plain} without`);
  });
});

describe('API server V8 flags', () => {
  it('bounds the heap growth of a large live heap only, unless the user gave one', () => {
    assert.equal(boundsApiServerHeap(['--enable-source-maps']), true);
    assert.equal(boundsApiServerHeap(['--heap-growing-percent=50']), false);
    assert.equal(boundsApiServerHeap(['--heap_growing_percent=50']), false);
    const mb = 2 ** 20;
    assert.equal(apiServerHeapGrowingPercent(40 * mb), 0, "V8's own growth");
    assert.equal(apiServerHeapGrowingPercent(API_SERVER_OWN_GROWTH_BELOW_MB * mb - 1), 0);
    assert.equal(apiServerHeapGrowingPercent(API_SERVER_OWN_GROWTH_BELOW_MB * mb), 50);
    assert.equal(apiServerHeapGrowingPercent(API_SERVER_BOUNDED_GROWTH_FROM_MB * mb - 1), 50);
    assert.equal(apiServerHeapGrowingPercent(API_SERVER_BOUNDED_GROWTH_FROM_MB * mb), API_SERVER_HEAP_GROWING_PERCENT);
    assert.equal(apiServerHeapGrowingPercent(400 * mb), API_SERVER_HEAP_GROWING_PERCENT);
  });

  it('keeps a process with a large live heap and promoted garbage smaller (boundApiServerHeapGrowth)', () => {
    // 150 MB live in old space, then garbage that survives two scavenges (promoted) before it dies; prints the peak heap
    // used in the later rounds. Turns of the event loop between rounds: the bound follows full collections, seen by an
    // observer, and applies from the collection after the one that found the live heap large.
    const moduleUrl = new URL('./v8-flags.js', import.meta.url).href;
    const script = (bound: boolean) =>
      `import(${JSON.stringify(moduleUrl)}).then(async (m) => { ${bound ? 'm.boundApiServerHeapGrowth([]);' : ''}` +
      "const v8 = require('node:v8'); let peak = 0; const live = [];" +
      "for (let i = 0; i < 1.5e6; i++) { live.push({ i, s: 'live' + i, a: [i, i + 1] }); if (i % 1e5 === 0) await new Promise(setImmediate); }" +
      "for (let round = 0; round < 120; round++) { const g = []; for (let i = 0; i < 2e5; i++) g.push({ round, i, s: 'g' + i });" +
      '  const h = v8.getHeapStatistics().used_heap_size; if (round >= 80 && h > peak) peak = h; await new Promise(setImmediate); }' +
      'console.log(peak, live.length); });';
    const peak = (bound: boolean) => Number(execFileSync(process.execPath, ['-e', script(bound)], { encoding: 'utf8' }).split(' ')[0]);
    const plain = peak(false);
    const bounded = peak(true);
    assert.ok(bounded < plain * 0.6, `peak heap ${bounded} bytes bounded, ${plain} not`);
  });
});
