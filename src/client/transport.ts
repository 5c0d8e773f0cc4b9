/**
 * Kept-alive connections per RestConfig, carrying its TLS settings (an
 * Http1Agent). A new agent is made only when the client certificate changes
 * (exec plugins that return certificates); the old one finishes its requests
 * and streams and closes.
 */
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { newHttp1Agent, type Http1Agent } from './http1.js';
import type { TlsConfig } from './rest-config.js';

export interface ClientCertificate {
  cert: string;
  key: string;
}

export interface Transport {
  /**
   * The agent; pass the exec plugin's certificate when there is one.
   * Requests read whole share at most REQUEST_CONNECTIONS kept-alive
   * connections, so bursts queue on open connections instead of each opening
   * (and TLS-handshaking) a new one; streams (watches) hold one each.
   */
  requests(override?: ClientCertificate): Promise<Http1Agent>;
  /** Closes every connection; requests after this fail. */
  close(): Promise<void>;
}

interface TlsMaterial {
  ca?: string;
  cert?: string;
  key?: string;
}

async function readMaybe(data: string | undefined, file: string | undefined, what: string): Promise<string | undefined> {
  if (data) return data;
  if (!file) return undefined;
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${what} "${file}": ${(err as Error).message}`, { cause: err });
  }
}

/** Connections for plain requests per agent (client-go multiplexes everything over one HTTP/2 connection). */
export const REQUEST_CONNECTIONS = 32;

/** How long an idle connection is kept. */
const KEEP_ALIVE_MS = 30_000;

/**
 * Transports shared by clients with the same TLS settings, as client-go's
 * tlsCache shares one connection among the clients of a process (a
 * controller manager makes one client per controller): connections are
 * reused across them instead of each client opening its own. Counted; the
 * last close() closes the connections.
 */
const shared = new Map<string, { transport: Transport; refs: number }>();

/**
 * A transport for `tls`. `share: false` (a client whose exec plugin returns
 * client certificates, which replace the agents when they rotate) gets its
 * own, so that clients with other certificates do not swap its agents.
 */
export function newTransport(tls: TlsConfig, opts: { share?: boolean; socketPath?: string; connections?: number } = {}): Transport {
  if (opts.share === false) return newOwnTransport(tls, opts.socketPath, opts.connections);
  const key = JSON.stringify([tls.caData, tls.caFile, tls.certData, tls.certFile, tls.keyData, tls.keyFile, !!tls.insecureSkipTLSVerify, tls.serverName, opts.socketPath]);
  let entry = shared.get(key);
  if (!entry) {
    entry = { transport: newOwnTransport(tls, opts.socketPath), refs: 0 };
    shared.set(key, entry);
  }
  const e = entry;
  e.refs++;
  let closed = false;
  return {
    requests: (override) => (closed ? Promise.reject(new Error('transport is closed')) : e.transport.requests(override)),
    async close() {
      if (closed) return;
      closed = true;
      if (--e.refs > 0) return;
      if (shared.get(key) === e) shared.delete(key);
      await e.transport.close();
    },
  };
}

function newOwnTransport(tls: TlsConfig, socketPath?: string, connections = REQUEST_CONNECTIONS): Transport {
  let material: Promise<TlsMaterial> | undefined;
  let current: { agent: Http1Agent; cert?: string; key?: string } | undefined;
  let closed = false;
  // Files are read once; a failed read is retried by the next request.
  const load = () => {
    if (!material) {
      const p = (async () => ({
        ca: await readMaybe(tls.caData, tls.caFile, 'certificate authority'),
        cert: await readMaybe(tls.certData, tls.certFile, 'client certificate'),
        key: await readMaybe(tls.keyData, tls.keyFile, 'client key'),
      }))();
      material = p;
      p.catch(() => {
        if (material === p) material = undefined;
      });
    }
    return material;
  };
  const agents = async (override: ClientCertificate | undefined) => {
    if (closed) throw new Error('transport is closed');
    const m = await load();
    const cert = override?.cert ?? m.cert;
    const key = override?.key ?? m.key;
    if (current && current.cert === cert && current.key === key) return current;
    // One secure context for every connection of the agents: building it per
    // connection (as tls.connect does from ca/cert/key) parses the PEMs each time.
    const secureContext = createSecureContext({ ...(m.ca ? { ca: m.ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) });
    const connect = {
      secureContext,
      rejectUnauthorized: !tls.insecureSkipTLSVerify,
      ...(tls.serverName ? { servername: tls.serverName } : {}),
    };
    const old = current;
    current = {
      agent: newHttp1Agent({ connections, keepAliveTimeoutMs: KEEP_ALIVE_MS, ...(socketPath ? { socketPath } : {}), tls: connect }),
      cert,
      key,
    };
    // Let requests and streams in flight on the old agent finish.
    if (old) void old.agent.close().catch(() => undefined);
    return current;
  };
  return {
    requests: async (override) => (await agents(override)).agent,
    async close() {
      closed = true;
      const c = current;
      current = undefined;
      if (c) await c.agent.destroy();
    },
  };
}
