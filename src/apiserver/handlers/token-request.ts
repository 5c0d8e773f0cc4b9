/**
 * POST serviceaccounts/{name}/token: TokenRequest (authentication.k8s.io/v1),
 * as pkg/registry/core/serviceaccount/storage/token.go serves it. Signs a
 * bound token for the service account: expirationSeconds defaults to 3600
 * and may not be under 600 or over 2^32; audiences default to the API
 * audiences; a boundObjectRef (Pod, Secret or Node) must exist, match its
 * uid when one is given, and a Pod must run as this service account. A
 * pod-bound token asking for exactly 3607 s (the kubelet's projected volume)
 * for the API audiences is extended to a year with a `warnafter` claim, as
 * --service-account-extend-token-expiration (default on) does.
 */
import type { TokenRequest } from 'kubernetes-types/authentication/v1.js';
import type { Node, Pod } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../../api/types.js';
import { rfc3339 } from '../../util/clock/clock.js';
import type { RequestScope, TokenSignRequest } from '../context.js';
import { writeObject } from '../output.js';
import { badRequest, conflict, invalid, notSupported } from '../status.js';
import { readObject } from './decode.js';
import { negotiateWithoutTable } from '../table.js';

const group = 'authentication.k8s.io';
/** token.WarnOnlyBoundTokenExpirationSeconds and ExpirationExtensionSeconds. */
const warnOnlyExpirationSeconds = 60 * 60 + 7;
const extendedExpirationSeconds = 24 * 365 * 60 * 60;

export async function handleTokenRequest(s: RequestScope): Promise<void> {
  negotiateWithoutTable(s);
  const signer = s.server.auth.tokenSigner;
  if (!signer) throw notSupported('serviceaccounts/token is not served: the API server has no --service-account-signing-key-file', 404);
  const req = (await readObject(s, { group, version: 'v1', kind: 'TokenRequest' })) as TokenRequest & KubeObject;
  const meta = { ...(req.metadata ?? {}) } as NonNullable<TokenRequest['metadata']> & Record<string, unknown>;
  const spec = { ...(req.spec ?? { audiences: [] }) };
  const exp = spec.expirationSeconds ?? 3600;
  const errs = [];
  if (meta.name && meta.name !== s.name) errs.push({ type: 'FieldValueInvalid', field: 'metadata.name', message: `metadata.name: Invalid value: "${meta.name}": must match the service account name if specified` });
  if (meta.namespace && meta.namespace !== s.namespace) errs.push({ type: 'FieldValueInvalid', field: 'metadata.namespace', message: `metadata.namespace: Invalid value: "${meta.namespace}": must match the service account namespace if specified` });
  if (!Number.isInteger(exp) || exp < 600) errs.push({ type: 'FieldValueInvalid', field: 'spec.expirationSeconds', message: `spec.expirationSeconds: Invalid value: ${exp}: may not specify a duration less than 10 minutes` });
  else if (exp > 2 ** 32) errs.push({ type: 'FieldValueInvalid', field: 'spec.expirationSeconds', message: `spec.expirationSeconds: Invalid value: ${exp}: may not specify a duration larger than 2^32 seconds` });
  if (errs.length) throw invalid(group, 'TokenRequest', s.name, errs);

  const store = s.server.store;
  const saR = s.r;
  const sa = await store.getForRead(saR, s.namespace, s.name);
  const sign: TokenSignRequest = {
    namespace: s.namespace,
    serviceAccount: { name: s.name, uid: sa.metadata?.uid ?? '' },
    audiences: spec.audiences && spec.audiences.length > 0 ? spec.audiences : signer.apiAudiences,
    expirationSeconds: exp,
  };
  const ref = spec.boundObjectRef;
  let pod: Pod | undefined;
  if (ref) {
    const apiVersion = ref.apiVersion ?? '';
    const refGroup = apiVersion.includes('/') ? apiVersion.split('/')[0]! : '';
    const refVersion = apiVersion.includes('/') ? apiVersion.split('/')[1]! : apiVersion;
    const kind = ref.kind ?? '';
    const name = ref.name ?? '';
    const resource = refGroup === '' ? ({ Pod: 'pods', Secret: 'secrets', Node: 'nodes' } as Record<string, string>)[kind] : undefined;
    if (!resource) throw badRequest(`cannot bind token to object of type ${refGroup}/${refVersion}, Kind=${kind}`);
    const r = s.server.resources.storageResource('', resource)!;
    const obj = await store.getForRead(r, kind === 'Node' ? '' : s.namespace, name);
    const uid = obj.metadata?.uid ?? '';
    if (kind === 'Pod') {
      pod = obj as Pod;
      if (pod.spec?.serviceAccountName !== s.name) {
        throw badRequest(`cannot bind token for serviceaccount "${s.name}" to pod running with serviceaccount "${pod.spec?.serviceAccountName ?? ''}"`);
      }
    }
    if (ref.uid && ref.uid !== uid) {
      throw conflict({ group: '', resource: kind }, name, `the UID in the bound object reference (${ref.uid}) does not match the UID in record (${uid}). The object might have been deleted and then recreated`);
    }
    sign.boundObject = { kind: kind as 'Pod' | 'Secret' | 'Node', name, uid };
    if (pod?.spec?.nodeName) {
      const node = (await store.getStored(s.server.resources.storageResource('', 'nodes')!, '', pod.spec.nodeName))?.object as Node | undefined;
      if (node) sign.node = { name: pod.spec.nodeName, uid: node.metadata?.uid ?? '' };
    }
  }
  const apiAuds = signer.apiAudiences;
  if (pod && exp === warnOnlyExpirationSeconds && sign.audiences.every((a) => apiAuds.includes(a))) {
    sign.expirationSeconds = extendedExpirationSeconds;
    sign.warnAfterSeconds = exp;
  }
  const now = s.server.clock.now();
  const { token } = signer.sign(sign);
  const out: TokenRequest & KubeObject = {
    kind: 'TokenRequest',
    apiVersion: `${group}/v1`,
    metadata: { ...meta, name: meta.name || s.name, namespace: meta.namespace || s.namespace, creationTimestamp: rfc3339(now) },
    spec: { ...spec, audiences: [...sign.audiences], expirationSeconds: exp },
    status: { token, expirationTimestamp: rfc3339(now + exp * 1000) },
  };
  writeObject(s, 201, out);
}
