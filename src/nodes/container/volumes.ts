/**
 * The files kubelet's volume plugins write for one pod volume (v1.20):
 * configMap (`pkg/volume/configmap` MakePayload: data and binaryData, `items`
 * key -> path with per-item mode, defaultMode 0644, optional), secret
 * (`pkg/volume/secret`: base64 `data` decoded), downwardAPI
 * (`pkg/volume/downwardapi` CollectData: metadata fieldRefs, resourceFieldRef
 * with limits defaulted to the node's allocatable), projected (all of those
 * plus serviceAccountToken), then AtomicWriter's payload validation. With a
 * pod `fsGroup`, SetVolumeOwnership adds 0440 to every file (these volumes are
 * read-only), and a projected token is written 0600 first (so 0640).
 *
 * emptyDir, hostPath, persistentVolumeClaim and ephemeral are plain
 * directories (`{ kind: 'dir' }`); other volume types are `unsupported`.
 */
import type { ConfigMap, DownwardAPIVolumeFile, KeyToPath, Pod, Secret, Volume } from 'kubernetes-types/core/v1.js';
import type { VolumeFile } from '../shell/fs.js';
import { extractFieldPathAsString, resourceFieldValue } from './downward.js';
import type { NodeFacts, ObjectSource } from './types.js';

export const DEFAULT_MODE = 0o644;
export const DEFAULT_TOKEN_EXPIRATION_SECONDS = 3600;

export type VolumeFilesResult = { kind: 'atomic'; files: Record<string, VolumeFile> } | { kind: 'dir' } | { kind: 'unsupported' } | { error: string };

type Payload = Map<string, { data: Buffer; mode: number }>;

/** A projected token as asked from the ObjectSource (PodVolumes plugs its cache in here). */
/** A service account token: the JWT, as text or as the bytes of its file (shared by every write of the file). */
export type ServiceAccountToken = string | Buffer;

export type TokenFetcher = (audience: string | undefined, expirationSeconds: number) => ServiceAccountToken | undefined;

/**
 * The bytes of value `key` of `values` (a ConfigMap's data or binaryData, a
 * Secret's data), made once per values object: every pod mounting the same
 * version of an object (kube-root-ca.crt in each pod's service-account
 * volume) shares one Buffer. Informer objects are never changed in place, and
 * file data is never written in place (the file system replaces a file's
 * Buffer), so sharing is safe.
 */
function valueBytes(values: Readonly<Record<string, string>>, key: string, encoding: 'utf8' | 'base64'): Buffer {
  let byKey = valueBuffers.get(values);
  if (!byKey) valueBuffers.set(values, (byKey = new Map()));
  let b = byKey.get(key);
  if (!b) byKey.set(key, (b = Buffer.from(values[key]!, encoding)));
  return b;
}

const valueBuffers = new WeakMap<object, Map<string, Buffer>>();

/** configmap.MakePayload; a missing object is an empty ConfigMap (only reached when optional). */
export function configMapPayload(items: KeyToPath[] | undefined, cm: ConfigMap, defaultMode: number, optional: boolean): Payload {
  const out: Payload = new Map();
  if (!items || items.length === 0) {
    if (cm.data) for (const k of Object.keys(cm.data)) out.set(k, { data: valueBytes(cm.data, k, 'utf8'), mode: defaultMode });
    if (cm.binaryData) for (const k of Object.keys(cm.binaryData)) out.set(k, { data: valueBytes(cm.binaryData, k, 'base64'), mode: defaultMode });
    return out;
  }
  for (const ktp of items) {
    let data: Buffer;
    if (cm.data?.[ktp.key] !== undefined) data = valueBytes(cm.data, ktp.key, 'utf8');
    else if (cm.binaryData?.[ktp.key] !== undefined) data = valueBytes(cm.binaryData, ktp.key, 'base64');
    else if (optional) continue;
    else throw new Error(`configmap references non-existent config key: ${ktp.key}`);
    out.set(ktp.path, { data, mode: ktp.mode ?? defaultMode });
  }
  return out;
}

