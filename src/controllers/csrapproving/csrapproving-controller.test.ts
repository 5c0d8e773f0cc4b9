import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import { GVR } from '../../api/gvr.js';
import { newStatus, StatusError } from '../../client/errors.js';
import type { FakeClient } from '../../controller/testing/fake-client.js';
import { setLogOutput } from '../../util/log/logger.js';
import type { CSR } from '../certificates/csr-util.js';
import { csrObject } from '../certificates/test-support.js';
import { setupController } from '../endpointslice/test-support.js';
import { allowedByGroups, descriptor, newCSRApprovingController, validateKubeletClientCSR } from './csrapproving-controller.js';
import { parseCSR, newCSR } from '../../util/cert/csr.js';

/** Makes the fake answer SubjectAccessReviews: `allow(sar)` decides; or 404 when `allow` is undefined. */
function sarReactor(f: FakeClient, allow?: (sub: string) => boolean): string[] {
  const asked: string[] = [];
  f.prependReactor('create', 'subjectaccessreviews', (a) => {
    const sar = a.object as { spec: { resourceAttributes: { subresource: string } } };
    asked.push(sar.spec.resourceAttributes.subresource);
    if (!allow) throw new StatusError(newStatus(404, 'NotFound', 'the server could not find the requested resource'));
    return { ...sar, status: { allowed: allow(sar.spec.resourceAttributes.subresource) } };
  });
  f.prependReactor('update', 'certificatesigningrequests/approval', (a) => {
    const obj = a.object as CSR;
    const cur = f.stored<CSR>(GVR.certificateSigningRequests, '', obj.metadata!.name!)!;
    return f.resource<CSR>(GVR.certificateSigningRequests).updateStatus({ ...cur, status: obj.status });
  });
  return asked;
}

const stored = (f: FakeClient, n: string) => f.stored<CSR>(GVR.certificateSigningRequests, '', n)!;

describe('csr approving controller', () => {
  before(() => setLogOutput(() => {}));

  it('approves a node renewing its own client certificate after a selfnodeclient review', async () => {
    let asked: string[] = [];
    const env = await setupController((f) => {
      asked = sarReactor(f, (s) => s === 'selfnodeclient');
      f.seed(GVR.certificateSigningRequests, csrObject('csr-1'));
    }, newCSRApprovingController);
    await env.c.syncCSR('csr-1');
    assert.deepEqual(asked, ['selfnodeclient']);
    const c = stored(env.fake, 'csr-1').status!.conditions!;
    assert.equal(c.length, 1);
    assert.deepEqual({ ...c[0] }, { type: 'Approved', status: 'True', reason: 'AutoApproved', message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' });
    await env.stop();
  });

  it('approves a bootstrap request for a new node after a nodeclient review', async () => {
    let asked: string[] = [];
    const env = await setupController((f) => {
      asked = sarReactor(f, (s) => s === 'nodeclient');
      f.seed(GVR.certificateSigningRequests, csrObject('boot', { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token'] }));
    }, newCSRApprovingController);
    await env.c.syncCSR('boot');
    assert.deepEqual(asked, ['nodeclient']);
    const c = stored(env.fake, 'boot').status!.conditions![0]!;
    assert.equal(c.reason, 'AutoApproved');
    assert.equal(c.message, 'Auto approving kubelet client certificate after SubjectAccessReview.');
    await env.stop();
  });

  it('leaves a recognized request pending and retries quietly when the review denies it', async () => {
    const env = await setupController((f) => {
      sarReactor(f, () => false);
      f.seed(GVR.certificateSigningRequests, csrObject('csr-1'));
    }, newCSRApprovingController);
    await assert.rejects(env.c.syncCSR('csr-1'), /recognized csr "csr-1" as \[selfnodeclient nodeclient\] but subject access review was not approved/);
    assert.equal(stored(env.fake, 'csr-1').status?.conditions, undefined);
    await env.stop();
  });

  it('ignores other signers, server certificates and already decided requests', async () => {
    let asked: string[] = [];
    const env = await setupController((f) => {
      asked = sarReactor(f, () => true);
      f.seed(
        GVR.certificateSigningRequests,
        csrObject('client', { signerName: 'kubernetes.io/kube-apiserver-client' }),
        csrObject('serving', { signerName: 'kubernetes.io/kubelet-serving', dnsNames: ['n1'], usages: ['digital signature', 'server auth'] }),
        csrObject('denied', { conditions: [{ type: 'Denied', status: 'True', reason: 'No' }] }),
        csrObject('wrong-usages', { usages: ['digital signature', 'client auth', 'server auth'] }),
      );
    }, newCSRApprovingController);
    for (const n of ['client', 'serving', 'denied', 'wrong-usages']) await env.c.syncCSR(n);
    assert.deepEqual(asked, []);
    assert.equal(env.fake.actions().filter((a) => a.subresource === 'approval').length, 0);
    await env.stop();
  });

  it('falls back to the requester groups when SubjectAccessReviews are not served', async () => {
    let asked: string[] = [];
    const env = await setupController((f) => {
      asked = sarReactor(f);
      f.seed(GVR.certificateSigningRequests, csrObject('csr-1'), csrObject('stranger', { username: 'bob', groups: ['system:authenticated'] }));
    }, newCSRApprovingController);
    await env.c.syncCSR('csr-1');
    assert.equal(stored(env.fake, 'csr-1').status!.conditions![0]!.reason, 'AutoApproved');
    await assert.rejects(env.c.syncCSR('stranger'), /subject access review was not approved/);
    assert.deepEqual(asked, ['selfnodeclient']); // asked once, then remembered the server lacks the API
    await env.stop();
  });

  it('validates kubelet client requests as upstream', () => {
    const req = (o: Parameters<typeof newCSR>[0]) => parseCSR(newCSR(o).csrPem);
    assert.equal(validateKubeletClientCSR(req({ commonName: 'system:node:a', organizations: ['system:nodes'] }), ['digital signature', 'key encipherment', 'client auth']), undefined);
    assert.equal(validateKubeletClientCSR(req({ commonName: 'system:node:a', organizations: ['x'] }), ['digital signature', 'client auth']), 'subject organization is not system:nodes');
    assert.equal(validateKubeletClientCSR(req({ commonName: 'a', organizations: ['system:nodes'] }), ['digital signature', 'client auth']), 'subject common name does not begin with system:node:');
    assert.equal(validateKubeletClientCSR(req({ commonName: 'system:node:a', organizations: ['system:nodes'], dnsNames: ['a'] }), ['digital signature', 'client auth']), 'DNS subjectAltNames are not allowed');
    assert.equal(validateKubeletClientCSR(req({ commonName: 'system:node:a', organizations: ['system:nodes'] }), ['client auth']), 'usages did not match [client auth digital signature key encipherment]');
  });

  it('grants by group as the default bindings do', () => {
    assert.equal(allowedByGroups(['system:masters'], 'nodeclient'), true);
    assert.equal(allowedByGroups(['system:nodes'], 'selfnodeclient'), true);
    assert.equal(allowedByGroups(['system:nodes'], 'nodeclient'), false);
    assert.equal(allowedByGroups(['system:bootstrappers:kubeadm:default-node-token'], 'nodeclient'), true);
    assert.equal(allowedByGroups(['system:bootstrappers'], 'selfnodeclient'), false);
  });

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'certificatesigningrequest-approving-controller');
    assert.deepEqual(descriptor.aliases, ['csrapproving']);
  });
});
