/** Builders for CSR controller tests. */
import { newCSR, type NewCSROptions } from '../../util/cert/csr.js';
import type { CSR } from './csr-util.js';

export interface CsrSpecOpts extends Partial<NewCSROptions> {
  signerName?: string;
  usages?: string[];
  username?: string;
  groups?: string[];
  expirationSeconds?: number;
  conditions?: NonNullable<CSR['status']>['conditions'];
  certificate?: string;
  created?: string;
}

/** A CSR object carrying a freshly generated PKCS#10 request. */
export function csrObject(name: string, o: CsrSpecOpts = {}): CSR {
  const { csrPem } = newCSR({ commonName: o.commonName ?? 'system:node:n1', organizations: o.organizations ?? ['system:nodes'], ...(o.dnsNames ? { dnsNames: o.dnsNames } : {}), ...(o.ipAddresses ? { ipAddresses: o.ipAddresses } : {}) });
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name, ...(o.created ? { creationTimestamp: o.created } : {}) },
    spec: {
      request: Buffer.from(csrPem).toString('base64'),
      signerName: o.signerName ?? 'kubernetes.io/kube-apiserver-client-kubelet',
      usages: o.usages ?? ['digital signature', 'client auth'],
      username: o.username ?? 'system:node:n1',
      groups: o.groups ?? ['system:nodes', 'system:authenticated'],
      ...(o.expirationSeconds !== undefined ? { expirationSeconds: o.expirationSeconds } : {}),
    },
    status: { ...(o.conditions ? { conditions: o.conditions } : {}), ...(o.certificate ? { certificate: o.certificate } : {}) },
  };
}
