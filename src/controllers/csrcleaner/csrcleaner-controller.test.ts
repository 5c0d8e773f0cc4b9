import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { GVR } from '../../api/gvr.js';
import { newCA, newSignedCert } from '../../util/cert/cert.js';
import { rfc3339 } from '../../util/clock/clock.js';
import { setLogOutput } from '../../util/log/logger.js';
import type { CSR } from '../certificates/csr-util.js';
import { csrObject } from '../certificates/test-support.js';
import { setupController, until } from '../endpointslice/test-support.js';
import { cleanupReason, descriptor, newCSRCleanerController } from './csrcleaner-controller.js';

const T0 = Date.parse('2024-01-01T00:00:00Z');
const ago = (ms: number) => rfc3339(T0 - ms);
const H = 3600_000;
const certB64 = (validityDays: number, notBefore?: number) =>
  Buffer.from(newSignedCert(newCA('ca'), { commonName: 'x', validityDays, ...(notBefore !== undefined ? { notBefore } : {}) }).certPem).toString('base64');

describe('csr cleaner controller', () => {
  before(() => setLogOutput(() => {}));

  it('decides by the upstream deadlines', () => {
    const live = certB64(1, T0 - H);
    const cases: Array<[string, CSR, boolean]> = [
      ['fresh pending', csrObject('a', { created: ago(23 * H) }), false],
      ['old pending', csrObject('a', { created: ago(25 * H) }), true],
      ['recently denied', csrObject('a', { conditions: [{ type: 'Denied', status: 'True', lastUpdateTime: ago(59 * 60_000) }] }), false],
      ['old denied', csrObject('a', { conditions: [{ type: 'Denied', status: 'True', lastUpdateTime: ago(61 * 60_000) }] }), true],
      ['old failed', csrObject('a', { conditions: [{ type: 'Failed', status: 'True', lastUpdateTime: ago(2 * H) }] }), true],
      ['recently issued', csrObject('a', { conditions: [{ type: 'Approved', status: 'True', lastUpdateTime: ago(30 * 60_000) }], certificate: live }), false],
      ['old issued', csrObject('a', { conditions: [{ type: 'Approved', status: 'True', lastUpdateTime: ago(2 * H) }], certificate: live }), true],
      ['old approved, never issued', csrObject('a', { conditions: [{ type: 'Approved', status: 'True', lastUpdateTime: ago(48 * H) }] }), false],
      ['issued, expired certificate', csrObject('a', { conditions: [{ type: 'Approved', status: 'True' }], certificate: certB64(1, T0 - 3 * 86400_000) }), true],
      ['denied without time', csrObject('a', { conditions: [{ type: 'Denied', status: 'True' }] }), false],
    ];
    for (const [what, csr, del] of cases) assert.equal(cleanupReason(csr, T0) !== undefined, del, what);
  });

  it('deletes finished requests once at start and again every hour', async () => {
    const env = await setupController((f) => {
      f.seed(GVR.certificateSigningRequests, csrObject('old', { created: ago(25 * H) }), csrObject('young', { created: ago(23 * H + 30 * 60_000) }));
    }, newCSRCleanerController);
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    await until(() => !env.fake.stored(GVR.certificateSigningRequests, '', 'old'), 'old pending deleted');
    assert.ok(env.fake.stored(GVR.certificateSigningRequests, '', 'young'));
    await env.clock.advance(H);
    await until(() => !env.fake.stored(GVR.certificateSigningRequests, '', 'young'), 'young deleted an hour later');
    abort.abort();
    await run;
    await env.stop();
  });

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'certificatesigningrequest-cleaner-controller');
    assert.deepEqual(descriptor.aliases, ['csrcleaner']);
  });
});
