/**
 * The HTTP core under every client call (client-go rest.Request): auth
 * headers, client-side rate limiting, Retry-After retries, error decoding,
 * warnings and metrics. Bodies are JSON unless given as a string or Buffer.
 *
 * Retries follow client-go: up to 10 times when a 429 or 5xx response carries
 * an integer Retry-After (any method: our bodies are buffered and can be
 * resent), and after 1s when a GET's connection was reset. Every attempt
 * passes the rate limiter. A 401 while using an exec plugin credential runs
 * the plugin again and retries once.
 */
import type { Clock } from '../util/clock/clock.js';
import { realClock } from '../util/clock/clock.js';
import { newLogger, type Logger } from '../util/log/logger.js';
import { NetworkError, StatusError } from './errors.js';
import { newExecCredentialProvider, type ExecCredential, type ExecCredentialProvider } from './exec-credential.js';
import { restClientMetrics, type RestClientMetrics } from './metrics.js';
import { newTokenBucketRateLimiter, type RequestRateLimiter } from './rate-limit.js';
import { parseWarnings, responseError, type RequestTarget } from './response-errors.js';
import type { Status } from '../api/types.js';
import type { RestConfig } from './rest-config.js';
import { newFileTokenSource, type TokenSource } from './token-source.js';
import { newTransport, type Transport } from './transport.js';
import type { Http1Agent } from './http1.js';
import { omitManagedFields } from './watch-decoder.js';
import type { Registry } from 'prom-client';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';

export type QueryValue = string | number | boolean | undefined | null | string[];

export interface RequestOptions {
  query?: Record<string, QueryValue>;
  /** Objects are sent as JSON; strings and Buffers as they are. */
  body?: unknown;
  contentType?: string;
  /** Default `application/json`. */
  accept?: string;
  signal?: AbortSignal;
  /** Overrides RestConfig.timeoutMs for this call; 0 disables. Ignored by stream(). */
  timeoutMs?: number;
  /**
   * 'json' (default) parses the body; 'text' returns it as a string; 'none'
   * resolves with undefined without decoding a successful response (for
   * callers that do not read it: a simulated kubelet's status writes).
   */
  responseType?: 'json' | 'text' | 'none';
  /** For readable synthesised error messages. */
  target?: RequestTarget;
  /** A PartialObjectMetadata answer is decoded without `metadata.managedFields` (see omitManagedFields). */
  omitManagedFields?: boolean;
}

/** An open streaming response (watch). Iterate `body`; `abort()` closes it. */
export interface StreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: AsyncIterable<Uint8Array>;
  abort(): void;
}

export type WarningHandler = (message: string) => void;

export interface RestClientOptions {
  clock?: Clock;
  metricsRegistry?: Registry;
  logger?: Logger;
  /** Called for each `Warning: 299` text; default: log each distinct text once. */
  warningHandler?: WarningHandler;
  /** Environment for exec plugins (default process.env). */
  env?: NodeJS.ProcessEnv;
  /** Maximum Retry-After retries (client-go: 10). */
  maxRetries?: number;
}

export interface RestClient {
  readonly config: RestConfig;
  /** A request whose response body is read whole. Non-2xx responses throw StatusError; no response throws NetworkError. */
  request<T = unknown>(method: HttpMethod, path: string, opts?: RequestOptions): Promise<T>;
  /** A request whose 2xx body is handed back as a stream (not rate limited beyond the request itself). */
  stream(method: HttpMethod, path: string, opts?: RequestOptions): Promise<StreamResponse>;
  close(): Promise<void>;
}

export const DEFAULT_MAX_RETRIES = 10;
const RESET_RETRY_MS = 1000;
const LONG_THROTTLE_MS = 50;

/** Builds `host + path?query`; array values repeat the key. */
export function buildUrl(host: string, path: string, query?: Record<string, QueryValue>): string {
  const base = host.replace(/\/+$/, '');
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v === undefined || v === null || v === '') continue;
    if (Array.isArray(v)) for (const x of v) params.append(k, x);
    else params.append(k, String(v));
  }
  const qs = params.toString();
  return base + path + (qs ? `?${qs}` : '');
}

function headerString(h: string | string[] | undefined): string | undefined {
  return Array.isArray(h) ? h[0] : h;
}

function retryAfterSeconds(h: string | string[] | undefined): number | undefined {
  const s = headerString(h);
  if (s === undefined || !/^\d+$/.test(s.trim())) return undefined;
  return Number(s.trim());
}

function isConnectionReset(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === 'ECONNRESET' || code === 'UND_ERR_SOCKET' || code === 'EPIPE';
}

function errText(err: unknown): string {
  const e = err as { message?: string; code?: string } | null;
  const msg = e?.message || String(err);
  return e?.code && !msg.includes(e.code) ? `${msg} (${e.code})` : msg;
}

class RestClientImpl implements RestClient {
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly transport: Transport;
  private readonly limiter: RequestRateLimiter;
  private readonly metrics: RestClientMetrics;
  private readonly host: string;
  private readonly tokenFile?: TokenSource;
  private readonly exec?: ExecCredentialProvider;
  private readonly warningHandler: WarningHandler;
  private readonly maxRetries: number;
  private readonly basic?: string;

