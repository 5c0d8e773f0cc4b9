/**
 * The CSR signing controller (pkg/controller/certificates/signer): issues
 * certificates for approved, not failed CSRs of the built-in signers
 * `kubernetes.io/kube-apiserver-client`, `kube-apiserver-client-kubelet`,
 * `kubelet-serving` and `legacy-unknown`, from the CA in
 * `--cluster-signing-cert-file` / `--cluster-signing-key-file`, and writes
 * `status.certificate` (PEM) through the `/status` subresource.
 *
 * Validity: `--cluster-signing-duration` (default 1 year), shortened by
 * `spec.expirationSeconds` (never below 10 minutes); notBefore is backdated
 * 5 minutes unless the certificate lives less than 8 hours; notAfter never
 * passes the CA's. A request the signer rejects (subject, SANs or usages not
 * allowed for the signer) gets the Failed condition, reason
 * SignerValidationFailure, and is not retried.
 *
 * Without signing files the controller does nothing, as upstream skips it.
 * Upstream runs one controller per signer; kcm runs one queue that
 * dispatches by signer name (same outcome). The CA files are re-read when
 * their modification time changes, as upstream's dynamic reloader does.
 */
import { readFileSync, statSync } from 'node:fs';
import { GVR } from '../../api/gvr.js';
import type { Controller } from '../../controller/types.js';
import { rfc3339 } from '../../util/clock/clock.js';
import { issueCertificate, parseCSR, type CertificateRequest, type SigningCA } from '../../util/cert/csr.js';
import type { Logger } from '../../util/log/logger.js';
import { newCertificateController, type CertificateController } from '../certificates/certificate-base.js';
import {
  hasTrueCondition,
  isApproved,
  KUBE_APISERVER_CLIENT_KUBELET_SIGNER,
  KUBE_APISERVER_CLIENT_SIGNER,
  KUBELET_SERVING_SIGNER,
  LEGACY_UNKNOWN_SIGNER,
  requestPem,
  type CSR,
} from '../certificates/csr-util.js';
import { validateKubeletClientCSR } from '../csrapproving/csrapproving-controller.js';
import type { ControllerContext, ControllerDescriptor } from '../types.js';

export const CSR_SIGNING_CONTROLLER_NAME = 'certificatesigningrequest-signing-controller';
/** --cluster-signing-duration's default: 8760 h. */
export const DEFAULT_CLUSTER_SIGNING_DURATION_MS = 8760 * 3600_000;
const BACKDATE_MS = 5 * 60_000;
const SHORT_MS = 8 * 3600_000;
const MIN_DURATION_MS = 10 * 60_000;

const sameSet = (a: Set<string>, b: readonly string[]) => a.size === b.length && b.every((x) => a.has(x));

