/**
 * CertificateSigningRequest helpers shared by the CSR controllers
 * (pkg/controller/certificates/certificate_controller_utils.go and
 * pkg/apis/certificates helpers).
 */
import type { CertificateSigningRequest, CertificateSigningRequestCondition } from 'kubernetes-types/certificates/v1.js';
import type { Kube } from '../../tools/cache/factory.js';

export type CSR = Kube<CertificateSigningRequest>;

export const KUBE_APISERVER_CLIENT_SIGNER = 'kubernetes.io/kube-apiserver-client';
export const KUBE_APISERVER_CLIENT_KUBELET_SIGNER = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING_SIGNER = 'kubernetes.io/kubelet-serving';
export const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';

/** Approved and denied state from the conditions (GetCertApprovalCondition). */
export function approvalState(csr: CertificateSigningRequest): { approved: boolean; denied: boolean } {
  let approved = false;
  let denied = false;
  for (const c of csr.status?.conditions ?? []) {
    if (c.type === 'Approved') approved = true;
    if (c.type === 'Denied') denied = true;
  }
  return { approved, denied };
}

/** Approved and not denied (IsCertificateRequestApproved). */
export function isApproved(csr: CertificateSigningRequest): boolean {
  const s = approvalState(csr);
  return s.approved && !s.denied;
}

/** Whether a condition of `type` has status True (a missing status counts as True, as upstream). */
export function hasTrueCondition(csr: CertificateSigningRequest, type: string): boolean {
  return (csr.status?.conditions ?? []).some((c: CertificateSigningRequestCondition) => c.type === type && (!c.status || c.status === 'True'));
}

/** PEM of spec.request (base64 []byte on the wire). */
export function requestPem(csr: CertificateSigningRequest): string {
  return Buffer.from(csr.spec?.request ?? '', 'base64').toString('latin1');
}

/** Whether status.certificate is set. */
export function isIssued(csr: CertificateSigningRequest): boolean {
  return !!csr.status?.certificate;
}

/** An error after which the key is retried quietly (logged at -v4): certificates.IgnorableError. */
export class IgnorableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IgnorableError';
  }
}
