/**
 * Serving the embedded API server: HTTPS on node:https (HTTP/1.1, keep-alive),
 * authentication, the on-disk PKI and admin kubeconfig, storage with its watch
 * cache and compactor, and an orderly shutdown.
 *
 * `startApiServer` resolves once the server listens and the kubeconfig is
 * written; `close()` stops accepting connections, ends watches, lets requests
 * in flight finish (bounded), closes the handler and flushes storage.
 *
 * Protocol edges as kube-apiserver's Go server: headers up to 1 MiB, a
 * larger one answered `431 Request Header Fields Too Large` (Go's text reply,
 * then a graceful close, util/net/http-edges.ts); client certificates
 * requested but verified by the authenticator (an untrusted one is a 401,
 * logged at -v=2); `--request-timeout` for requests that are not
 * long-running (request-timeout.ts).
 */
import { securePrivateDataDir, usePrivateUmask } from './data-dir.js';
import { createServer, type Server } from 'node:https';
import { createServer as createHttpServer, ServerResponse, type IncomingMessage, type Server as HttpServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { isIP } from 'node:net';
import { join, resolve } from 'node:path';
import { newStatus } from '../../client/errors.js';
import { realClock, type Clock } from '../../util/clock/clock.js';
import { newLogger, type Logger } from '../../util/log/logger.js';
import { answerClientErrors, MAX_HEADER_BYTES } from '../../util/net/http-edges.js';
import type { UserInfo } from '../request-info.js';
import { createApiHandler } from '../handler.js';
import type { ResourceMetricsSource } from '../metrics-api/types.js';
import { writeStatusToSocket, type KubeletClientConfig } from '../handlers/node-proxy.js';
import { newCachedStorage, newMemoryStorage, openSqliteStorage, startCompactor, type Compactor, type Storage } from '../storage/index.js';
import { isPublicInfoPath, newRequestAuthenticator, newStaticTokenAuthenticator, withAuthenticated, type TokenAuthenticator } from './authn.js';
import { setupServiceAccountTokens, storageReader, type ServiceAccountTokenOptions } from './sa-setup.js';
import type { ServerAuth } from '../context.js';
import { writeStatus } from '../output.js';
import { writeKubeconfig } from './kubeconfig.js';
import { ensurePki } from './pki.js';
import { firstServiceIP } from './service-ip.js';
import { armRequestTimeout } from './request-timeout.js';
import { bootTlsFront, FrontListenError, startTlsFront, type TlsFront } from './tls-front.js';
import { listenOnSocket } from './unix-socket.js';

/** What the serving layer needs from the request handler. */
export interface ApiHandler {
  /** Serves one authenticated request; errors it throws become a 500 Status. */
  handle(req: IncomingMessage, res: ServerResponse, user: UserInfo): void | Promise<void>;
  /** Serves one authenticated upgrade request on its socket (exec, attach, portforward, proxies); absent: served as a plain request. */
  handleUpgrade?(req: IncomingMessage, socket: Duplex, head: Buffer, user: UserInfo): void;
  /** Ends open watches and background work; called before storage closes. */
  close(): Promise<void>;
}

export interface ApiHandlerDeps {
  storage: Storage;
  clock: Clock;
  logger: Logger;
  serviceClusterIPRange: string;
  /** Where clients reach this server: the `kubernetes` Service's endpoint. */
  endpoint: { address: string; port: number };
  /** --authorization-mode (default AlwaysAllow). */
  authorizationMode?: 'AlwaysAllow' | 'RBAC';
  /** TokenReview and TokenRequest support from the serving layer's authenticators and service-account keys. */
  auth?: Omit<ServerAuth, 'authorizer'>;
  /** The CA bundle client certificates are verified against (published in kube-system/extension-apiserver-authentication). */
  clientCA?: string;
  /** Serves metrics.k8s.io with usage from this source (see ApiServerOptions.resourceMetrics). */
  resourceMetrics?: ResourceMetricsSource;
  /** How the node streaming endpoints reach kubelets (see ApiServerOptions.kubelet). */
  kubelet?: KubeletClientConfig;
}

export type ApiHandlerFactory = (deps: ApiHandlerDeps) => ApiHandler | Promise<ApiHandler>;

export interface ApiServerOptions {
  /** Created when missing; holds `pki/`, `db/` and `kubeconfig`. */
  dataDir: string;
  /** Default 127.0.0.1. */
  bindAddress?: string;
  /** Default 6443; 0 picks a free port. */
  securePort?: number;
  /** Default 10.0.0.0/24 (kube-apiserver's default). */
  serviceClusterIPRange?: string;
  /** Default sqlite (in `<dataDir>/db`). */
  storage?: 'sqlite' | 'memory';
  logger?: Logger;
  clock?: Clock;
  /** Extra bearer-token authenticators, tried after the admin token (service-account JWTs, ...). */
  tokenAuthenticators?: TokenAuthenticator[];
  /** Service-account token keys, issuers and API audiences (none: service-account tokens are neither accepted nor issued). */
  serviceAccounts?: ServiceAccountTokenOptions;
  /** --authorization-mode for the default handler: AlwaysAllow (default) or RBAC. */
  authorizationMode?: 'AlwaysAllow' | 'RBAC';
  /** Builds the request handler; default: the built-in Kubernetes API (createApiHandler). */
  handler?: ApiHandlerFactory;
  /** Compaction interval in ms; default 5 minutes. */
  compactionIntervalMs?: number;
  /** How long close() waits for requests in flight before cutting connections. Default 5 s. */
  shutdownTimeoutMs?: number;
  /** --request-timeout: requests that are not long-running get 504 after this long. Default 60 s; 0 disables it. */
  requestTimeoutMs?: number;
  /** The default handler serves the resource metrics API (metrics.k8s.io) from this source. */
  resourceMetrics?: ResourceMetricsSource;
  /** --kubelet-token and --kubelet-preferred-address-types: how pods/log, exec, attach, portforward and the proxies reach kubelets. */
  kubelet?: KubeletClientConfig;
  /**
   * Also serve the API as plain HTTP on this Unix domain socket, readable and
   * writable by the owner only (the private umask), for components of the
   * same machine (kcm up's controller side): same authentication (bearer
   * tokens; no client certificates without TLS) and handler, without TLS
   * handshakes and encryption. A stale socket file is replaced.
   */
  socketPath?: string;
  /**
   * Serve TLS on a worker thread of its own (tls-front.ts), default true;
   * false (or a front that cannot start) serves it on the main thread.
   */
  tlsThread?: boolean;
}

export interface RunningApiServer {
  /** `https://127.0.0.1:<port>` (the host clients should use). */
  url: string;
  /** The Unix domain socket also served (ApiServerOptions.socketPath), once listening. */
  socketPath?: string;
  port: number;
  kubeconfigPath: string;
  caPem: string;
  adminToken: string;
  /** The storage the handler uses (the watch cache). */
  storage: Storage;
  /** Adds a bearer-token authenticator (e.g. service-account tokens once their signer exists). */
  addTokenAuthenticator(a: TokenAuthenticator): void;
  /** Graceful stop; idempotent. */
  close(): Promise<void>;
}

export const adminUser: UserInfo = { username: 'kcm-admin', groups: ['system:masters', 'system:authenticated'] };

function unauthorized(res: ServerResponse): void {
  writeStatus(res, newStatus(401, 'Unauthorized', 'Unauthorized'));
}

function internalError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy(err instanceof Error ? err : undefined);
    return;
  }
  writeStatus(res, newStatus(500, 'InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`));
}

/**
 * The TLS front's socket, in the private data directory; undefined (TLS on the
 * main thread) where the path is too long for a Unix domain socket.
 */
function frontSocketPath(dataDir: string): string | undefined {
  const path = join(dataDir, 'tls-front.sock');
  return Buffer.byteLength(path) <= 100 ? path : undefined;
}

/** The host a client uses to reach `bindAddress` (wildcards mean loopback). */
function clientHost(bindAddress: string): string {
  if (bindAddress === '0.0.0.0' || bindAddress === '') return '127.0.0.1';
  if (bindAddress === '::') return '[::1]';
  return isIP(bindAddress) === 6 ? `[${bindAddress}]` : bindAddress;
}

async function openStorage(kind: 'sqlite' | 'memory', dataDir: string, clock: Clock): Promise<Storage> {
  // No watch cache for events, as kube-apiserver's DefaultWatchCacheSizes (their values stay in the database,
  // and the backend does not keep their last objects either).
  const uncachedPrefixes = ['/registry/events/'];
  const backend = kind === 'memory' ? newMemoryStorage() : openSqliteStorage(join(dataDir, 'db'), { unkeptPrefixes: uncachedPrefixes });
  try {
    return await newCachedStorage(backend, { clock, uncachedPrefixes });
  } catch (err) {
    await backend.close().catch(() => undefined);
    throw new Error('cannot start the watch cache', { cause: err });
  }
}

/** The built-in Kubernetes API, with the `kubernetes` Service pointing at this server. */
async function defaultHandlerFactory(deps: ApiHandlerDeps): Promise<ApiHandler> {
  const h = await createApiHandler({
    storage: deps.storage,
    clock: deps.clock,
    logger: deps.logger,
    serviceClusterIPRange: deps.serviceClusterIPRange,
    authorizationMode: deps.authorizationMode,
    ...(deps.auth ? { auth: deps.auth } : {}),
    ...(deps.clientCA ? { clientCA: deps.clientCA } : {}),
    ...(deps.resourceMetrics ? { resourceMetrics: deps.resourceMetrics } : {}),
    ...(deps.kubelet ? { kubelet: deps.kubelet } : {}),
  });
  try {
    await h.setServingEndpoint(deps.endpoint.address, deps.endpoint.port);
  } catch (err) {
    await h.close();
    throw new Error('cannot publish the kubernetes Service endpoint', { cause: err });
  }
  return h;
}

export async function startApiServer(opts: ApiServerOptions): Promise<RunningApiServer> {
  const log = opts.logger ?? newLogger('apiserver');
  const clock = opts.clock ?? realClock;
  const dataDir = resolve(opts.dataDir);
  const bindAddress = opts.bindAddress ?? '127.0.0.1';
  const serviceClusterIPRange = opts.serviceClusterIPRange ?? '10.0.0.0/24';
  // Everything kcm writes is private: the data dir, the database (Secrets), keys, kubeconfig.
  usePrivateUmask();
  securePrivateDataDir(dataDir, log);

  const frontSocket = opts.tlsThread === false ? undefined : frontSocketPath(dataDir);
  // The TLS thread boots (tens of milliseconds) while the PKI and storage open.
  const frontBoot = frontSocket ? bootTlsFront(log) : undefined;
  const bindIPs = bindAddress && bindAddress !== '0.0.0.0' && bindAddress !== '::' ? [bindAddress] : [];
  let pki: ReturnType<typeof ensurePki>;
  let storage: Storage;
  try {
    const serviceIP = firstServiceIP(serviceClusterIPRange);
    pki = ensurePki(join(dataDir, 'pki'), { ipAddresses: [serviceIP, ...bindIPs], logger: log });
    if (pki.created.length > 0) log.info({ created: pki.created.join(','), dir: pki.paths.dir }, 'wrote PKI');
    storage = await openStorage(opts.storage ?? 'sqlite', dataDir, clock);
  } catch (err) {
    await frontBoot?.worker.terminate();
    throw err;
  }
  let sa: ReturnType<typeof setupServiceAccountTokens>;
  try {
    sa = setupServiceAccountTokens(opts.serviceAccounts ?? {}, { reader: storageReader(storage), clock, logger: log });
  } catch (err) {
    await frontBoot?.worker.terminate();
    await storage.close().catch((e: unknown) => log.error(e, 'closing storage after a failed start'));
    throw err;
  }
  const authn = newRequestAuthenticator({
    clientCA: pki.ca.certPem,
    tokenAuthenticators: [
      newStaticTokenAuthenticator(new Map([[pki.adminToken, adminUser]])),
      ...(sa.tokenAuthenticator ? [sa.tokenAuthenticator] : []),
      ...(opts.tokenAuthenticators ?? []),
    ],
  });
  const auth: Omit<ServerAuth, 'authorizer'> = {
    // As a request bearing the token: a service-account token is judged for the audiences asked; others are audience-agnostic.
    async reviewToken(token, audiences) {
      const r = await sa.authenticator?.authenticate(token, audiences);
      if (r?.kind === 'user') return { user: withAuthenticated(r.user), audiences: r.audiences };
      if (r?.kind === 'invalid') return { error: r.error };
      const user = await authn.authenticateToken(token);
      return user ? { user, audiences: audiences.length > 0 ? [...audiences] : sa.apiAudiences } : { error: 'invalid bearer token' };
    },
    ...(sa.signer ? { tokenSigner: sa.signer } : {}),
  };
  let compactor: Compactor | undefined;
  let handler: ApiHandler | undefined;
  let server: Server | HttpServer | undefined;
  let front: TlsFront | undefined;
  let socketServer: HttpServer | undefined;
  const inFlight = new Set<ServerResponse>();
  let closing: Promise<void> | undefined;

  const requestTimeoutMs = opts.requestTimeoutMs ?? 60_000;
  // Under RBAC anonymous requests are authorized like any other (system:public-info-viewer lets them read the health and
  // version paths; the rest is 403), as kube-apiserver's --anonymous-auth. Under AlwaysAllow kube-apiserver turns anonymous
  // authentication off (401 everywhere); kcm still lets anonymous callers read the health and version paths.
  const anonymousAuthorized = opts.authorizationMode === 'RBAC';
  const upgraded = new Set<Duplex>();
  const onAuthenticated = async (req: IncomingMessage, res: ServerResponse, user: UserInfo): Promise<void> => {
    await handler!.handle(req, res, user);
  };
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const started = clock.now();
    inFlight.add(res);
    res.on('close', () => {
      inFlight.delete(res);
      if (log.enabled(3)) log.v(3).info({ verb: req.method, uri: req.url, code: res.statusCode, latencyMs: clock.since(started) }, 'HTTP');
    });
    armRequestTimeout(req, res, requestTimeoutMs, clock, log);
    authn.authenticate(req).then(
      async (auth) => {
        if (closing) {
          res.setHeader('Connection', 'close');
        }
        const pathname = (req.url ?? '/').split('?', 1)[0]!;
        if (auth.kind === 'rejected' || (auth.kind === 'anonymous' && !anonymousAuthorized && !isPublicInfoPath(req.method, pathname))) {
          if (auth.kind === 'rejected') log.v(2).info({ uri: req.url, remote: req.socket.remoteAddress, error: auth.why }, 'Unable to authenticate the request due to an error');
          unauthorized(res);
          return;
        }
        await onAuthenticated(req, res, auth.user);
      },
    ).catch((err: unknown) => {
      log.error(err, { verb: req.method, uri: req.url }, 'request failed');
      internalError(res, err);
    });
  };

  try {
    // Watches are long requests: no overall deadline here; --request-timeout bounds the others (request-timeout.ts).
    const httpOptions = { requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 90_000, maxHeaderSize: MAX_HEADER_BYTES };
    const tlsOptions = {
      key: pki.serving.keyPem,
      cert: pki.serving.certPem,
      ca: pki.ca.certPem,
      // Client certificates are verified by the authenticator (401 with a log line), never refused at the handshake.
      requestCert: true,
      rejectUnauthorized: false,
    };
    let port: number;
    if (frontBoot && frontSocket) {
      // TLS on a worker thread (tls-front.ts); the main thread serves plain HTTP on a private socket.
      const plain = createHttpServer(httpOptions, onRequest);
      try {
        front = await startTlsFront({ ...tlsOptions, host: bindAddress, port: opts.securePort ?? 6443, server: plain, socketPath: frontSocket, boot: frontBoot, logger: log });
        server = plain;
      } catch (err) {
        if (err instanceof FrontListenError) throw err;
        log.warn({ error: err instanceof Error ? err.message : String(err) }, 'cannot serve TLS on a thread of its own; serving it on the main thread');
      }
    }
    server ??= createServer({ ...tlsOptions, ...httpOptions }, onRequest);
    answerClientErrors(server, log);
    // Upgrade requests (exec, attach, port-forward, proxied websockets): authenticated as any request, then the handler owns the socket.
    const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
      upgraded.add(socket);
      socket.once('close', () => upgraded.delete(socket));
      socket.on('error', () => socket.destroy());
      authn.authenticate(req).then((auth) => {
        const pathname = (req.url ?? '/').split('?', 1)[0]!;
        if (closing || !handler) return writeStatusToSocket(socket, newStatus(503, 'ServiceUnavailable', 'the server is shutting down'));
        if (auth.kind === 'rejected' || (auth.kind === 'anonymous' && !anonymousAuthorized && !isPublicInfoPath(req.method, pathname))) {
          return writeStatusToSocket(socket, newStatus(401, 'Unauthorized', 'Unauthorized'));
        }
        if (handler.handleUpgrade) return handler.handleUpgrade(req, socket, head, auth.user);
        const res = new ServerResponse(req);
        res.assignSocket(socket as Socket);
        res.shouldKeepAlive = false;
        res.once('finish', () => socket.end());
        return onAuthenticated(req, res, auth.user);
      }).catch((err: unknown) => {
        log.error(err, { verb: req.method, uri: req.url }, 'upgrade request failed');
        writeStatusToSocket(socket, newStatus(500, 'InternalError', `Internal error occurred: ${err instanceof Error ? err.message : String(err)}`));
      });
    };
    server.on('upgrade', onUpgrade);
    const srv = server;
    if (front) {
      port = front.port;
    } else {
      const https = server as Server;
      https.on('tlsClientError', (err) => log.v(4).info({ error: err.message }, 'TLS handshake failed'));
      await new Promise<void>((resolveListen, rejectListen) => {
        https.once('error', rejectListen);
        https.listen(opts.securePort ?? 6443, bindAddress, () => {
          https.off('error', rejectListen);
          resolveListen();
        });
      });
      port = (https.address() as AddressInfo).port;
    }
    srv.on('error', (err) => log.error(err, 'server error'));
    if (opts.socketPath) {
      const sock = createHttpServer({ requestTimeout: 0, headersTimeout: 60_000, keepAliveTimeout: 90_000, maxHeaderSize: MAX_HEADER_BYTES }, onRequest);
      answerClientErrors(sock, log);
      sock.on('upgrade', onUpgrade);
      try {
        await listenOnSocket(sock, opts.socketPath);
        sock.on('error', (err) => log.error(err, 'socket server error'));
        socketServer = sock;
      } catch (err) {
        // Not fatal: the socket's users can use HTTPS (RunningApiServer.socketPath stays unset).
        log.warn({ path: opts.socketPath, error: err instanceof Error ? err.message : String(err) }, 'cannot serve on the Unix domain socket; HTTPS only');
      }
    }
    const host = clientHost(bindAddress);
    const url = `https://${host}:${port}`;
    const endpointAddress = bindIPs[0] ?? '127.0.0.1';
    handler = await (opts.handler ?? defaultHandlerFactory)({
      storage,
      clock,
      logger: log,
      serviceClusterIPRange,
      endpoint: { address: endpointAddress, port },
      auth,
      clientCA: pki.ca.certPem,
      ...(opts.authorizationMode ? { authorizationMode: opts.authorizationMode } : {}),
      ...(opts.resourceMetrics ? { resourceMetrics: opts.resourceMetrics } : {}),
      ...(opts.kubelet ? { kubelet: opts.kubelet } : {}),
    });
    compactor = startCompactor(storage, { intervalMs: opts.compactionIntervalMs ?? 5 * 60_000 }, clock);

    const kubeconfigPath = join(dataDir, 'kubeconfig');
    writeKubeconfig(kubeconfigPath, { server: url, caPem: pki.ca.certPem, token: pki.adminToken });
    log.info({ url, kubeconfig: kubeconfigPath }, 'serving');

    const close = (): Promise<void> => {
      closing ??= (async () => {
        const sock = socketServer;
        front?.stopAccepting();
        const stopped = Promise.all([new Promise<void>((r) => srv.close(() => r())), sock ? new Promise<void>((r) => sock.close(() => r())) : undefined]);
        compactor?.stop();
        // Ending watches first lets their requests complete; then idle keep-alive sockets go.
        await handler!.close().catch((err: unknown) => log.error(err, 'closing the handler failed'));
        srv.closeIdleConnections();
        sock?.closeIdleConnections();
        const deadline = clock.now() + (opts.shutdownTimeoutMs ?? 5000);
        while (inFlight.size > 0 && clock.now() < deadline) await clock.sleep(20);
        if (inFlight.size > 0) log.warn({ requests: inFlight.size }, 'cutting requests still in flight at shutdown');
        srv.closeAllConnections();
        sock?.closeAllConnections();
        for (const u of upgraded) u.destroy();
        await stopped;
        // What the main thread wrote last reaches the clients before the TLS thread stops.
        await front?.close(1000);
        await storage.close().catch((err: unknown) => log.error(err, 'closing storage failed'));
        log.info('stopped');
      })();
      return closing;
    };

    return {
      url,
      ...(socketServer && opts.socketPath ? { socketPath: opts.socketPath } : {}),
      port,
      kubeconfigPath,
      caPem: pki.ca.certPem,
      adminToken: pki.adminToken,
      storage,
      addTokenAuthenticator: (a) => authn.addTokenAuthenticator(a),
      close,
    };
  } catch (err) {
    compactor?.stop();
    for (const srv of [server, socketServer]) {
      if (!srv?.listening) continue;
      srv.closeAllConnections();
      srv.close();
    }
    await front?.close(0);
    await handler?.close().catch(() => undefined);
    await storage.close().catch((e: unknown) => log.error(e, 'closing storage after a failed start'));
    throw err;
  }
}
