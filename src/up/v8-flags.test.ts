import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { CONTROLLER_SIDE_SEMI_SPACE_MB, CONTROLLER_SIDE_YOUNG_GENERATION_MB, controllerSideExecArgv } from './v8-flags.js';

describe('controller side V8 flags', () => {
  it("adds the semi-space size to the parent's flags, drops --inspect, and keeps a size the user gave", () => {
    assert.deepEqual(controllerSideExecArgv(['--enable-source-maps', '--inspect=9229']), ['--enable-source-maps', `--max-semi-space-size=${CONTROLLER_SIDE_SEMI_SPACE_MB}`]);
    assert.deepEqual(controllerSideExecArgv(['--max-semi-space-size=8']), ['--max-semi-space-size=8']);
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
