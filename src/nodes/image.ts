/**
 * Simulated images. Every image is "already present on the machine" except
 * the ones that cannot exist, which always fail to pull:
 * - a registry host `invalid`, ending in `.invalid` (RFC 2606: a name that
 *   never resolves) or `invalid.com` (upstream e2e's InvalidRegistry):
 *   the lookup fails (`no such host`);
 * - a tag that says the image does not exist, as upstream's e2e tests use
 *   to make a rollout hang (`foo:non-existent`, `webserver:404`,
 *   `gb-redisslave:nonexistent`): `nonexistent`, `non-existent`,
 *   `doesnotexist`, `does-not-exist`, `notfound`, `not-found`, `404`,
 *   `invalid`, `invalid-tag`: the registry answers `not found`.
 *
 * An ImagePullRule adds to that (`kcm up --unpullable-images`,
 * `--pullable-images`): images matching an `unpullable` pattern fail as not
 * found, and when `pullable` patterns are given, every image matching none of
 * them does too (an air-gapped node with a few images). Patterns are globs
 * (`*` any characters, `?` one) matched against the image as written and as
 * containerd names it (`docker.io/library/nginx:latest`).
 */
import { createHash } from 'node:crypto';

/** The registry host of an image reference, or undefined for Docker Hub short names. */
export function registryHost(image: string): string | undefined {
  const slash = image.indexOf('/');
  if (slash < 0) return undefined;
  const first = image.slice(0, slash);
  // As in the docker reference grammar: a host has a dot or a port, or is localhost.
  if (first.includes('.') || first.includes(':') || first === 'localhost') return first.replace(/:\d+$/, '');
  return undefined;
}

/** Tags that name an image that does not exist (see the module comment). */
const MISSING_TAGS = new Set(['nonexistent', 'non-existent', 'doesnotexist', 'does-not-exist', 'notfound', 'not-found', '404', 'invalid', 'invalid-tag']);

function unresolvableHost(image: string): string | undefined {
  const host = registryHost(image);
  return host && (host === 'invalid' || host.endsWith('.invalid') || host === 'invalid.com') ? host : undefined;
}

/** The tag of an image reference (undefined with a digest or no tag). */
function tagOf(image: string): string | undefined {
  if (image.includes('@')) return undefined;
  const last = image.slice(image.lastIndexOf('/') + 1);
  const colon = last.lastIndexOf(':');
  return colon < 0 ? undefined : last.slice(colon + 1);
}

/** Extra pull rules (see the module comment). */
export interface ImagePullRule {
  unpullable?: readonly string[];
  pullable?: readonly string[];
}

function globMatch(pattern: string, text: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.')}$`);
  return re.test(text);
}

function matchesAny(patterns: readonly string[], image: string): boolean {
  const names = [image, normalizeImage(image)];
  return patterns.some((p) => names.some((n) => globMatch(p, n)));
}

/** False for images that cannot be pulled: those that cannot exist (see the module comment), and those the rule refuses. */
export function isPullable(image: string, rule: ImagePullRule = {}): boolean {
  if (unresolvableHost(image)) return false;
  const tag = tagOf(image);
  if (tag !== undefined && MISSING_TAGS.has(tag.toLowerCase())) return false;
  if (rule.unpullable && matchesAny(rule.unpullable, image)) return false;
  if (rule.pullable && rule.pullable.length > 0 && !matchesAny(rule.pullable, image)) return false;
  return true;
}

/**
 * The fully qualified reference as containerd reports it in
 * `containerStatuses[].image`: `nginx` -> `docker.io/library/nginx:latest`.
 */
export function normalizeImage(image: string): string {
  let ref = image;
  if (!registryHost(ref)) ref = ref.includes('/') ? `docker.io/${ref}` : `docker.io/library/${ref}`;
  if (ref.includes('@')) return ref;
  const lastSlash = ref.lastIndexOf('/');
  if (!ref.slice(lastSlash + 1).includes(':')) ref += ':latest';
  return ref;
}

/** A stable digest reference for `containerStatuses[].imageID`: `docker.io/library/nginx@sha256:<hex>`. */
export function imageID(image: string): string {
  const ref = normalizeImage(image);
  if (ref.includes('@')) return ref;
  const repo = ref.slice(0, ref.lastIndexOf(':'));
  return `${repo}@sha256:${createHash('sha256').update(ref).digest('hex')}`;
}

/** The error text of a failed pull, shaped like containerd's. */
export function pullErrorMessage(image: string): string {
  const ref = normalizeImage(image);
  const host = unresolvableHost(image);
  if (host) return `failed to pull and unpack image "${ref}": failed to resolve reference "${ref}": failed to do request: Head "https://${host}/v2/": dial tcp: lookup ${host}: no such host`;
  return `failed to pull and unpack image "${ref}": failed to resolve reference "${ref}": ${ref}: not found`;
}
