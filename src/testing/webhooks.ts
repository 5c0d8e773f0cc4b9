/**
 * Webhooks for the test env (envtest's WebhookInstallOptions, without the
 * binaries): a kcm/runtime webhook server in the test's own process on
 * 127.0.0.1 with a generated certificate, and the configurations that make
 * the env's API server call it:
 *
 * - `admission`: handlers with their WebhookSpec; served at their paths and
 *   installed in one Mutating- and one ValidatingWebhookConfiguration;
 * - `conversion`: handlers for CRDs the env installs; the CRD's
 *   `spec.conversion` is set to strategy Webhook pointing at the handler;
 * - `configurations`: configuration objects from manifests (kubebuilder's
 *   config/webhook/manifests.yaml) installed with every clientConfig
 *   pointed at the env's server, keeping its path; register their handlers
 *   on `env.webhooks.server`.
 */
import type { MutatingWebhookConfiguration, ValidatingWebhookConfiguration } from 'kubernetes-types/admissionregistration/v1.js';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { KubeClient } from '../client/client.js';
import type { KubeObject } from '../api/types.js';
import type { ResourceKind } from '../runtime/kinds.js';
import type { AdmissionHandler } from '../runtime/webhook/admission.js';
import type { ConversionHandler } from '../runtime/webhook/conversion.js';
import { webhookConfigurations, type WebhookSpec } from '../runtime/webhook/configurations.js';
import { newWebhookServer, type WebhookServer } from '../runtime/webhook/server.js';
import { newLogger } from '../util/log/logger.js';
import { deepCopy } from '../util/json/deep-copy.js';

export interface TestWebhookOptions {
  /** Admission webhooks: each handler served at `path` and installed as its spec says. */
  admission?: Array<WebhookSpec & { handler: AdmissionHandler }>;
  /** Conversion webhooks for CRDs the env installs (by kind): the CRD gets `conversion.strategy: Webhook`. */
  conversion?: Array<{ kind: Pick<ResourceKind, 'group' | 'plural'>; handler: ConversionHandler; path?: string }>;
  /** Configurations from manifests; each webhook's clientConfig is pointed at the env's server (service.path or the URL's path kept). */
  configurations?: Array<MutatingWebhookConfiguration | ValidatingWebhookConfiguration>;
  /** The name of the configurations made for `admission` (default `kcm-test-webhooks`). */
  name?: string;
}

/** The env's webhook server, once started. */
export interface TestWebhooks {
  /** Serves the handlers; register more with `server.register(path, handler)`. */
  readonly server: WebhookServer;
  /** `https://127.0.0.1:<port>`. */
  readonly url: string;
  /** PEM of the CA that signed the server's certificate. */
  readonly caBundle: string;
}

interface WebhookLike {
  clientConfig?: { url?: string; service?: { path?: string }; caBundle?: string };
}

/** The path a manifest's clientConfig points at. */
function pathOf(cc: WebhookLike['clientConfig']): string {
  if (cc?.service) return cc.service.path ?? '/';
  if (cc?.url) return new URL(cc.url).pathname;
  return '/';
}

const crdNameOf = (k: Pick<ResourceKind, 'group' | 'plural'>) => `${k.plural}.${k.group}`;

export interface StartedTestWebhooks extends TestWebhooks {
  /** Sets spec.conversion on the CRDs that have a conversion handler (before they are created). */
  prepareCRD(crd: CustomResourceDefinition): CustomResourceDefinition;
  /** Creates the configurations. */
  install(client: KubeClient): Promise<void>;
  done: Promise<void>;
}

/** Starts the server (stopped with `signal`); call install() once the API server is up. */
export async function startTestWebhooks(opts: TestWebhookOptions, signal: AbortSignal): Promise<StartedTestWebhooks> {
  const server = newWebhookServer({ port: 0, host: '127.0.0.1', logger: newLogger('test-webhooks') });
  for (const a of opts.admission ?? []) server.register(a.path, a.handler);
  const conversions = new Map<string, string>();
  for (const c of opts.conversion ?? []) {
    const name = crdNameOf(c.kind);
    const path = c.path ?? `/convert-${name}`;
    server.register(path, c.handler, 'conversion');
    conversions.set(name, path);
  }
  const done = server.start(signal);
  await Promise.race([server.listening(), done]);
  const url = server.url();
  if (!url) throw new Error('startTestEnv: the webhook server did not start');
  const caBundle = Buffer.from(server.caBundle).toString('base64');
  const pointed = (cc: WebhookLike['clientConfig']) => ({ url: `${url}${pathOf(cc)}`, caBundle });
  return {
    server,
    url,
    caBundle: server.caBundle,
    done,
    prepareCRD(crd) {
      const path = conversions.get(crd.metadata?.name ?? '');
      if (!path) return crd;
      return {
        ...crd,
        spec: { ...crd.spec!, conversion: { strategy: 'Webhook', webhook: { clientConfig: { url: `${url}${path}`, caBundle }, conversionReviewVersions: ['v1'] } } },
      };
    },
    async install(client) {
      const objects: Array<MutatingWebhookConfiguration | ValidatingWebhookConfiguration> = [];
      if (opts.admission?.length) {
        const made = webhookConfigurations({ name: opts.name ?? 'kcm-test-webhooks', caBundle: server.caBundle, target: { url }, webhooks: opts.admission });
        if (made.mutating) objects.push(made.mutating);
        if (made.validating) objects.push(made.validating);
      }
      for (const c of opts.configurations ?? []) {
        const copy = deepCopy(c);
        for (const w of (copy.webhooks ?? []) as WebhookLike[]) w.clientConfig = pointed(w.clientConfig);
        objects.push(copy);
      }
      for (const o of objects) {
        const resource = o.kind === 'MutatingWebhookConfiguration' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
        await client.resource<KubeObject>({ group: 'admissionregistration.k8s.io', version: 'v1', resource }).create({ ...o, apiVersion: 'admissionregistration.k8s.io/v1' } as KubeObject);
      }
    },
  };
}
