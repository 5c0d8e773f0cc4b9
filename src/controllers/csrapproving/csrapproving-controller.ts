/**
 * The CSR approving controller (pkg/controller/certificates/approver
 * sarapprove.go): auto-approves kubelet client certificate requests
 * (signer `kubernetes.io/kube-apiserver-client-kubelet`, subject
 * O=system:nodes, CN=system:node:<name>, no SANs, usages digital signature
 * + client auth [+ key encipherment]) when the requester may create the
 * `certificatesigningrequests/selfnodeclient` (CN equals the requesting
 * user: a node renewing its own certificate) or `/nodeclient` subresource
 * (a bootstrap token asking for a new node), decided by a
 * SubjectAccessReview. The approval is written through the `/approval`
 * subresource with reason AutoApproved.
 *
 * Difference: when the server does not serve SubjectAccessReviews (kcm's
 * embedded API server), the decision falls back to the requester's groups
 * as kubeadm's default bindings grant them: `system:masters` may do both,
 * `system:nodes` selfnodeclient, `system:bootstrappers*` nodeclient.
 */
import type { SubjectAccessReview } from 'kubernetes-types/authorization/v1.js';
import type { CertificateSigningRequest } from 'kubernetes-types/certificates/v1.js';
import { GVR } from '../../api/gvr.js';
import { isNotFound, isStatusError } from '../../client/errors.js';
import type { Kube } from '../../tools/cache/factory.js';
import type { Logger } from '../../util/log/logger.js';
import { parseCSR, type CertificateRequest } from '../../util/cert/csr.js';
import { newCertificateController, type CertificateController } from '../certificates/certificate-base.js';
import { approvalState, IgnorableError, KUBE_APISERVER_CLIENT_KUBELET_SIGNER, requestPem, type CSR } from '../certificates/csr-util.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';

export const CSR_APPROVING_CONTROLLER_NAME = 'certificatesigningrequest-approving-controller';

const SAR_GVR = Object.freeze({ group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews' });

interface Recognizer {
  recognize(csr: CertificateSigningRequest, req: CertificateRequest): boolean;
  subresource: 'selfnodeclient' | 'nodeclient';
  successMessage: string;
}

const sameSet = (a: Set<string>, b: readonly string[]) => a.size === b.length && b.every((x) => a.has(x));

/** Upstream ValidateKubeletClientCSR; returns the error message or undefined. */
export function validateKubeletClientCSR(req: CertificateRequest, usages: readonly string[]): string | undefined {
  if (req.organizations.length !== 1 || req.organizations[0] !== 'system:nodes') return 'subject organization is not system:nodes';
  if (req.dnsNames.length) return 'DNS subjectAltNames are not allowed';
  if (req.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (req.ipAddresses.length) return 'IP subjectAltNames are not allowed';
  if (req.uris.length) return 'URI subjectAltNames are not allowed';
  if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  const set = new Set(usages);
  if (!sameSet(set, ['digital signature', 'key encipherment', 'client auth']) && !sameSet(set, ['digital signature', 'client auth'])) {
    return 'usages did not match [client auth digital signature key encipherment]';
  }
  return undefined;
}

function isNodeClientCert(csr: CertificateSigningRequest, req: CertificateRequest): boolean {
  if (csr.spec?.signerName !== KUBE_APISERVER_CLIENT_KUBELET_SIGNER) return false;
  return validateKubeletClientCSR(req, csr.spec?.usages ?? []) === undefined;
}

const recognizers: readonly Recognizer[] = [
  {
    recognize: (csr, req) => csr.spec?.username === req.commonName && isNodeClientCert(csr, req),
    subresource: 'selfnodeclient',
    successMessage: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
  },
  {
    recognize: isNodeClientCert,
    subresource: 'nodeclient',
    successMessage: 'Auto approving kubelet client certificate after SubjectAccessReview.',
  },
];

/** The group fallback used when SubjectAccessReviews are not served (see the file comment). */
export function allowedByGroups(groups: readonly string[], subresource: Recognizer['subresource']): boolean {
  if (groups.includes('system:masters')) return true;
  if (subresource === 'selfnodeclient') return groups.includes('system:nodes');
  return groups.some((g) => g === 'system:bootstrappers' || g.startsWith('system:bootstrappers:'));
}

class Approver {
  private sarServed = true;
  constructor(
    private readonly ctx: ControllerContext,
    private readonly log: Logger,
  ) {}

  async handle(csr: CSR): Promise<void> {
    if (csr.status?.certificate) return;
    const { approved, denied } = approvalState(csr);
    if (approved || denied) return;
    let req: CertificateRequest;
    try {
      req = parseCSR(requestPem(csr));
    } catch (err) {
      throw new Error(`unable to parse csr "${csr.metadata?.name}": ${(err as Error).message}`, { cause: err });
    }
    const tried: string[] = [];
    for (const r of recognizers) {
      if (!r.recognize(csr, req)) continue;
      tried.push(r.subresource);
      if (!(await this.authorize(csr, r.subresource))) continue;
      csr.status = { ...csr.status, conditions: [...(csr.status?.conditions ?? []), { type: 'Approved', status: 'True', reason: 'AutoApproved', message: r.successMessage }] };
      try {
        await this.ctx.client.resource<CSR>(GVR.certificateSigningRequests).updateSubresource(csr.metadata?.name ?? '', 'approval', csr);
      } catch (err) {
        throw new Error(`error updating approval for csr: ${(err as Error).message}`, { cause: err });
      }
      this.log.v(2).info({ csr: csr.metadata?.name, as: r.subresource }, 'approved certificate signing request');
      return;
    }
    if (tried.length) throw new IgnorableError(`recognized csr "${csr.metadata?.name}" as [${tried.join(' ')}] but subject access review was not approved`);
  }

  private async authorize(csr: CSR, subresource: Recognizer['subresource']): Promise<boolean> {
    if (this.sarServed) {
      const sar: Kube<SubjectAccessReview> = {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: {
          user: csr.spec?.username ?? '',
          uid: csr.spec?.uid ?? '',
          groups: csr.spec?.groups ?? [],
          extra: csr.spec?.extra ?? {},
          resourceAttributes: { group: 'certificates.k8s.io', resource: 'certificatesigningrequests', verb: 'create', subresource, version: '*' },
        },
      };
      try {
        const out = await this.ctx.client.resource<typeof sar>(SAR_GVR).create(sar);
        return out.status?.allowed === true;
      } catch (err) {
        if (!(isNotFound(err) || (isStatusError(err) && err.status.code === 405))) throw err;
        this.sarServed = false;
        this.log.info({}, 'the server does not serve SubjectAccessReviews; approving by the requester\'s groups');
      }
    }
    return allowedByGroups(csr.spec?.groups ?? [], subresource);
  }
}

export function newCSRApprovingController(ctx: ControllerContext): CertificateController {
  const approver = new Approver(ctx, ctx.logger(CSR_APPROVING_CONTROLLER_NAME));
  return newCertificateController(ctx, { name: CSR_APPROVING_CONTROLLER_NAME, handle: (csr) => approver.handle(csr) });
}

/** kube-controller-manager runs the approver with 5 workers. */
export const descriptor: ControllerDescriptor = {
  name: CSR_APPROVING_CONTROLLER_NAME,
  aliases: ['csrapproving'],
  requiredResources: [GVR.certificateSigningRequests],
  defaultWorkers: 5,
  create: (ctx) => newCSRApprovingController(ctx),
};
