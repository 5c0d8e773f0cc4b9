/**
 * The two webhook admission plugins of the embedded API server,
 * MutatingAdmissionWebhook and ValidatingAdmissionWebhook, over one
 * configuration source and one webhook client. They go after the built-in
 * mutating plugins and before ResourceQuota, as in kube-apiserver's plugin
 * order; requests on admissionregistration's own kinds never reach them.
 */
import type { Storage } from '../../storage/storage.js';
import type { Logger } from '../../../util/log/logger.js';
import type { Clock } from '../../../util/clock/clock.js';
import type { ResourceTable } from '../../resources.js';
import type { SwaggerDocument } from '../../openapi/openapi-data.js';
import type { AdmissionAttributes, AdmissionPlugin, ObjectLister, ObjectReader } from '../admission.js';
import { dispatchMutating, mutatingPluginName } from './mutating-dispatcher.js';
import { dispatchValidating, validatingPluginName } from './validating-dispatcher.js';
import { startWebhookSource, type WebhookSource } from './webhook-source.js';
import { newWebhookClient, type WebhookClient } from './webhook-client.js';
import { newEndpointServiceResolver, type ServiceResolver } from './service-resolver.js';
import { isExemptAdmissionConfigurationKind } from './rules.js';
import { kindFor } from './versions.js';

export interface WebhookAdmissionOptions {
  storage: Storage;
  resources: ResourceTable;
  reader: ObjectReader;
  lister: ObjectLister;
  logger: Logger;
  clock?: Clock;
  /** The served OpenAPI document (decoding patched built-in objects). */
  swagger(): SwaggerDocument;
  /** Replaces the Service/EndpointSlice resolver (tests). */
  services?: ServiceResolver;
}

export interface WebhookAdmission {
  mutating: AdmissionPlugin;
  validating: AdmissionPlugin;
  /** The client, shared with CRD conversion webhooks. */
  client: WebhookClient;
  source: WebhookSource;
  close(): Promise<void>;
}

function exempt(a: AdmissionAttributes): boolean {
  const k = kindFor(a.resource, a.subresource);
  return !!k && isExemptAdmissionConfigurationKind(k.group, k.kind);
}

export async function startWebhookAdmission(opts: WebhookAdmissionOptions): Promise<WebhookAdmission> {
  const source = await startWebhookSource(opts.storage, opts.logger);
  const services = opts.services ?? newEndpointServiceResolver(opts.reader, opts.lister);
  const client = newWebhookClient({ services, ...(opts.clock ? { clock: opts.clock } : {}) });
  const deps = { client, resources: opts.resources, reader: opts.reader, logger: opts.logger, swagger: opts.swagger };
  return {
    mutating: {
      name: mutatingPluginName,
      admit(a) {
        const hooks = source.mutating();
        if (hooks.length === 0 || a.resource.virtual || exempt(a)) return;
        return dispatchMutating(deps, hooks, a);
      },
    },
    validating: {
      name: validatingPluginName,
      validate(a) {
        const hooks = source.validating();
        if (hooks.length === 0 || a.resource.virtual || exempt(a)) return;
        return dispatchValidating(deps, hooks, a);
      },
    },
    client,
    source,
    async close() {
      source.stop();
      await client.close();
    },
  };
}
