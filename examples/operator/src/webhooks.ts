/**
 * The StaticSite admission webhooks, served by the operator's webhook
 * server (kcm/runtime's, like controller-runtime's):
 *
 * - defaulting (mutating): a domain is stored in canonical form (lower
 *   case, no trailing dot), so `Home.Example.com.` becomes
 *   `home.example.com` before the schema's pattern checks it; a site with no
 *   files gets an index.html naming it.
 *
 * Validation lives in the CRD itself (OpenAPI bounds and CEL rules in
 * resources.ts), so it holds even when the webhook server is down.
 */
import { defaultingWebhook, type WebhookSpec, type AdmissionHandler } from 'kcm/runtime';
import { StaticSite } from './resources.js';

export const DEFAULTING_PATH = '/default-staticsite';

/** Sets what a StaticSite leaves out, and canonicalizes its domain. */
export function defaultStaticSite(site: StaticSite): void {
  const spec = site.spec;
  if (typeof spec.domain === 'string') spec.domain = spec.domain.toLowerCase().replace(/\.$/, '');
  if (!spec.content || Object.keys(spec.content).length === 0) {
    spec.content = { 'index.html': `<h1>${site.metadata?.name ?? 'site'}</h1>\n` };
  }
}

/** The webhooks with their handlers: what the operator registers and what its configurations list. */
export const staticSiteWebhooks: Array<WebhookSpec & { handler: AdmissionHandler }> = [
  {
    type: 'mutating',
    name: 'default.staticsites.sites.example.com',
    path: DEFAULTING_PATH,
    kind: StaticSite,
    handler: defaultingWebhook(StaticSite, defaultStaticSite),
  },
];
