import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { controllerSideEnv } from './supervisor.js';

describe('controller side environment', () => {
  it("is the parent's without NODE_EXTRA_CA_CERTS, which the parent keeps", () => {
    const parent = { PATH: '/bin', NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt', NODE_OPTIONS: '--trace-warnings' };
    assert.deepEqual(controllerSideEnv(parent), { PATH: '/bin', NODE_OPTIONS: '--trace-warnings' });
    assert.equal(parent.NODE_EXTRA_CA_CERTS, '/etc/ssl/certs/ca-certificates.crt');
  });

  it('spares a child the extra certificates Node reads at every start', () => {
    // Node reads the file as the process starts, before any TLS: a missing one is reported then.
    const env = { ...process.env, NODE_EXTRA_CA_CERTS: '/nonexistent/kcm-extra-ca.pem' };
    const run = (e: NodeJS.ProcessEnv) => spawnSync(process.execPath, ['-e', '0'], { env: e, encoding: 'utf8' }).stderr;
    assert.match(run(env), /extra certs/i);
    assert.doesNotMatch(run(controllerSideEnv(env)), /extra certs/i);
  });
});
