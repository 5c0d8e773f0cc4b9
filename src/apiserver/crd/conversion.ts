/**
 * Version conversion of custom resources, as apiextensions-apiserver does it
 * (pkg/apiserver/conversion: the CR converter with the None and Webhook
 * strategies; customresource_handler.go: the storage codec around it).
 *
 * - Objects are stored at the CRD's storage version. A write converts the
 *   request's object (already pruned, defaulted and validated with the
 *   request version's schema) to it, then prunes with the storage version's
 *   schema (upstream's schemaCoercingConverter).
 * - A read decodes each stored object with the schema of the version it was
 *   stored at (pruning and defaulting), converts it to the requested version
 *   and prunes with that version's schema. The requested version's defaults
 *   are not applied on reads: only the stored version's are (as upstream).
 * - Objects already at the target version are not converted; the others go
 *   in one call: one ConversionReview per batch (a list page, a watch event,
 *   one object).
 *
 * A failed conversion rejects with a StatusError carrying what
 * kube-apiserver answers for it: code 500, no reason (the converter's error
 * is not a Status, so ErrorToAPIStatus reports it as StatusReasonUnknown),
 * the converter's message (`conversion webhook for stable.example.com/v1,
 * Kind=CronTab failed: ...`).
 */
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import type { KubeObject } from '../../api/types.js';
import { statusInGoOrder, StatusError } from '../../client/errors.js';
import type { WebhookClient } from '../admission/webhook/webhook-client.js';
import type { Schema } from './schema.js';
import { prune } from './schema-pruning.js';
import { applyDefaults } from './schema-defaulting.js';
import { convertByWebhook, type ConversionWebhook } from './conversion-webhook.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export interface ConversionDeps {
  /** The server's webhook client (ServerContext.webhookClient). */
  webhookClient?: WebhookClient;
  /** The conversion webhook's deadline; upstream's is 30 s (tests shorten it). */
  webhookTimeoutMs?: number;
}

/** A conversion failure as the client receives it (500, no reason, the converter's message). */
export class ConversionError extends StatusError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(statusInGoOrder({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, code: 500 }), options);
    this.name = 'ConversionError';
  }
}

export interface CustomResourceConverter {
  /**
   * Converts `objs` (each at the version its apiVersion names) to `version`
   * with the CRD's strategy: None rewrites apiVersion, Webhook sends every
   * object not yet at `version` in one ConversionReview. Objects already at
   * `version` come back untouched. Takes ownership of `objs` (may change
   * them). `list`: the objects are a list's items (upstream's list texts).
   * Rejects with a ConversionError.
   */
  convert(objs: KubeObject[], version: string, opts?: { list?: boolean }): Promise<KubeObject[]>;
}

/** The CR converter of one CRD (delegatingCRConverter over the nop or the webhook converter). */
export function newCustomResourceConverter(crd: CustomResourceDefinition, deps: ConversionDeps): CustomResourceConverter {
  const spec = crd.spec;
  const group = spec.group;
  const versions = new Set((spec.versions ?? []).map((v) => v.name));
  const apiVersion = (v: string) => `${group}/${v}`;
  const webhookCfg = spec.conversion?.webhook;
  const hook: ConversionWebhook | undefined =
    spec.conversion?.strategy === 'Webhook' && webhookCfg?.clientConfig ? { clientConfig: webhookCfg.clientConfig, reviewVersions: webhookCfg.conversionReviewVersions ?? [] } : undefined;
  return {
    async convert(objs, version, opts = {}) {
      const desired = apiVersion(version);
      if (!versions.has(version)) throw new ConversionError(`request to convert CR to an invalid group/version: ${desired}`);
      const todo: number[] = [];
      objs.forEach((o, i) => {
        const av = typeof o.apiVersion === 'string' ? o.apiVersion : '';
        const slash = av.indexOf('/');
        if (slash < 0 || av.slice(0, slash) !== group || !versions.has(av.slice(slash + 1))) {
          throw new ConversionError(
            opts.list ? `request to convert CR list failed, list index ${i} has invalid group/version: ${av}` : `request to convert CR from an invalid group/version: ${av}`,
          );
        }
        if (av !== desired) todo.push(i);
      });
      if (todo.length === 0) return objs;
      if (!hook) {
        // nopConverter: only apiVersion changes.
        for (const i of todo) objs[i]!.apiVersion = desired;
        return objs;
      }
      let converted: KubeObject[];
      try {
        converted = await convertByWebhook(deps.webhookClient, hook, todo.map((i) => objs[i]!), desired, { list: opts.list, ...(deps.webhookTimeoutMs !== undefined ? { timeoutMs: deps.webhookTimeoutMs } : {}) });
      } catch (err) {
        if (err instanceof StatusError) throw err;
        throw new ConversionError((err as Error).message, { cause: err });
      }
      const out = [...objs];
      todo.forEach((i, j) => (out[i] = converted[j]!));
      return out;
    },
  };
}

/** The version named by a custom resource's apiVersion (`group/version`), or undefined. */
export function versionOf(obj: KubeObject): string | undefined {
  const av = typeof obj.apiVersion === 'string' ? obj.apiVersion : '';
  const slash = av.indexOf('/');
  return slash < 0 ? undefined : av.slice(slash + 1);
}

/** What ServedResource gets for one served version of a CRD. */
export interface CustomResourceCodec {
  fromStorage(objs: readonly KubeObject[], opts?: { list?: boolean }): Promise<KubeObject[]>;
  toStorage(obj: KubeObject): Promise<KubeObject>;
  convert(objs: KubeObject[], version: string): Promise<KubeObject[]>;
}

/**
 * The storage codec of served version `served`: `schemas` are every
 * version's structural schema by name, `storage` the storage version.
 */
export function customResourceCodec(converter: CustomResourceConverter, schemas: ReadonlyMap<string, Schema | undefined>, served: string, storage: string): CustomResourceCodec {
  const coerce = (objs: KubeObject[], version: string): KubeObject[] => {
    const schema = schemas.get(version);
    if (schema) for (const o of objs) prune(o, schema);
    return objs;
  };
  return {
    async fromStorage(objs, opts = {}) {
      const moved: boolean[] = [];
      const decoded = objs.map((o) => {
        const c = deepCopy(o);
        // Decoding from storage: pruned and defaulted with the schema of the version it was stored at.
        const from = versionOf(c) ?? '';
        moved.push(from !== served);
        const schema = schemas.get(from);
        if (schema) {
          prune(c, schema);
          applyDefaults(c, schema);
        }
        return c;
      });
      const out = await converter.convert(decoded, served, { list: !!opts.list });
      // Objects stored at `served` are pruned with its schema already.
      coerce(out.filter((_, i) => moved[i]), served);
      return out;
    },
    async toStorage(obj) {
      const [out] = await converter.convert([obj], storage);
      return coerce([out!], storage)[0]!;
    },
    async convert(objs, version) {
      return coerce(await converter.convert(objs.map((o) => deepCopy(o)), version), version);
    },
  };
}
