/**
 * The downward API as kubelet evaluates it: `pkg/fieldpath` (fieldRef paths,
 * FormatMap), `pkg/api/v1/resource/helpers.go` (resourceFieldRef with a
 * divisor, rounded up; limits defaulted to the node's allocatable as
 * MergeContainerResourceLimits does).
 */
import type { Container, ObjectFieldSelector, Pod, ResourceFieldSelector } from 'kubernetes-types/core/v1.js';
import { isZero, milliValue, parseQuantity, toQuantity, value, type Quantity } from '../../api/quantity.js';

/** Go's strconv.Quote (what `%q` prints). */
import { goQuote } from '../../api/validation.js';
export { goQuote };

function goLess(a: string, b: string): number {
  // Go compares strings bytewise (UTF-8), which orders code points; JS `<` orders UTF-16 units.
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return Buffer.compare(x, y);
}

/** fieldpath.FormatMap: `key="value"` lines sorted by key, no trailing newline. */
export function formatMap(m: Record<string, string> | undefined): string {
  const keys = Object.keys(m ?? {}).sort(goLess);
  return keys.map((k) => `${k}=${goQuote(m![k]!)}`).join('\n');
}

/** fieldpath.SplitMaybeSubscriptedPath: `metadata.labels['k']` -> ['metadata.labels', 'k']. */
export function splitSubscriptedPath(fieldPath: string): [string, string] | undefined {
  if (!fieldPath.endsWith("']")) return undefined;
  const s = fieldPath.slice(0, -2);
  const i = s.indexOf("['");
  if (i <= 0) return undefined;
  return [s.slice(0, i), s.slice(i + 2)];
}

/** fieldpath.ExtractFieldPathAsString on a pod: metadata fields only (what a downwardAPI volume may use). */
export function extractFieldPathAsString(pod: Pod, fieldPath: string): string {
  const md = pod.metadata ?? {};
  const sub = splitSubscriptedPath(fieldPath);
  if (sub) {
    const [path, key] = sub;
    if (path === 'metadata.annotations') return md.annotations?.[key] ?? '';
    if (path === 'metadata.labels') return md.labels?.[key] ?? '';
    throw new Error(`fieldPath "${fieldPath}" does not support subscript`);
  }
  switch (fieldPath) {
    case 'metadata.annotations':
      return formatMap(md.annotations);
    case 'metadata.labels':
      return formatMap(md.labels);
    case 'metadata.name':
      return md.name ?? '';
    case 'metadata.namespace':
      return md.namespace ?? '';
    case 'metadata.uid':
      return md.uid ?? '';
  }
  throw new Error(`unsupported fieldPath: ${fieldPath}`);
}

const ENV_FIELDS = new Set([
  'metadata.annotations',
  'metadata.labels',
  'metadata.name',
  'metadata.namespace',
  'metadata.uid',
  'spec.nodeName',
  'spec.restartPolicy',
  'spec.serviceAccountName',
  'spec.schedulerName',
  'status.phase',
  'status.hostIP',
  'status.podIP',
  'status.podIPs',
]);

/** pods.ConvertDownwardAPIFieldLabel: the internal field path, or throws with its error text. */
export function convertFieldLabel(apiVersion: string | undefined, label: string): string {
  const version = apiVersion || 'v1';
  if (version !== 'v1') throw new Error(`unsupported pod version: ${version}`);
  const sub = splitSubscriptedPath(label);
  if (sub) {
    if (sub[0] === 'metadata.annotations' || sub[0] === 'metadata.labels') return label;
    throw new Error(`field label does not support subscript: ${label}`);
  }
  if (ENV_FIELDS.has(label)) return label;
  if (label === 'spec.host') return 'spec.nodeName';
  throw new Error(`field label not supported: ${label}`);
}

/** kubelet's podFieldSelectorRuntimeValue (env valueFrom.fieldRef). */
export function podFieldSelectorRuntimeValue(fs: ObjectFieldSelector, pod: Pod, hostIP: string, podIP: string, podIPs: string[]): string {
  const path = convertFieldLabel(fs.apiVersion, fs.fieldPath);
  switch (path) {
    case 'spec.nodeName':
      return pod.spec?.nodeName ?? '';
    case 'spec.serviceAccountName':
      return pod.spec?.serviceAccountName ?? '';
    case 'status.hostIP':
      return hostIP;
    case 'status.podIP':
      return podIP;
    case 'status.podIPs':
      return podIPs.join(',');
  }
  return extractFieldPathAsString(pod, path);
}

