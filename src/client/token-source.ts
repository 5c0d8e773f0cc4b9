/**
 * Bearer tokens read from a file and cached for a period (client-go's
 * cachingTokenSource over a file: one minute), so rotated service account
 * tokens are picked up without a restart.
 */
import { readFile } from 'node:fs/promises';
import type { Clock } from '../util/clock/clock.js';
import type { Logger } from '../util/log/logger.js';

export interface TokenSource {
  /** The current token; rejects only when no token was ever read. */
  token(): Promise<string>;
  /** Forgets the cached token so the next call re-reads. */
  invalidate(): void;
}

export const TOKEN_FILE_REFRESH_MS = 60_000;

export function newFileTokenSource(opts: { file: string; clock: Clock; log: Logger; periodMs?: number; initial?: string }): TokenSource {
  const period = opts.periodMs ?? TOKEN_FILE_REFRESH_MS;
  let cached: string | undefined = opts.initial;
  let readAt: number | undefined = opts.initial !== undefined ? opts.clock.now() : undefined;
  let inflight: Promise<string> | undefined;
  const refresh = async (): Promise<string> => {
    try {
      const t = (await readFile(opts.file, 'utf8')).trim();
      cached = t;
      readAt = opts.clock.now();
      return t;
    } catch (err) {
      if (cached === undefined) throw new Error(`cannot read token file "${opts.file}": ${(err as Error).message}`, { cause: err });
      // Keep the old token; try the file again on the next call.
      opts.log.error(err, { file: opts.file }, 'cannot re-read token file, using the cached token');
      return cached;
    } finally {
      inflight = undefined;
    }
  };
  return {
    token() {
      if (cached !== undefined && readAt !== undefined && opts.clock.since(readAt) < period) return Promise.resolve(cached);
      inflight ??= refresh();
      return inflight;
    },
    invalidate() {
      readAt = undefined;
    },
  };
}
