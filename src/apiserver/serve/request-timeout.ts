/**
 * kube-apiserver's `--request-timeout` (k8s.io/apiserver
 * filters.WithTimeoutForNonLongRunningRequests): a request that is not
 * long-running and has not been answered after the timeout gets
 *
 *   504 Gateway Timeout, Content-Type: text/plain; charset=utf-8
 *   {"metadata":{},"status":"Failure","message":"Timeout: request did not complete within 1m0s","reason":"Timeout","details":{},"code":504}
 *
 * byte for byte what kube-apiserver 1.20 writes (the timeout writer encodes
 * the bare metav1.Status, without kind and apiVersion, and Go sniffs the
 * content type). Whatever the handler writes afterwards is dropped, as the
 * timeout writer drops it (http.ErrHandlerTimeout). A response already
 * under way is cut (Go: panic(http.ErrAbortHandler)).
 *
 * Long-running requests are exempt, as kube-apiserver's
 * BasicLongRunningRequestCheck decides: watches, the subresources attach,
 * exec, proxy, log and portforward, and /debug/pprof/ (kcm serves no
 * legacy /api/v1/proxy paths, upstream's proxy verb).
 *
 * Deliberate difference: a request whose body is still arriving when the
 * time is up gets the 504 and its connection is closed. Go's server writes
 * the 504 only once it has drained the request body, so kube-apiserver never
 * answers a client that trickles its body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Clock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import { formatGoDuration } from '../protobuf/to-json.js';
import { parseRequestInfo, truthyParam } from '../request-info.js';

const mayBeLongRunning = /watch|attach|exec|proxy|log|portforward|pprof/i;
const longRunningSubresources = new Set(['attach', 'exec', 'proxy', 'log', 'portforward']);

/** BasicLongRunningRequestCheck(watch, proxy; attach, exec, proxy, log, portforward) for the paths kcm serves. */
export function isLongRunning(method: string, url: string): boolean {
  // Every long-running request names one of these in its path or query (a watch: /watch/ or watch=):
  // the rest, nearly every request, need no parsing here.
  if (!mayBeLongRunning.test(url)) return false;
  const u = new URL(url, 'http://apiserver');
  const info = parseRequestInfo(method.toUpperCase(), u.pathname, truthyParam(u.searchParams.get('watch')));
  if (info.kind === 'nonResource') return info.path.startsWith('/debug/pprof/');
  // kcm keeps the path after a proxy subresource in it (`proxy/x`); upstream's subresource is the first segment.
  return info.verb === 'watch' || longRunningSubresources.has(info.subresource.split('/')[0]!);
}

/** The body kube-apiserver writes on a request timeout. */
export function timeoutBody(timeoutMs: number): string {
  const message = `Timeout: request did not complete within ${formatGoDuration(timeoutMs * 1e6)}`;
  return `${JSON.stringify({ metadata: {}, status: 'Failure', message, reason: 'Timeout', details: {}, code: 504 })}\n`;
}

/**
 * Arms the timeout for one request; it is disarmed when the response
 * closes. Call before handing the request to the handler.
 */
export function armRequestTimeout(req: IncomingMessage, res: ServerResponse, timeoutMs: number, clock: Clock, log: Logger): void {
  if (timeoutMs <= 0 || isLongRunning(req.method ?? 'GET', req.url ?? '/')) return;
  const timer = clock.setTimer(() => {
    if (res.writableEnded || res.destroyed) return;
    log.v(2).info({ verb: req.method, uri: req.url, timeoutMs }, 'request timed out');
    if (res.headersSent) {
      res.destroy();
      return;
    }
    const body = timeoutBody(timeoutMs);
    const headers: Record<string, string | number> = { 'Cache-Control': 'no-cache, private', 'Content-Length': Buffer.byteLength(body), 'Content-Type': 'text/plain; charset=utf-8' };
    // The rest of the body would keep the connection busy: close it once answered.
    if (!req.complete) headers.Connection = 'close';
    for (const name of res.getHeaderNames()) res.removeHeader(name);
    res.writeHead(504, headers);
    res.end(body);
    // From now on the handler writes into the void (Go's timeout writer returns http.ErrHandlerTimeout).
    Object.assign(res, {
      writeHead: () => res,
      setHeader: () => res,
      appendHeader: () => res,
      removeHeader: () => undefined,
      flushHeaders: () => undefined,
      write: () => true,
      end: () => res,
    });
  }, timeoutMs);
  res.once('close', () => timer.stop());
}