/** secret.MakePayload. */
export function secretPayload(items: KeyToPath[] | undefined, secret: Secret, defaultMode: number, optional: boolean): Payload {
  const out: Payload = new Map();
  if (!items || items.length === 0) {
    if (secret.data) for (const k of Object.keys(secret.data)) out.set(k, { data: valueBytes(secret.data, k, 'base64'), mode: defaultMode });
    return out;
  }
  for (const ktp of items) {
    if (secret.data?.[ktp.key] === undefined) {
      if (optional) continue;
      throw new Error(`references non-existent secret key: ${ktp.key}`);
    }
    out.set(ktp.path, { data: valueBytes(secret.data!, ktp.key, 'base64'), mode: ktp.mode ?? defaultMode });
  }
  return out;
}

/** path.Clean for a relative path. */
export function cleanPath(p: string): string {
  const abs = p.startsWith('/');
  const out: string[] = [];
  for (const c of p.split('/')) {
    if (c === '' || c === '.') continue;
    if (c === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!abs) out.push('..');
    } else out.push(c);
  }
  const s = out.join('/');
  return abs ? '/' + s : s === '' ? '.' : s;
}

/** utilerrors.NewAggregate(...).Error(). */
export function aggregate(errs: string[]): string | undefined {
  if (errs.length === 0) return undefined;
  if (errs.length === 1) return errs[0];
  return `[${errs.join(', ')}]`;
}

/** downwardapi.CollectData; throws the aggregate of the item errors. */
export function downwardAPIPayload(items: DownwardAPIVolumeFile[] | undefined, pod: Pod, node: NodeFacts, defaultMode: number): Payload {
  const out: Payload = new Map();
  const errs: string[] = [];
  for (const f of items ?? []) {
    let data = Buffer.alloc(0);
    try {
      if (f.fieldRef) data = Buffer.from(extractFieldPathAsString(pod, f.fieldRef.fieldPath));
      else if (f.resourceFieldRef) data = Buffer.from(resourceFieldValue(f.resourceFieldRef, pod, undefined, node.allocatable));
    } catch (e) {
      errs.push(e instanceof Error ? e.message : String(e));
    }
    out.set(cleanPath(f.path), { data, mode: f.mode ?? defaultMode });
  }
  const err = aggregate(errs);
  if (err !== undefined) throw new Error(err);
  return out;
}

/** AtomicWriter's validatePath. */
export function validatePayloadPath(targetPath: string): string | undefined {
  if (targetPath === '') return `invalid path: must not be empty: ""`;
  if (targetPath.startsWith('/')) return `invalid path: must be relative path: ${targetPath}`;
  if (targetPath.length > 4096) return 'invalid path: must be less than or equal to 4096 characters';
  const items = targetPath.split('/');
  for (const item of items) {
    if (item === '..') return `invalid path: must not contain '..': ${targetPath}`;
    if (item.length > 255) return 'invalid path: filenames must be less than or equal to 255 characters';
  }
  if (items[0]!.startsWith('..') && items[0]!.length > 2) return `invalid path: must not start with '..': ${targetPath}`;
  return undefined;
}

function fsGroupOf(pod: Pod): number | undefined {
  return pod.spec?.securityContext?.fsGroup;
}

