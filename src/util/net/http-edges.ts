/**
 * Protocol edges of kcm's HTTPS servers, answered as Go's net/http answers
 * them for kube-apiserver, kube-controller-manager and kube-scheduler
 * (k8s.io/apiserver's SecureServingInfo.Serve: `MaxHeaderBytes: 1 << 20`):
 *
 * - request line and headers may take 1 MiB plus Go's 4 KiB of slop;
 * - larger ones get `431 Request Header Fields Too Large` as a text body
 *   (Go's net/http reply, byte for byte) and the connection is closed;
 * - other malformed requests get `400 Bad Request` the same way.
 *
 * The connection is closed gracefully: the reply is flushed, the write side
 * shut, and what the client still sends is read and dropped for a moment
 * (Go's rstAvoidanceDelay) before the socket goes, so a client still
 * uploading a huge header reads the reply instead of a connection reset.
 */
import type { Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import type { Logger } from '../log/logger.js';

/** Node's `maxHeaderSize` equivalent of Go's MaxHeaderBytes (1 MiB) plus its bufio slop (4096). */
export const MAX_HEADER_BYTES = (1 << 20) + 4096;

/** How long a closing connection keeps draining the client's data (Go: rstAvoidanceDelay, 500 ms). */
const drainMs = 500;

/** Go's reply to a request whose header is too large (net/http server.go). */
export const headerTooLargeResponse = goErrorResponse('431 Request Header Fields Too Large');
/** Go's reply to an unparsable request. */
export const badRequestResponse = goErrorResponse('400 Bad Request');

function goErrorResponse(publicErr: string): string {
  return `HTTP/1.1 ${publicErr}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n${publicErr}`;
}

/** Writes `response` and closes `socket` without resetting it while the client is still sending. */
export function closeGracefully(socket: Duplex, response?: string): void {
  const timer = setTimeout(() => socket.destroy(), drainMs);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  socket.on('error', () => undefined);
  if (response !== undefined) socket.end(response);
  else socket.end();
  // Keep reading (and dropping) so the kernel does not answer unread data with RST.
  socket.resume();
}

/**
 * Installs the `clientError` handling described above on an HTTP(S) server.
 * Each broken connection is answered once and logged at verbosity 4.
 */
export function answerClientErrors(server: HttpServer | HttpsServer, log: Logger): void {
  const answered = new WeakSet<Duplex>();
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (answered.has(socket)) return;
    answered.add(socket);
    const code = err.code ?? '';
    // As Node's own handler: never write into a response already under way on this connection (pipelining).
    const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    if (code === 'ECONNRESET' || code === 'EPIPE' || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    log.v(4).info({ error: err.message, code }, 'bad request on the connection');
    switch (code) {
      case 'HPE_HEADER_OVERFLOW':
        closeGracefully(socket, headerTooLargeResponse);
        return;
      case 'ERR_HTTP_REQUEST_TIMEOUT':
        closeGracefully(socket, 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n');
        return;
      default:
        closeGracefully(socket, badRequestResponse);
    }
  });
}
