/**
 * `spec.conversion` of a CustomResourceDefinition: the v1 defaults
 * (apiextensions-apiserver pkg/apis/apiextensions/v1/defaults.go: strategy
 * None when `conversion` is absent, a webhook service's port 443) and
 * validateCustomResourceConversion of pkg/apis/apiextensions/validation,
 * with upstream's messages.
 *
 * Upstream validates the internal type, where v1's
 * `conversion.webhook.clientConfig` is `conversion.webhookClientConfig` and
 * `conversion.webhook.conversionReviewVersions` is
 * `conversion.conversionReviewVersions`: errors name those paths, as
 * kube-apiserver's do.
 */
import type { CustomResourceDefinitionSpec } from 'kubernetes-types/apiextensions/v1.js';
import { forbidden, GoLiteral, invalid, isDNS1035Label, notSupported, required, type FieldError } from '../../api/validation.js';
import { validateCABundle, validateWebhookService, validateWebhookURL } from '../admission/webhook/client-config-validation.js';
import { isPlainObject } from './schema.js';

type Obj = Record<string, unknown>;

/** The ConversionReview versions this server sends (acceptedConversionReviewVersions). */
export const acceptedConversionReviewVersions = ['v1', 'v1beta1'] as const;

/** SetDefaults_CustomResourceDefinitionSpec (conversion) and SetDefaults_ServiceReference. Mutates spec. */
export function defaultConversion(spec: Obj): void {
  if (spec.conversion === undefined || spec.conversion === null) spec.conversion = { strategy: 'None' };
  const conv = spec.conversion;
  if (!isPlainObject(conv) || !isPlainObject(conv.webhook)) return;
  const cc = (conv.webhook as Obj).clientConfig;
  if (!isPlainObject(cc) || !isPlainObject(cc.service)) return;
  const svc = cc.service as Obj;
  if (svc.port === undefined || svc.port === null) svc.port = 443;
}

export interface ConversionValidationOptions {
  /**
   * conversionReviewVersions must name a version this server sends; relaxed
   * on update when the old CRD already listed none (upstream keeps existing
   * objects updatable).
   */
  requireRecognizedVersion: boolean;
  /** An invalid caBundle passes: on create, before the CRD is established, or when the old bundle was invalid too. */
  allowInvalidCABundle: boolean;
}

/**
 * The conversion errors of a CRD spec: the strategy/preserveUnknownFields
 * rule of validateCustomResourceDefinitionSpec, then
 * validateCustomResourceConversion.
 */
export function validateConversion(spec: CustomResourceDefinitionSpec, opts: ConversionValidationOptions): FieldError[] {
  const errs: FieldError[] = [];
  const conv = spec.conversion as (Obj & { strategy?: string }) | undefined;
  if (!conv) return errs;
  const strategy = typeof conv.strategy === 'string' ? conv.strategy : '';
  if (strategy !== 'None' && spec.preserveUnknownFields === true) {
    errs.push(invalid('spec.conversion.strategy', strategy, 'must be None if spec.preserveUnknownFields is true'));
  }
  const path = 'spec.conversion';
  if (strategy === '') errs.push(required(`${path}.strategy`, ''));
  else if (strategy !== 'None' && strategy !== 'Webhook') errs.push(notSupported(`${path}.strategy`, strategy, ['None', 'Webhook']));
  const webhook = isPlainObject(conv.webhook) ? (conv.webhook as Obj) : undefined;
  const cc = webhook && isPlainObject(webhook.clientConfig) ? (webhook.clientConfig as Obj) : undefined;
  const reviewVersions = webhook && Array.isArray(webhook.conversionReviewVersions) ? (webhook.conversionReviewVersions as unknown[]).map(String) : [];
  const ccPath = `${path}.webhookClientConfig`;
  if (strategy === 'Webhook') {
    if (!cc) errs.push(required(ccPath, 'required when strategy is set to Webhook'));
    else {
      const hasUrl = cc.url !== undefined && cc.url !== null;
      const hasService = cc.service !== undefined && cc.service !== null;
      if (hasUrl === hasService) errs.push(required(ccPath, 'exactly one of url or service is required'));
      else if (hasUrl) errs.push(...validateWebhookURL(`${ccPath}.url`, String(cc.url), true));
      else {
        const svc = (isPlainObject(cc.service) ? cc.service : {}) as { name?: string; namespace?: string; path?: string; port?: number };
        // Upstream passes (Name, Namespace) to ValidateWebhookService(namespace, name, ...)
        // (kubernetes#141353): a missing name is reported at service.namespace and
        // the other way round. Kept, so the errors read as kube-apiserver's.
        errs.push(...validateWebhookService(`${ccPath}.service`, svc.name, svc.namespace, svc.path, svc.port));
      }
      if (typeof cc.caBundle === 'string' && cc.caBundle.length > 0 && !opts.allowInvalidCABundle) {
        errs.push(...validateCABundle(`${ccPath}.caBundle`, cc.caBundle));
      }
    }
    errs.push(...validateReviewVersions(reviewVersions, opts.requireRecognizedVersion, `${path}.conversionReviewVersions`));
  } else {
    if (cc) errs.push(forbidden(ccPath, 'should not be set when strategy is not set to Webhook'));
    if (reviewVersions.length > 0) errs.push(forbidden(`${path}.conversionReviewVersions`, 'should not be set when strategy is not set to Webhook'));
  }
  return errs;
}

