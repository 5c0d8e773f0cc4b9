/**
 * Turns on CustomResourceDefinitions for one embedded API server: starts the
 * in-server CRD loop and publishes the custom resources' schemas through the
 * server's OpenAPI handler. Call once, after the server context exists.
 */
import type { ServerContext } from '../context.js';
import { invalidateOpenApi, setOpenApiExtraSchemas } from '../router.js';
import { startCrdController, type CrdController, type CrdControllerOptions } from './crd-controller.js';

export async function installCustomResources(server: ServerContext, opts: Pick<CrdControllerOptions, 'conversionWebhookTimeoutMs'> = {}): Promise<CrdController> {
  let ready = false;
  const ctl = await startCrdController(server, {
    ...opts,
    onChange: () => {
      if (ready) invalidateOpenApi(server);
    },
  });
  setOpenApiExtraSchemas(server, () => ctl.swaggerFragment());
  ready = true;
  return ctl;
}
