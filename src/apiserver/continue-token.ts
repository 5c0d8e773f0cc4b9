/**
 * List continue tokens, shaped like apiserver's etcd3 tokens: base64 of
 * `{"v":"meta.k8s.io/v1","rv":<revision>,"start":"<key suffix>"}`. `start` is
 * the key (relative to the list prefix) the next page begins at, so the token
 * resumes strictly after the last key returned ("\0" appended, as upstream).
 */
import { badRequest } from './status.js';

export interface ContinueToken {
  /** Revision the first page was read at; later pages read the same snapshot. -1: the latest (an inconsistent continuation). */
  rv: number;
  /** Key suffix under the list prefix to start from (inclusive). */
  start: string;
}

export function encodeContinue(rv: number, lastKey: string, prefix: string): string {
  const start = lastKey.slice(prefix.length) + '\u0000';
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv, start }), 'utf8').toString('base64url');
}

/** 400 BadRequest for anything that is not a token this server made. */
export function decodeContinue(token: string): ContinueToken {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('continue key is not valid: illegal base64 data');
  }
  const p = parsed as { v?: unknown; rv?: unknown; start?: unknown };
  if (!p || p.v !== 'meta.k8s.io/v1') throw badRequest('continue key is not valid: server does not recognize this encoded key');
  if (typeof p.rv !== 'number' || !Number.isInteger(p.rv) || (p.rv <= 0 && p.rv !== -1)) throw badRequest('continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)');
  if (typeof p.start !== 'string' || p.start.length === 0) throw badRequest('continue key is not valid: encoded start key empty');
  if (p.start.includes('..') || p.start.startsWith('/')) throw badRequest('continue key is not valid: key is not a valid relative path');
  return { rv: p.rv, start: p.start };
}

/** The storage `startAfter` key for a token: everything after start-minus-"\0". */
export function startAfterKey(tok: ContinueToken, prefix: string): string {
  const s = tok.start.endsWith('\u0000') ? tok.start.slice(0, -1) : tok.start;
  return prefix + s;
}

export const continueExpiredMessage =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';