  constructor(
    readonly config: RestConfig,
    opts: RestClientOptions,
  ) {
    this.clock = opts.clock ?? realClock;
    this.log = opts.logger ?? newLogger('rest-client');
    // A client whose exec plugin may hand out client certificates keeps its own connections.
    this.transport = newTransport(config.tls, {
      share: !config.auth.exec && !config.ownConnections,
      ...(typeof config.ownConnections === 'number' ? { connections: config.ownConnections } : {}),
      ...(config.socketPath ? { socketPath: config.socketPath } : {}),
    });
    this.limiter = newTokenBucketRateLimiter({ qps: config.qps, burst: config.burst, clock: this.clock });
    this.metrics = restClientMetrics(opts.metricsRegistry);
    this.host = new URL(config.host).host;
    this.maxRetries = opts.maxRetries ?? DEFAULT_MAX_RETRIES;
    if (config.auth.bearerTokenFile) {
      this.tokenFile = newFileTokenSource({ file: config.auth.bearerTokenFile, clock: this.clock, log: this.log, initial: config.auth.bearerToken });
    }
    if (config.auth.exec) {
      this.exec = newExecCredentialProvider({ exec: config.auth.exec, config, clock: this.clock, env: opts.env });
    }
    if (config.auth.username !== undefined || config.auth.password !== undefined) {
      this.basic = Buffer.from(`${config.auth.username ?? ''}:${config.auth.password ?? ''}`).toString('base64');
    }
    const seen = new Set<string>();
    this.warningHandler =
      opts.warningHandler ??
      ((msg) => {
        if (seen.has(msg)) return;
        seen.add(msg);
        this.log.warn({ warning: msg }, 'warning from the API server');
      });
  }

  async request<T>(method: HttpMethod, path: string, opts: RequestOptions = {}): Promise<T> {
    const timeoutMs = opts.timeoutMs ?? this.config.timeoutMs;
    if (opts.signal?.aborted) throw opts.signal.reason;
    // A signal of our own only where a timeout needs one (most requests have neither a timeout nor a caller's signal).
    let ac: AbortController | undefined;
    let timer: { stop(): void } | undefined;
    let timedOut = false;
    const onAbort = () => ac!.abort(opts.signal?.reason);
    if (timeoutMs > 0) {
      ac = new AbortController();
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      timer = this.clock.setTimer(() => {
        timedOut = true;
        ac!.abort(new NetworkError(`${method} ${path}: request timed out after ${timeoutMs}ms`));
      }, timeoutMs);
    }
    const signal = ac?.signal ?? opts.signal;
    try {
      const res = await this.send(
        method,
        path,
        opts,
        signal,
        (agent, url, init) => agent.request(url, init),
        (r) => Promise.resolve(r.body.toString('utf8')),
      );
      if (opts.responseType === 'text') return res.body.toString('utf8') as T;
      if (res.body.length === 0 || opts.responseType === 'none') return undefined as T;
      let body: unknown;
      try {
        const text = res.body.toString('utf8');
        body = JSON.parse(opts.omitManagedFields ? omitManagedFields(text) : text);
      } catch (err) {
        throw new Error(`${method} ${path}: cannot decode response as JSON: ${(err as Error).message}`, { cause: err });
      }
      const status = body as Status | null;
      if (status && typeof status === 'object' && status.kind === 'Status' && status.status === 'Failure') {
        if (!status.code) status.code = res.statusCode;
        throw new StatusError(status);
      }
      return body as T;
    } catch (err) {
      if (err instanceof StatusError || err instanceof NetworkError) throw err;
      if (signal?.aborted) throw this.failure(method, path, err, signal, opts.signal, timedOut);
      throw err;
    } finally {
      timer?.stop();
      if (ac) opts.signal?.removeEventListener('abort', onAbort);
    }
  }

