/**
 * Where the local-path provisioner keeps volume data: one directory per
 * PersistentVolume, `<root>/<pv name>` (kcm up: `<data-dir>/volumes/<pv>`).
 * Every simulated node runs on this machine, so one directory serves any of them.
 */
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';

export interface VolumeDirs {
  /** The directory of volume `pv` (not created). */
  pathOf(pv: string): string;
  /** Creates the directory of `pv` (and its parents) if missing; returns its path. */
  create(pv: string): Promise<string>;
  /** Removes the directory of `pv` and everything in it; a missing directory is fine. */
  remove(pv: string): Promise<void>;
}

/** Names that are safe as one path segment (PV names are DNS subdomains: no `/`, no `..` alone). */
function checkName(pv: string): void {
  if (pv === '' || pv === '.' || pv === '..' || pv.includes('/') || pv.includes('\\')) throw new Error(`invalid volume name ${JSON.stringify(pv)}`);
}

export function newVolumeDirs(root: string): VolumeDirs {
  const base = resolve(root);
  const pathOf = (pv: string) => {
    checkName(pv);
    return join(base, pv);
  };
  return {
    pathOf,
    async create(pv) {
      const dir = pathOf(pv);
      // World-writable as rancher's local-path-provisioner makes them: any pod user may write.
      await mkdir(dir, { recursive: true, mode: 0o777 });
      return dir;
    },
    async remove(pv) {
      await rm(pathOf(pv), { recursive: true, force: true });
    },
  };
}