type ResourceList = Record<string, string | number>;

/** resource.MergeContainerResourceLimits: unset (or zero) cpu/memory/ephemeral-storage limits default to allocatable. */
export function mergeContainerResourceLimits(container: Container, allocatable: Record<string, string>): Container {
  const limits: ResourceList = { ...((container.resources?.limits ?? {}) as ResourceList) };
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const q = limits[r];
    if (q === undefined || isZero(q)) {
      const cap = allocatable[r];
      if (cap !== undefined) limits[r] = cap;
    }
  }
  return { ...container, resources: { ...(container.resources ?? {}), limits: limits as never } };
}

function q(list: ResourceList | undefined, name: string): Quantity {
  const v = list?.[name];
  return v === undefined ? parseQuantity('0') : toQuantity(v);
}

function ceilDiv(a: number, b: number): string {
  return String(Math.ceil(a / b));
}

function isHugePages(name: string): boolean {
  return name.startsWith('hugepages-');
}

/** resource.ExtractContainerResourceValue. */
export function extractContainerResourceValue(fs: ResourceFieldSelector, container: Container): string {
  const divisor = fs.divisor === undefined || isZero(fs.divisor as string | number) ? parseQuantity('1') : toQuantity(fs.divisor as string | number);
  const limits = container.resources?.limits as ResourceList | undefined;
  const requests = container.resources?.requests as ResourceList | undefined;
  switch (fs.resource) {
    case 'limits.cpu':
      return ceilDiv(milliValue(q(limits, 'cpu')), milliValue(divisor));
    case 'limits.memory':
      return ceilDiv(value(q(limits, 'memory')), value(divisor));
    case 'limits.ephemeral-storage':
      return ceilDiv(value(q(limits, 'ephemeral-storage')), value(divisor));
    case 'requests.cpu':
      return ceilDiv(milliValue(q(requests, 'cpu')), milliValue(divisor));
    case 'requests.memory':
      return ceilDiv(value(q(requests, 'memory')), value(divisor));
    case 'requests.ephemeral-storage':
      return ceilDiv(value(q(requests, 'ephemeral-storage')), value(divisor));
  }
  if (fs.resource.startsWith('requests.') && isHugePages(fs.resource.slice(9))) return ceilDiv(value(q(requests, fs.resource.slice(9))), value(divisor));
  if (fs.resource.startsWith('limits.') && isHugePages(fs.resource.slice(7))) return ceilDiv(value(q(limits, fs.resource.slice(7))), value(divisor));
  throw new Error(`unsupported container resource : ${fs.resource}`);
}

/** findContainerInPod: containers, then init containers. */
export function findContainerInPod(pod: Pod, name: string): Container {
  const c = (pod.spec?.containers ?? []).find((x) => x.name === name) ?? (pod.spec?.initContainers ?? []).find((x) => x.name === name);
  if (!c) throw new Error(`container ${name} not found`);
  return c;
}

/**
 * A resourceFieldRef's value with limits defaulted to the node's allocatable
 * (kubelet's defaultPodLimitsForDownwardAPI + containerResourceRuntimeValue for
 * env, ExtractResourceValueByContainerNameAndNodeAllocatable for volumes).
 * `container` is the container being started (env) or undefined (volumes).
 */
export function resourceFieldValue(fs: ResourceFieldSelector, pod: Pod, container: Container | undefined, allocatable: Record<string, string>): string {
  if (!fs.containerName) {
    if (!container) throw new Error(`container  not found`);
    return extractContainerResourceValue(fs, mergeContainerResourceLimits(container, allocatable));
  }
  const c = findContainerInPod(pod, fs.containerName);
  // kubelet defaults the limits of spec.containers only (not of init containers) for env;
  // volumes default whichever container is named.
  const isInit = container !== undefined && !(pod.spec?.containers ?? []).some((x) => x.name === fs.containerName);
  return extractContainerResourceValue(fs, isInit ? c : mergeContainerResourceLimits(c, allocatable));
}
