/**
 * Simulated images. Every image is "already present on the machine" except
 * those whose registry host ends in `.invalid` (RFC 2606: a name that never
 * resolves), which always fail to pull.
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

/** False for images that can never be pulled (host ending in `.invalid`). */
export function isPullable(image: string): boolean {
  const host = registryHost(image);
  return !(host && (host === 'invalid' || host.endsWith('.invalid')));
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
  const host = registryHost(image) ?? 'registry';
  return `failed to pull and unpack image "${normalizeImage(image)}": failed to resolve reference "${normalizeImage(image)}": failed to do request: Head "https://${host}/v2/": dial tcp: lookup ${host}: no such host`;
}