/** Upstream ValidateKubeletServingCSR; the error message or undefined. */
export function validateKubeletServingCSR(req: CertificateRequest, usages: readonly string[]): string | undefined {
  if (req.organizations.length !== 1 || req.organizations[0] !== 'system:nodes') return 'subject organization is not system:nodes';
  if (!req.dnsNames.length && !req.ipAddresses.length) return 'DNS or IP subjectAltName is required';
  if (req.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (req.uris.length) return 'URI subjectAltNames are not allowed';
  const set = new Set(usages);
  if (!sameSet(set, ['digital signature', 'key encipherment', 'server auth']) && !sameSet(set, ['digital signature', 'server auth'])) {
    return 'usages did not match [digital signature key encipherment server auth]';
  }
  if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  return undefined;
}

/** Upstream validAPIServerClientUsages. */
export function validateAPIServerClientUsages(usages: readonly string[]): string | undefined {
  let clientAuth = false;
  for (const u of usages) {
    if (u === 'client auth') clientAuth = true;
    else if (u !== 'digital signature' && u !== 'key encipherment') return `invalid usage for client certificate: ${u}`;
  }
  return clientAuth ? undefined : 'missing required usage for client certificate: client auth';
}

const SIGNERS = new Set([KUBELET_SERVING_SIGNER, KUBE_APISERVER_CLIENT_KUBELET_SIGNER, KUBE_APISERVER_CLIENT_SIGNER, LEGACY_UNKNOWN_SIGNER]);

/**
 * Whether `signerName` is one of ours, and if so the validation error (undefined when valid):
 * getCSRVerificationFuncForSignerName.
 */
export function verifyForSigner(signerName: string, req: CertificateRequest, usages: readonly string[]): { recognized: boolean; error?: string } {
  let error: string | undefined;
  switch (signerName) {
    case KUBELET_SERVING_SIGNER:
      error = validateKubeletServingCSR(req, usages);
      break;
    case KUBE_APISERVER_CLIENT_KUBELET_SIGNER:
      error = validateKubeletClientCSR(req, usages);
      break;
    case KUBE_APISERVER_CLIENT_SIGNER:
      error = validateAPIServerClientUsages(usages);
      break;
    case LEGACY_UNKNOWN_SIGNER:
      break; // no restrictions, for backward compatibility
    default:
      return { recognized: false };
  }
  return error === undefined ? { recognized: true } : { recognized: true, error };
}

/** The certificate lifetime for a request (signer.duration). */
export function signingDuration(certTTLMs: number, expirationSeconds: number | undefined): number {
  if (expirationSeconds === undefined || expirationSeconds === null) return certTTLMs;
  const requested = expirationSeconds * 1000;
  if (requested > certTTLMs) return certTTLMs;
  if (requested < MIN_DURATION_MS) return MIN_DURATION_MS;
  return requested;
}

/** Reads the CA files, again whenever either file's mtime changes. */
class CAProvider {
  private cached?: { ca: SigningCA; stamp: string };
  constructor(
    private readonly certFile: string,
    private readonly keyFile: string,
  ) {}
  current(): SigningCA {
    const stamp = `${statSync(this.certFile).mtimeMs}/${statSync(this.keyFile).mtimeMs}`;
    if (this.cached?.stamp !== stamp) this.cached = { ca: { certPem: readFileSync(this.certFile, 'utf8'), keyPem: readFileSync(this.keyFile, 'utf8') }, stamp };
    return this.cached.ca;
  }
}

class Signer {
  constructor(
    private readonly ctx: ControllerContext,
    private readonly ca: CAProvider,
    private readonly certTTLMs: number,
    private readonly log: Logger,
  ) {}

  async handle(csr: CSR): Promise<void> {
    if (!isApproved(csr) || hasTrueCondition(csr, 'Failed')) return;
    const signerName = csr.spec?.signerName ?? '';
    const name = csr.metadata?.name ?? '';
    const usages = csr.spec?.usages ?? [];
    if (!SIGNERS.has(signerName)) return; // not ours: another signer's business
    let req: CertificateRequest;
    try {
      req = parseCSR(requestPem(csr));
    } catch (err) {
      throw new Error(`unable to parse csr "${name}": ${(err as Error).message}`, { cause: err });
    }
    const csrs = this.ctx.client.resource<CSR>(GVR.certificateSigningRequests);
    const { error } = verifyForSigner(signerName, req, usages);
    if (error !== undefined) {
      csr.status = {
        ...csr.status,
        conditions: [...(csr.status?.conditions ?? []), { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: error, lastUpdateTime: rfc3339(this.ctx.clock.now()) }],
      };
      try {
        await csrs.updateStatus(csr);
      } catch (err) {
        throw new Error(`error adding failure condition for csr: ${(err as Error).message}`, { cause: err });
      }
      this.log.v(2).info({ csr: name, signerName, reason: error }, 'certificate signing request failed validation');
      return;
    }
    let certificate: string;
    try {
      certificate = issueCertificate(this.ca.current(), req, {
        usages,
        ttlMs: signingDuration(this.certTTLMs, csr.spec?.expirationSeconds),
        now: this.ctx.clock.now(),
        backdateMs: BACKDATE_MS,
        shortMs: SHORT_MS,
      });
    } catch (err) {
      throw new Error(`error auto signing csr: ${(err as Error).message}`, { cause: err });
    }
    csr.status = { ...csr.status, certificate: Buffer.from(certificate).toString('base64') };
    try {
      await csrs.updateStatus(csr);
    } catch (err) {
      throw new Error(`error updating signature for csr: ${(err as Error).message}`, { cause: err });
    }
    this.log.v(2).info({ csr: name, signerName }, 'signed certificate signing request');
  }
}

/** A controller that only waits: signing is not configured. */
function idleController(ctx: ControllerContext): Controller {
  const log = ctx.logger(CSR_SIGNING_CONTROLLER_NAME);
  return {
    name: CSR_SIGNING_CONTROLLER_NAME,
    healthy: () => true,
    run: async (_workers, signal) => {
      log.info({}, 'Skipping CSR signer controller because no csr cert/key was specified');
      if (signal.aborted) return;
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
  };
}

export function newCSRSigningController(ctx: ControllerContext): CertificateController | Controller {
  const certFile = ctx.options.clusterSigningCertFile;
  const keyFile = ctx.options.clusterSigningKeyFile;
  if (!certFile || !keyFile) return idleController(ctx);
  const ca = new CAProvider(certFile, keyFile);
  ca.current(); // fail start-up on unreadable files, as upstream does
  const ttl = Number(ctx.options.extra['cluster-signing-duration'] ?? DEFAULT_CLUSTER_SIGNING_DURATION_MS) || DEFAULT_CLUSTER_SIGNING_DURATION_MS;
  const signer = new Signer(ctx, ca, ttl, ctx.logger(CSR_SIGNING_CONTROLLER_NAME));
  return newCertificateController(ctx, { name: CSR_SIGNING_CONTROLLER_NAME, handle: (csr) => signer.handle(csr) });
}

/** kube-controller-manager runs each signer with 5 workers. */
export const descriptor: ControllerDescriptor = {
  name: CSR_SIGNING_CONTROLLER_NAME,
  aliases: ['csrsigning'],
  requiredResources: [GVR.certificateSigningRequests],
  defaultWorkers: 5,
  create: (ctx) => newCSRSigningController(ctx),
};
