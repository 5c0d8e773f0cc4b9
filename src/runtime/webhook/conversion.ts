/**
 * CRD conversion webhooks: convert objects of a custom resource between its
 * versions (`spec.conversion.strategy: Webhook` in the CRD).
 *
 *   server.register('/convert', conversionWebhook((obj, to) => to === 'sites.example.com/v2' ? v1ToV2(obj) : v2ToV1(obj)));
 *
 * The converter returns the object in `desiredAPIVersion`; the handler sets
 * apiVersion, keeps metadata as the API server requires (it refuses
 * conversions that change anything in metadata but labels and annotations),
 * and answers a failure Status when any object fails to convert.
 */
import type { Logger } from '../../util/log/logger.js';
import type { ConversionRequest, ConversionResponse } from './review-types.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export type Converter = (obj: Record<string, unknown>, desiredAPIVersion: string) => Record<string, unknown> | Promise<Record<string, unknown>>;

export type ConversionHandler = (request: ConversionRequest, log: Logger) => Promise<ConversionResponse>;

export function conversionWebhook(convert: Converter): ConversionHandler {
  return async (req) => {
    try {
      const convertedObjects: Record<string, unknown>[] = [];
      for (const obj of req.objects ?? []) {
        if (obj.apiVersion === req.desiredAPIVersion) {
          convertedObjects.push(obj);
          continue;
        }
        const out = await convert(deepCopy(obj), req.desiredAPIVersion);
        convertedObjects.push({ ...out, apiVersion: req.desiredAPIVersion, kind: out.kind ?? obj.kind, metadata: out.metadata ?? obj.metadata });
      }
      return { uid: req.uid, convertedObjects, result: { metadata: {}, status: 'Success' } };
    } catch (err) {
      return { uid: req.uid, convertedObjects: [], result: { metadata: {}, status: 'Failure', message: err instanceof Error ? err.message : String(err) } };
    }
  };
}
