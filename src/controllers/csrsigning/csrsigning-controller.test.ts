import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GVR } from '../../api/gvr.js';
import type { FakeClient } from '../../controller/testing/fake-client.js';
import { newCA, type KeyPair } from '../../util/cert/cert.js';
import { setLogOutput } from '../../util/log/logger.js';
import type { CSR } from '../certificates/csr-util.js';
import { csrObject } from '../certificates/test-support.js';
import { setupController, until } from '../endpointslice/test-support.js';
import type { ControllerOptions } from '../types.js';
import type { CertificateController } from '../certificates/certificate-base.js';
import { descriptor, newCSRSigningController, signingDuration } from './csrsigning-controller.js';

const approved = [{ type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'ok' }];
const stored = (f: FakeClient, n: string) => f.stored<CSR>(GVR.certificateSigningRequests, '', n)!;
const certOf = (csr: CSR) => new X509Certificate(Buffer.from(csr.status!.certificate!, 'base64'));

describe('csr signing controller', () => {
  let dir: string;
  let ca: KeyPair;
  before(() => {
    setLogOutput(() => {});
    dir = mkdtempSync(join(tmpdir(), 'kcm-csrsigning-'));
    ca = newCA('cluster-ca');
    writeFileSync(join(dir, 'ca.crt'), ca.certPem);
    writeFileSync(join(dir, 'ca.key'), ca.keyPem);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const create = (ctx: Parameters<typeof newCSRSigningController>[0]) => {
    (ctx.options as ControllerOptions).clusterSigningCertFile = join(dir, 'ca.crt');
    (ctx.options as ControllerOptions).clusterSigningKeyFile = join(dir, 'ca.key');
    return newCSRSigningController(ctx) as CertificateController;
  };

  it('signs an approved kubelet client request with the cluster CA and the default duration', async () => {
    const env = await setupController((f) => f.seed(GVR.certificateSigningRequests, csrObject('c1', { conditions: approved })), create);
    await env.c.syncCSR('c1');
    const csr = stored(env.fake, 'c1');
    const cert = certOf(csr);
    assert.equal(cert.verify(new X509Certificate(ca.certPem).publicKey), true);
    assert.match(cert.subject, /CN=system:node:n1/);
    assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.2']);
    const now = env.clock.now();
    assert.equal(Date.parse(cert.validFrom), now - 5 * 60_000);
    assert.equal(Date.parse(cert.validTo), now + 8760 * 3600_000 - 5 * 60_000);
    const write = env.fake.actions().find((a) => a.verb === 'update');
    assert.equal(write?.subresource, 'status');
    await env.stop();
  });

  it('honours spec.expirationSeconds below the maximum and the configured duration', async () => {
    const env = await setupController(
      (f) => f.seed(GVR.certificateSigningRequests, csrObject('short', { conditions: approved, expirationSeconds: 3600, signerName: 'kubernetes.io/kube-apiserver-client', commonName: 'alice', organizations: ['dev'] })),
      create,
      { 'cluster-signing-duration': 24 * 3600_000 },
    );
    await env.c.syncCSR('short');
    const cert = certOf(stored(env.fake, 'short'));
    const now = env.clock.now();
    assert.equal(Date.parse(cert.validFrom), now); // short-lived: not backdated
    assert.equal(Date.parse(cert.validTo), now + 3600_000);
    assert.equal(signingDuration(24 * 3600_000, 60), 10 * 60_000);
    assert.equal(signingDuration(24 * 3600_000, 365 * 86400), 24 * 3600_000);
    assert.equal(signingDuration(24 * 3600_000, undefined), 24 * 3600_000);
    await env.stop();
  });

  it('marks a request the signer rejects as Failed with SignerValidationFailure', async () => {
    const env = await setupController(
      (f) =>
        f.seed(
          GVR.certificateSigningRequests,
          csrObject('bad-usage', { conditions: approved, signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth', 'server auth'] }),
          csrObject('no-san', { conditions: approved, signerName: 'kubernetes.io/kubelet-serving', usages: ['digital signature', 'server auth'] }),
        ),
      create,
    );
    await env.c.syncCSR('bad-usage');
    await env.c.syncCSR('no-san');
    const f1 = stored(env.fake, 'bad-usage').status!;
    assert.equal(f1.certificate, undefined);
    assert.deepEqual(
      f1.conditions!.map((c) => [c.type, c.reason, c.message]),
      [['Approved', 'AutoApproved', 'ok'], ['Failed', 'SignerValidationFailure', 'invalid usage for client certificate: server auth']],
    );
    assert.equal(stored(env.fake, 'no-san').status!.conditions![1]!.message, 'DNS or IP subjectAltName is required');
    // A failed request is left alone afterwards.
    env.fake.clearActions();
    await env.c.syncCSR('bad-usage');
    assert.equal(env.fake.actions().length, 0);
    await env.stop();
  });

  it('leaves pending, denied and foreign-signer requests alone', async () => {
    const env = await setupController(
      (f) =>
        f.seed(
          GVR.certificateSigningRequests,
          csrObject('pending'),
          csrObject('denied', { conditions: [...approved, { type: 'Denied', status: 'True', reason: 'x' }] }),
          csrObject('foreign', { conditions: approved, signerName: 'example.com/signer' }),
        ),
      create,
    );
    for (const n of ['pending', 'denied', 'foreign']) await env.c.syncCSR(n);
    assert.equal(env.fake.actions().filter((a) => a.verb === 'update').length, 0);
    await env.stop();
  });

  it('signs a serving certificate with its SANs when running', async () => {
    const env = await setupController(() => {}, create);
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    await env.fake.resource<CSR>(GVR.certificateSigningRequests).create(
      csrObject('serving', { conditions: approved, signerName: 'kubernetes.io/kubelet-serving', usages: ['digital signature', 'key encipherment', 'server auth'], dnsNames: ['n1.local'], ipAddresses: ['10.0.0.9'] }),
    );
    await until(() => !!stored(env.fake, 'serving').status?.certificate, 'certificate issued');
    const cert = certOf(stored(env.fake, 'serving'));
    assert.equal(cert.checkHost('n1.local'), 'n1.local');
    assert.equal(cert.checkIP('10.0.0.9'), '10.0.0.9');
    abort.abort();
    await run;
    await env.stop();
  });

  it('does nothing without signing files', async () => {
    const env = await setupController(() => {}, (ctx) => Object.assign(newCSRSigningController(ctx), { hasSynced: () => true }));
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    abort.abort();
    await run;
    assert.equal(env.c.healthy(), true);
    assert.equal('syncCSR' in env.c, false);
    await env.stop();
  });

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'certificatesigningrequest-signing-controller');
    assert.deepEqual(descriptor.aliases, ['csrsigning']);
  });
});