/** validateConversionReviewVersions. */
function validateReviewVersions(versions: string[], requireRecognized: boolean, path: string): FieldError[] {
  const errs: FieldError[] = [];
  if (versions.length === 0) return [required(path, '')];
  const seen = new Set<string>();
  let accepted = false;
  versions.forEach((v, i) => {
    if (seen.has(v)) {
      errs.push(invalid(`${path}[${i}]`, v, 'duplicate version'));
      return;
    }
    seen.add(v);
    for (const m of isDNS1035Label(v)) errs.push(invalid(`${path}[${i}]`, v, m));
    if ((acceptedConversionReviewVersions as readonly string[]).includes(v)) accepted = true;
  });
  if (requireRecognized && !accepted) errs.push(invalid(path, versions, `must include at least one of ${acceptedConversionReviewVersions.join(', ')}`));
  return errs;
}

/** hasValidConversionReviewVersionOrEmpty: whether an existing CRD's versions let updates require a recognized one. */
export function hasRecognizedReviewVersionOrNone(spec: CustomResourceDefinitionSpec | undefined): boolean {
  const versions = spec?.conversion?.webhook?.conversionReviewVersions ?? [];
  return versions.length === 0 || versions.some((v) => (acceptedConversionReviewVersions as readonly string[]).includes(v));
}

/**
 * allowInvalidCABundle on update: the old CRD is not established yet, or its
 * own caBundle was already invalid.
 */
export function allowInvalidCABundleOnUpdate(old: { spec?: CustomResourceDefinitionSpec; status?: { conditions?: { type: string; status: string }[] } }): boolean {
  const established = (old.status?.conditions ?? []).some((c) => c.type === 'Established' && c.status === 'True');
  if (!established) return true;
  const bundle = old.spec?.conversion?.webhook?.clientConfig?.caBundle;
  if (!bundle) return false;
  return validateCABundle('caBundle', bundle).length > 0;
}

/**
 * ValidateCustomResourceDefinitionStoredVersions: every stored version stays
 * in spec.versions, and the storage version is among them.
 */
export function validateStoredVersions(storedVersions: readonly string[], versions: readonly { name: string; storage?: boolean }[]): FieldError[] {
  const path = 'status.storedVersions';
  // Go prints the empty (nil) slice as []string(nil).
  if (storedVersions.length === 0) return [invalid(path, new GoLiteral('[]string(nil)'), 'must have at least one stored version')];
  const errs: FieldError[] = [];
  const names = new Set(versions.map((v) => v.name));
  for (const v of versions) {
    if (v.storage && !storedVersions.includes(v.name)) errs.push(invalid(path, [...storedVersions], `must have the storage version ${v.name}`));
  }
  // Each missing version once, at its last index (upstream indexes a map by name).
  const lastIndex = new Map<string, number>();
  storedVersions.forEach((v, i) => lastIndex.set(v, i));
  for (const [v, i] of [...lastIndex].sort((a, b) => a[1] - b[1])) {
    if (names.has(v)) continue;
    errs.push(
      invalid(
        `${path}[${i}]`,
        v,
        `missing from spec.versions; ${v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${v} and removes ${v} from status.storedVersions`,
      ),
    );
  }
  return errs;
}
