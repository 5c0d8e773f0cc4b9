/**
 * One keep-alive undici Agent per RestConfig, carrying its TLS settings. A
 * new Agent is made only when the client certificate changes (exec plugins
 * that return certificates); the old one finishes its requests and closes.
 */
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { Agent, type Dispatcher } from 'undici';
import type { TlsConfig } from './rest-config.js';

export interface ClientCertificate {
  cert: string;
  key: string;
}

export interface Transport {
  /** The shared dispatcher; pass the exec plugin's certificate when there is one. */
  dispatcher(override?: ClientCertificate): Promise<Dispatcher>;
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

export function newTransport(tls: TlsConfig): Transport {
  let material: Promise<TlsMaterial> | undefined;
  let current: { agent: Agent; cert?: string; key?: string } | undefined;
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
  return {
    async dispatcher(override) {
      if (closed) throw new Error('transport is closed');
      const m = await load();
      const cert = override?.cert ?? m.cert;
      const key = override?.key ?? m.key;
      if (current && current.cert === cert && current.key === key) return current.agent;
      // One secure context for every connection of the agent: building it per
      // connection (as tls.connect does from ca/cert/key) parses the PEMs each time.
      const secureContext = createSecureContext({ ...(m.ca ? { ca: m.ca } : {}), ...(cert ? { cert } : {}), ...(key ? { key } : {}) });
      const agent = new Agent({
        keepAliveTimeout: 30_000,
        // Watches idle for long; per-request timeouts are set by the caller.
        bodyTimeout: 0,
        headersTimeout: 0,
        connect: {
          secureContext,
          rejectUnauthorized: !tls.insecureSkipTLSVerify,
          ...(tls.serverName ? { servername: tls.serverName } : {}),
        },
      });
      const old = current;
      current = { agent, cert, key };
      // Let requests in flight on the old agent finish.
      if (old) void old.agent.close().catch(() => undefined);
      return agent;
    },
    async close() {
      closed = true;
      const c = current;
      current = undefined;
      if (c) await c.agent.destroy();
    },
  };
}