  async stream(method: HttpMethod, path: string, opts: RequestOptions = {}): Promise<StreamResponse> {
    const ac = new AbortController();
    if (opts.signal?.aborted) throw opts.signal.reason;
    const onAbort = () => ac.abort(opts.signal?.reason);
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const res = await this.send(
        method,
        path,
        opts,
        ac.signal,
        (agent, url, init) => agent.stream(url, init),
        async (r) => {
          const chunks: Buffer[] = [];
          for await (const c of r.body) chunks.push(c);
          return Buffer.concat(chunks).toString('utf8');
        },
      );
      return {
        statusCode: res.statusCode,
        headers: res.headers,
        body: res.body,
        abort: () => {
          opts.signal?.removeEventListener('abort', onAbort);
          ac.abort();
        },
      };
    } catch (err) {
      opts.signal?.removeEventListener('abort', onAbort);
      if (err instanceof StatusError || err instanceof NetworkError) throw err;
      throw this.failure(method, path, err, ac.signal, opts.signal, false);
    }
  }

  close(): Promise<void> {
    return this.transport.close();
  }

  private failure(method: string, path: string, err: unknown, signal: AbortSignal, userSignal: AbortSignal | undefined, timedOut: boolean): unknown {
    if (err instanceof StatusError || err instanceof NetworkError) return err;
    if (timedOut && signal.reason instanceof NetworkError) return signal.reason;
    if (userSignal?.aborted) return userSignal.reason;
    return new NetworkError(`${method} ${path}: ${errText(err)}`, { cause: err });
  }

  /**
   * Sends with retries through `perform` on the transport's agent for the credential's client certificate; resolves
   * with a 2xx response (its body unread when `perform` streams it). `errorText` reads an error response's body.
   */
  private async send<R extends { statusCode: number; headers: Record<string, string | string[] | undefined> }>(
    method: HttpMethod,
    path: string,
    opts: RequestOptions,
    signal: AbortSignal | undefined,
    perform: (agent: Http1Agent, url: string, init: { method: HttpMethod; headers: Record<string, string>; body?: string | Buffer; signal?: AbortSignal }) => Promise<R>,
    errorText: (res: R) => Promise<string>,
  ): Promise<R> {
    const url = buildUrl(this.config.host, path, opts.query);
    let body: string | Buffer | undefined;
    let contentType = opts.contentType;
    if (opts.body !== undefined) {
      if (typeof opts.body === 'string' || Buffer.isBuffer(opts.body)) body = opts.body;
      else body = JSON.stringify(opts.body);
      contentType ??= 'application/json';
    }
    let retries = 0;
    let reauthed = false;
    for (;;) {
      await this.throttle(method, signal);
      const headers: Record<string, string> = {
        accept: opts.accept ?? 'application/json',
        'user-agent': this.config.userAgent,
      };
      if (contentType) headers['content-type'] = contentType;
      let cred: ExecCredential | undefined;
      let agent: Http1Agent;
      try {
        cred = this.exec ? await this.exec.get() : undefined;
        const token = cred?.token ?? (this.tokenFile ? await this.tokenFile.token() : this.config.auth.bearerToken);
        if (token) headers.authorization = `Bearer ${token}`;
        else if (this.basic) headers.authorization = `Basic ${this.basic}`;
        agent = await this.transport.requests(cred?.clientCertificateData ? { cert: cred.clientCertificateData, key: cred.clientKeyData! } : undefined);
      } catch (err) {
        throw new Error(`${method} ${url}: getting credentials: ${(err as Error).message}`, { cause: err });
      }
      const start = this.clock.now();
      let res: R;
      try {
        res = await perform(agent, url, { method, headers, ...(body !== undefined ? { body } : {}), ...(signal ? { signal } : {}) });
      } catch (err) {
        this.metrics.requestResult('<error>', method, this.host);
        this.metrics.requestLatency(method, this.host, this.clock.since(start) / 1000);
        if (signal?.aborted) throw err;
        if (method === 'GET' && isConnectionReset(err) && retries < this.maxRetries) {
          retries++;
          this.log.v(4).info({ url, err: errText(err), attempt: retries }, 'connection reset, retrying');
          await this.clock.sleep(RESET_RETRY_MS, signal);
          continue;
        }
        throw new NetworkError(`${method} ${url}: ${errText(err)}`, { cause: err });
      }
      this.metrics.requestResult(String(res.statusCode), method, this.host);
      this.metrics.requestLatency(method, this.host, this.clock.since(start) / 1000);
      for (const w of parseWarnings(res.headers.warning)) {
        try {
          this.warningHandler(w);
        } catch (err) {
          this.log.error(err, { warning: w }, 'warning handler failed');
        }
      }
      const code = res.statusCode;
      if (code >= 200 && code < 300) return res;
      const text = await errorText(res).catch((err: unknown) => {
        this.log.v(2).info({ url, err: errText(err) }, 'cannot read error response body');
        return '';
      });
      if (code === 401 && cred && this.exec && !reauthed) {
        reauthed = true;
        this.exec.invalidate(cred);
        this.log.v(2).info({ url }, 'unauthorized with exec plugin credential, running the plugin again');
        continue;
      }
      const wait = retryAfterSeconds(res.headers['retry-after']);
      if ((code === 429 || code >= 500) && wait !== undefined && retries < this.maxRetries) {
        retries++;
        this.log.v(4).info({ url, code, retryAfterSeconds: wait, attempt: retries }, 'server asked to retry');
        await this.clock.sleep(wait * 1000, signal);
        continue;
      }
      throw responseError(code, method, text, headerString(res.headers['content-type']), wait, opts.target);
    }
  }

  private async throttle(method: string, signal: AbortSignal | undefined): Promise<void> {
    const start = this.clock.now();
    await this.limiter.wait(signal);
    const waited = this.clock.since(start);
    this.metrics.rateLimiterLatency(method, this.host, waited / 1000);
    if (waited > LONG_THROTTLE_MS) {
      this.log.v(3).info({ waitedMs: waited, method }, 'waited due to client-side throttling');
    }
  }
}

export function newRestClient(config: RestConfig, opts: RestClientOptions = {}): RestClient {
  return new RestClientImpl(config, opts);
}