function toFiles(payload: Payload, pod: Pod): Record<string, VolumeFile> {
  const fsGroup = fsGroupOf(pod) !== undefined;
  const files: Record<string, VolumeFile> = {};
  for (const k of [...payload.keys()].sort()) {
    const p = payload.get(k)!;
    const clean = cleanPath(k);
    const bad = validatePayloadPath(clean);
    if (bad) throw new Error(bad);
    files[clean] = { content: p.data, mode: (p.mode | (fsGroup ? 0o440 : 0)) & 0o7777 };
  }
  return files;
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** kubelet's error for a token it could not get. */
export function tokenError(serviceAccount: string): string {
  return `failed to fetch token: serviceaccounts "${serviceAccount}" not found`;
}

/**
 * The files of one pod volume as its plugin writes them, or the SetUp error
 * (`configmap "x" not found`; the pod then stays ContainerCreating with
 * FailedMount events, see `failedMountMessage`).
 */
export function volumeFiles(pod: Pod, volume: Volume, src: ObjectSource, node: NodeFacts, fetchToken?: TokenFetcher): VolumeFilesResult {
  const ns = pod.metadata?.namespace ?? '';
  try {
    if (volume.configMap) {
      const v = volume.configMap;
      const name = v.name ?? '';
      const optional = v.optional ?? false;
      let cm = src.configMap(ns, name);
      if (!cm) {
        if (!optional) return { error: `configmap "${name}" not found` };
        cm = { metadata: { namespace: ns, name } };
      }
      return { kind: 'atomic', files: toFiles(configMapPayload(v.items, cm, v.defaultMode ?? DEFAULT_MODE, optional), pod) };
    }
    if (volume.secret) {
      const v = volume.secret;
      const name = v.secretName ?? '';
      const optional = v.optional ?? false;
      let s = src.secret(ns, name);
      if (!s) {
        if (!optional) return { error: `secret "${name}" not found` };
        s = { metadata: { namespace: ns, name } };
      }
      return { kind: 'atomic', files: toFiles(secretPayload(v.items, s, v.defaultMode ?? DEFAULT_MODE, optional), pod) };
    }
    if (volume.downwardAPI) {
      const v = volume.downwardAPI;
      return { kind: 'atomic', files: toFiles(downwardAPIPayload(v.items, pod, node, v.defaultMode ?? DEFAULT_MODE), pod) };
    }
    if (volume.projected) {
      const defaultMode = volume.projected.defaultMode ?? DEFAULT_MODE;
      const payload: Payload = new Map();
      const errs: string[] = [];
      const merge = (p: Payload): void => {
        for (const [k, v] of p) payload.set(k, v);
      };
      for (const source of volume.projected.sources ?? []) {
        try {
          if (source.secret) {
            const name = source.secret.name ?? '';
            const optional = source.secret.optional ?? false;
            let s = src.secret(ns, name);
            if (!s) {
              if (!optional) throw new Error(`secret "${name}" not found`);
              s = { metadata: { namespace: ns, name } };
            }
            merge(secretPayload(source.secret.items, s, defaultMode, optional));
          } else if (source.configMap) {
            const name = source.configMap.name ?? '';
            const optional = source.configMap.optional ?? false;
            let cm = src.configMap(ns, name);
            if (!cm) {
              if (!optional) throw new Error(`configmap "${name}" not found`);
              cm = { metadata: { namespace: ns, name } };
            }
            merge(configMapPayload(source.configMap.items, cm, defaultMode, optional));
          } else if (source.downwardAPI) {
            merge(downwardAPIPayload(source.downwardAPI.items, pod, node, defaultMode));
          } else if (source.serviceAccountToken) {
            const tp = source.serviceAccountToken;
            const sa = pod.spec?.serviceAccountName || 'default';
            const exp = tp.expirationSeconds ?? DEFAULT_TOKEN_EXPIRATION_SECONDS;
            const aud = tp.audience ? tp.audience : undefined;
            const token = fetchToken ? fetchToken(aud, exp) : src.serviceAccountToken?.(ns, sa, aud, exp, pod);
            if (token === undefined) throw new Error(tokenError(sa));
            const mode = fsGroupOf(pod) !== undefined ? 0o600 : defaultMode;
            payload.set(tp.path, { data: typeof token === 'string' ? Buffer.from(token) : token, mode });
          }
        } catch (e) {
          errs.push(errText(e));
        }
      }
      const err = aggregate(errs);
      if (err !== undefined) return { error: err };
      return { kind: 'atomic', files: toFiles(payload, pod) };
    }
  } catch (e) {
    return { error: errText(e) };
  }
  if (volume.emptyDir || volume.hostPath || volume.persistentVolumeClaim || volume.ephemeral) return { kind: 'dir' };
  return { kind: 'unsupported' };
}

/** The FailedMount event kubelet records for a volume whose SetUp failed. */
export function failedMountMessage(volumeName: string, error: string): string {
  return `MountVolume.SetUp failed for volume "${volumeName}" : ${error}`;
}
