/**
 * What a container runs: its `command`/`args` combined with the image's
 * default ENTRYPOINT and CMD (docker semantics), for the images kcm knows.
 */
import type { Container } from 'kubernetes-types/core/v1.js';

export interface ImageRef {
  /** Registry host, if the reference names one (`k8s.gcr.io`, `docker.io`). */
  registry?: string;
  /** Repository path without registry (`e2e-test-images/agnhost`, `library/nginx`, `nginx`). */
  repository: string;
  /** Last path component of the repository (`agnhost`, `nginx`): what known images are matched by. */
  name: string;
  tag?: string;
  digest?: string;
}

/** Splits an image reference: `[registry/]path[:tag][@digest]`. */
export function parseImage(image: string): ImageRef {
  let rest = image.trim();
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag: string | undefined;
  const slash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > slash) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  let registry: string | undefined;
  const first = rest.indexOf('/');
  if (first >= 0) {
    const head = rest.slice(0, first);
    if (head.includes('.') || head.includes(':') || head === 'localhost') {
      registry = head;
      rest = rest.slice(first + 1);
    }
  }
  const name = rest.slice(rest.lastIndexOf('/') + 1);
  const ref: ImageRef = { repository: rest, name };
  if (registry !== undefined) ref.registry = registry;
  if (tag !== undefined) ref.tag = tag;
  if (digest !== undefined) ref.digest = digest;
  return ref;
}

export interface ImageConfig {
  entrypoint: string[];
  cmd: string[];
  /** Ports the image's default program listens on (informational, like EXPOSE). */
  expose?: number[];
}

/** `1.14-alpine` -> [1, 14]; `latest`/undefined -> undefined. */
function majorMinor(tag: string | undefined): [number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)/.exec(tag ?? '');
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/**
 * The default ENTRYPOINT/CMD of a known image (matched by repository
 * basename, any registry/tag/digest), or undefined for an unknown one.
 */
export function imageConfig(image: string): ImageConfig | undefined {
  const ref = parseImage(image);
  switch (ref.name) {
    case 'busybox':
      return { entrypoint: [], cmd: ['sh'] };
    case 'alpine':
      return { entrypoint: [], cmd: ['/bin/sh'] };
    case 'nginx': {
      // nginx images since 1.19 run /docker-entrypoint.sh (which then execs CMD)
      const v = majorMinor(ref.tag);
      const newer = v === undefined || v[0] > 1 || (v[0] === 1 && v[1] >= 19);
      return { entrypoint: newer ? ['/docker-entrypoint.sh'] : [], cmd: ['nginx', '-g', 'daemon off;'], expose: [80] };
    }
    case 'httpd':
      return { entrypoint: [], cmd: ['httpd-foreground'], expose: [80] };
    case 'agnhost':
      return { entrypoint: ['/agnhost'], cmd: ['pause'] };
    case 'pause':
      return { entrypoint: ['/pause'], cmd: [] };
    case 'nonewprivs':
      // test/images/nonewprivs: a setuid program that prints its effective uid
      return { entrypoint: [], cmd: ['nnp'] };
    case 'redis':
      return { entrypoint: ['docker-entrypoint.sh'], cmd: ['redis-server'], expose: [6379] };
    case 'perl': {
      const v = /^(\d+\.\d+(?:\.\d+)?)/.exec(ref.tag ?? '');
      const ver = v ? (v[1]!.split('.').length === 2 ? `${v[1]}.3` : v[1]!) : '5.40.0';
      return { entrypoint: [], cmd: [`perl${ver}`, '-de0'] };
    }
    default:
      return undefined;
  }
}

/**
 * The argv a container runs. `command` replaces the ENTRYPOINT and drops the
 * CMD; `args` alone replace the CMD. An unknown image without `command`
 * returns `command ?? []` + `args ?? []` (so `[]` when both are absent,
 * meaning "runs until stopped", the caller's rule).
 */
export function containerArgv(container: Container): string[] {
  const command = container.command;
  const args = container.args;
  if (command && command.length > 0) return [...command, ...(args ?? [])];
  const cfg = container.image ? imageConfig(container.image) : undefined;
  if (!cfg) return [...(args ?? [])];
  const argv = [...cfg.entrypoint, ...(args && args.length > 0 ? args : cfg.cmd)];
  return argv;
}
