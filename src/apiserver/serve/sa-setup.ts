/**
 * Service-account token wiring of the serving layer, from kube-apiserver's
 * flags: --service-account-key-file (verify), --service-account-signing-key-file
 * (sign TokenRequests; its public half also verifies), --service-account-issuer
 * (the first signs, all are accepted) and --api-audiences (default: the issuers).
 */
import { readFileSync } from 'node:fs';
import type { KeyObject } from 'node:crypto';
import { createPublicKey } from 'node:crypto';
import type { Clock } from '../../util/clock/clock.js';
import type { Logger } from '../../util/log/logger.js';
import { parsePrivateKey, parsePublicKeys } from '../../util/jwt/keys.js';
import type { ObjectReader } from '../admission/admission.js';
import type { Storage } from '../storage/storage.js';
import { storagePrefix } from '../store.js';
import type { TokenAuthenticator } from './authn.js';
import {
  defaultIssuer,
  newServiceAccountTokenAuthenticator,
  newServiceAccountTokenSigner,
  type ServiceAccountTokenAuthenticator,
  type ServiceAccountTokenSigner,
} from './sa-token.js';

export interface ServiceAccountTokenOptions {
  /** PEM files with public keys (or private keys, or certificates) that verify tokens. */
  keyFiles?: readonly string[];
  /** PEM file with the private key that signs TokenRequest tokens. */
  signingKeyFile?: string;
  /** Default [https://kubernetes.default.svc.cluster.local]. */
  issuers?: readonly string[];
  /** Default: the issuers. */
  apiAudiences?: readonly string[];
}

export interface ServiceAccountTokens {
  /** Undefined when no verification key is configured (service-account tokens are then not accepted). */
  authenticator?: ServiceAccountTokenAuthenticator;
  /** The authenticator as a request TokenAuthenticator (refusals logged at -v=2). */
  tokenAuthenticator?: TokenAuthenticator;
  /** Undefined without a signing key. */
  signer?: ServiceAccountTokenSigner;
  apiAudiences: string[];
}

function readFile(path: string, flag: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(`--${flag}: cannot read ${path}`, { cause: err });
  }
}

/** Reads objects straight from storage (through the watch cache). */
export function storageReader(storage: Storage): ObjectReader {
  return {
    async get(group, resource, namespace, name) {
      return (await storage.get(`${storagePrefix({ group, resource }, namespace)}${name}`))?.object;
    },
  };
}

/** Loads the keys; throws with the flag's name when a file cannot be read or holds no usable key. */
export function setupServiceAccountTokens(opts: ServiceAccountTokenOptions, deps: { reader: ObjectReader; clock: Clock; logger: Logger }): ServiceAccountTokens {
  const issuers = opts.issuers && opts.issuers.length > 0 ? [...opts.issuers] : [defaultIssuer];
  const apiAudiences = opts.apiAudiences && opts.apiAudiences.length > 0 ? [...opts.apiAudiences] : [...issuers];
  const keys: KeyObject[] = [];
  for (const f of opts.keyFiles ?? []) {
    try {
      keys.push(...parsePublicKeys(readFile(f, 'service-account-key-file')));
    } catch (err) {
      throw new Error(`--service-account-key-file ${f}: ${(err as Error).message}`, { cause: err });
    }
  }
  let signer: ServiceAccountTokenSigner | undefined;
  if (opts.signingKeyFile) {
    let key: KeyObject;
    try {
      key = parsePrivateKey(readFile(opts.signingKeyFile, 'service-account-signing-key-file'));
    } catch (err) {
      throw new Error(`--service-account-signing-key-file ${opts.signingKeyFile}: ${(err as Error).message}`, { cause: err });
    }
    signer = newServiceAccountTokenSigner({ key, issuer: issuers[0]!, apiAudiences, clock: deps.clock });
    keys.push(createPublicKey(key));
  }
  if (keys.length === 0) return { apiAudiences, ...(signer ? { signer } : {}) };
  const authenticator = newServiceAccountTokenAuthenticator({ keys, issuers, apiAudiences, reader: deps.reader, clock: deps.clock });
  const log = deps.logger;
  const tokenAuthenticator: TokenAuthenticator = async (token) => {
    const r = await authenticator.authenticate(token);
    switch (r.kind) {
      case 'user':
        return r.user;
      case 'invalid':
        log.v(2).info({ error: r.error }, 'service account token refused');
        return undefined;
      case 'not-mine':
        return undefined;
    }
  };
  return { authenticator, tokenAuthenticator, apiAudiences, ...(signer ? { signer } : {}) };
}
