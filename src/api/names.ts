/**
 * Name generation for `metadata.generateName`, as the API server's
 * SimpleNameGenerator: the base cut to 58 characters plus 5 random
 * characters from Kubernetes' alphabet (utilrand.String).
 */
import { randomInt } from 'node:crypto';

/** The characters utilrand.String draws from: no vowels, no confusable digits. */
export const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
export const MAX_NAME_LENGTH = 63;
export const RANDOM_SUFFIX_LENGTH = 5;
/** Longest base kept: 63 - 5. */
export const MAX_GENERATED_NAME_LENGTH = MAX_NAME_LENGTH - RANDOM_SUFFIX_LENGTH;

/** Returns an integer in [0, n). */
export type RandomSource = (n: number) => number;

const cryptoRandom: RandomSource = (n) => randomInt(n);

/** `n` random characters of NAME_ALPHABET. */
export function randomString(n: number, random: RandomSource = cryptoRandom): string {
  let out = '';
  for (let i = 0; i < n; i++) out += NAME_ALPHABET[random(NAME_ALPHABET.length)];
  return out;
}

/** `base` (at most 58 characters kept) followed by 5 random characters. */
export function generateName(base: string, random: RandomSource = cryptoRandom): string {
  const kept = base.length > MAX_GENERATED_NAME_LENGTH ? base.slice(0, MAX_GENERATED_NAME_LENGTH) : base;
  return kept + randomString(RANDOM_SUFFIX_LENGTH, random);
}
