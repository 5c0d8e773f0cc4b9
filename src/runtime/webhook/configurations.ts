/**
 * Webhook configurations for the handlers of a webhook server: the
 * MutatingWebhookConfiguration and ValidatingWebhookConfiguration objects
 * that tell the API server to call them (what kubebuilder generates from
 * its `+kubebuilder:webhook` markers).
 *
 *   const { mutating, validating } = webhookConfigurations({
 *     name: 'staticsite-operator',
 *     caBundle: server.caBundle,
 *     target: { service: { namespace: 'sites-system', name: 'staticsite-webhook' } },   // or { url: server.url() }
 *     webhooks: [{ type: 'mutating', name: 'default.staticsites.sites.example.com', path: '/default-staticsite', kind: StaticSite }],
 *   });
 */
import type { MutatingWebhook, MutatingWebhookConfiguration, RuleWithOperations, ValidatingWebhook, ValidatingWebhookConfiguration } from 'kubernetes-types/admissionregistration/v1.js';
import type { ResourceKind } from '../kinds.js';

export interface WebhookSpec {
  type: 'mutating' | 'validating';
  /** A qualified name, unique in its configuration: `default.staticsites.sites.example.com`. */
  name: string;
  /** The path the handler is registered at. */
  path: string;
  kind: ResourceKind;
  /** Default CREATE and UPDATE. */
  operations?: Array<'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT' | '*'>;
  /** Subresources too, e.g. ['status'] (default none). */
  subresources?: string[];
  /** Default Fail. */
  failurePolicy?: 'Fail' | 'Ignore';
  /** Default None. */
  sideEffects?: 'None' | 'NoneOnDryRun';
  /** Default 10. */
  timeoutSeconds?: number;
  /** Mutating only (default Never). */
  reinvocationPolicy?: 'Never' | 'IfNeeded';
}

export type WebhookTarget = { url: string } | { service: { namespace: string; name: string; port?: number } };

export interface WebhookConfigurationsOptions {
  /** The configurations' name. */
  name: string;
  /** PEM of the CA that signed the webhook server's certificate. */
  caBundle: string;
  target: WebhookTarget;
  webhooks: WebhookSpec[];
}

function webhook(spec: WebhookSpec, opts: WebhookConfigurationsOptions): ValidatingWebhook {
  const base = 'url' in opts.target ? { url: `${opts.target.url.replace(/\/$/, '')}${spec.path}` } : { service: { ...opts.target.service, path: spec.path } };
  const resources = [spec.kind.plural, ...(spec.subresources ?? []).map((s) => `${spec.kind.plural}/${s}`)];
  return {
    name: spec.name,
    admissionReviewVersions: ['v1'],
    clientConfig: { ...base, caBundle: Buffer.from(opts.caBundle).toString('base64') },
    // kubernetes-types' RuleWithOperations lacks the inlined Rule fields (resources, scope).
    rules: [{ apiGroups: [spec.kind.group], apiVersions: [spec.kind.version], operations: spec.operations ?? ['CREATE', 'UPDATE'], resources, scope: spec.kind.namespaced ? 'Namespaced' : 'Cluster' } as RuleWithOperations],
    failurePolicy: spec.failurePolicy ?? 'Fail',
    sideEffects: spec.sideEffects ?? 'None',
    timeoutSeconds: spec.timeoutSeconds ?? 10,
  };
}

export function webhookConfigurations(opts: WebhookConfigurationsOptions): { mutating?: MutatingWebhookConfiguration; validating?: ValidatingWebhookConfiguration } {
  const mutating = opts.webhooks.filter((w) => w.type === 'mutating').map((w): MutatingWebhook => ({ ...webhook(w, opts), reinvocationPolicy: w.reinvocationPolicy ?? 'Never' }));
  const validating = opts.webhooks.filter((w) => w.type === 'validating').map((w) => webhook(w, opts));
  const out: { mutating?: MutatingWebhookConfiguration; validating?: ValidatingWebhookConfiguration } = {};
  if (mutating.length > 0) out.mutating = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'MutatingWebhookConfiguration', metadata: { name: opts.name }, webhooks: mutating };
  if (validating.length > 0) out.validating = { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: opts.name }, webhooks: validating };
  return out;
}
