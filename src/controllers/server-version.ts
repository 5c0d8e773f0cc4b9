/**
 * What a controller reads of the API server's version when it is built, to
 * act as the kube-controller-manager of that release did.
 */
import type { VersionInfo } from '../client/discovery.js';
import type { ControllerContext } from './types.js';

/**
 * `test` of the API server's version (GET /version, cached by the
 * context's discovery). False without discovery or when the read fails,
 * which is logged as `<controller>`'s, with `otherwise` saying what it does
 * instead.
 */
export async function serverVersionIs(ctx: ControllerContext, test: (version: VersionInfo) => boolean, controller: string, otherwise: string): Promise<boolean> {
  if (!ctx.discovery) return false;
  try {
    return test(await ctx.discovery.serverVersion());
  } catch (err) {
    ctx.logger(controller).error(err, `reading the server version failed; ${otherwise}`);
    return false;
  }
}
