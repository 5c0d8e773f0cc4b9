/**
 * Pod spec defaulting and validation shared by pods and every pod template
 * (pkg/apis/core/v1/defaults.go SetDefaults_PodSpec / _Container / _Probe /
 * _Volume, and the validatePodSpec part of core validation).
 */
import type { PodSpec, Container, PodTemplateSpec } from 'kubernetes-types/core/v1.js';
import { type FieldError, invalid, required, duplicate, notFound, isDNS1123Label, isValidPortName, isValidPortNum } from '../../api/validation.js';
import { oneOf, nonNegative, validateLabels, validateAnnotations } from './meta-validation.js';
import { child, dflt, dfltZero, items, objAt } from './generic.js';
import { compareQuantities, isQuantity, roundUpResourceList } from './quantities.js';

type Obj = Record<string, unknown>;

const pathComponent = '[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*';
const domainComponent = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const domain = `(?:${domainComponent}(?:\\.${domainComponent})*|\\[[a-fA-F0-9:]+\\])(?::[0-9]+)?`;
const referenceRe = new RegExp(
  `^((?:${domain}/)?${pathComponent}(?:/${pathComponent})*)(?::([\\w][\\w.-]{0,127}))?(?:@([A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-zA-Z]+))?$`,
);
const digestLengths: Record<string, number> = { sha256: 64, sha384: 96, sha512: 128 };

/**
 * The tag parsers.ParseImageName finds in an image reference (docker's
 * ParseNormalizedNamed): the written tag, `latest` when there is neither a
 * tag nor a digest, '' with only a digest; undefined when the reference does
 * not parse (upper case, bad digest, ...).
 */
export function imageTag(image: string): string | undefined {
  if (/^[a-f0-9]{64}$/.test(image)) return undefined;
  const m = referenceRe.exec(image);
  if (!m || m[1]!.length > 255) return undefined;
  const [, , tag, digest] = m;
  if (digest !== undefined) {
    const [alg, hex] = digest.split(':') as [string, string];
    if (digestLengths[alg] !== hex.length || !/^[a-f0-9]+$/.test(hex)) return undefined;
  }
  if (tag !== undefined) return tag;
  return digest !== undefined ? '' : 'latest';
}

/** SetDefaults_Container's pull policy: `Always` for a `latest` tag (written or implied), else `IfNotPresent` (unparsable images too). */
export function defaultImagePullPolicy(image: string): 'Always' | 'IfNotPresent' {
  return imageTag(image) === 'latest' ? 'Always' : 'IfNotPresent';
}

/** SetDefaults_HTTPGetAction. */
function defaultHTTPGet(h: unknown): void {
  if (!h || typeof h !== 'object') return;
  dfltZero(h, 'path', '/');
  dfltZero(h, 'scheme', 'HTTP');
}

/** SetDefaults_Probe plus its handler's defaults (httpGet; grpc.service `""` from the +default marker). */
function defaultProbe(p: unknown): void {
  if (!p || typeof p !== 'object') return;
  dfltZero(p, 'timeoutSeconds', 1);
  dfltZero(p, 'periodSeconds', 10);
  dfltZero(p, 'successThreshold', 1);
  dfltZero(p, 'failureThreshold', 3);
  defaultHTTPGet(objAt(p, 'httpGet'));
  const grpc = objAt(p, 'grpc');
  if (grpc) dflt(grpc, 'service', '');
}

/** SetDefaults_Container (and the ephemeral containers' common part) with its ports, env, probes and lifecycle hooks. */
function defaultContainer(c: Obj): void {
  if (c.imagePullPolicy === undefined || c.imagePullPolicy === null || c.imagePullPolicy === '') {
    // Upstream parses the image ignoring errors: no (parsable) image gives IfNotPresent.
    c.imagePullPolicy = typeof c.image === 'string' ? defaultImagePullPolicy(c.image) : 'IfNotPresent';
  }
  dfltZero(c, 'terminationMessagePath', '/dev/termination-log');
  dfltZero(c, 'terminationMessagePolicy', 'File');
  dflt(c, 'resources', {});
  for (const p of items(c, 'ports')) dfltZero(p, 'protocol', 'TCP');
  for (const e of items(c, 'env')) {
    const from = objAt(e, 'valueFrom');
    const fieldRef = objAt(from, 'fieldRef');
    if (fieldRef) dfltZero(fieldRef, 'apiVersion', 'v1');
    const fileKeyRef = objAt(from, 'fileKeyRef');
    if (fileKeyRef) dflt(fileKeyRef, 'optional', false);
  }
  const res = objAt(c, 'resources');
  roundUpResourceList(objAt(res, 'limits'));
  roundUpResourceList(objAt(res, 'requests'));
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
  const lifecycle = objAt(c, 'lifecycle');
  defaultHTTPGet(objAt(objAt(lifecycle, 'postStart'), 'httpGet'));
  defaultHTTPGet(objAt(objAt(lifecycle, 'preStop'), 'httpGet'));
}

function defaultFieldRefs(downwardAPI: Obj | undefined): void {
  for (const item of items(downwardAPI, 'items')) {
    const ref = objAt(item, 'fieldRef');
    if (ref) dfltZero(ref, 'apiVersion', 'v1');
  }
}

/** SetDefaults_PersistentVolumeClaimSpec (claims, claim templates, ephemeral volumes). */
export function defaultPVCSpec(spec: Obj): void {
  dflt(spec, 'volumeMode', 'Filesystem');
  const res = objAt(spec, 'resources');
  roundUpResourceList(objAt(res, 'limits'));
  roundUpResourceList(objAt(res, 'requests'));
}

/**
 * The defaults of the volume sources a pod volume and a PersistentVolume
 * share: hostPath type, the +default markers of iscsi, rbd, azureDisk and
 * scaleIO.
 */
export function defaultVolumeSource(src: Obj): void {
  const hostPath = objAt(src, 'hostPath');
  if (hostPath) dflt(hostPath, 'type', '');
  const iscsi = objAt(src, 'iscsi');
  if (iscsi) dfltZero(iscsi, 'iscsiInterface', 'default');
  const rbd = objAt(src, 'rbd');
  if (rbd) {
    dfltZero(rbd, 'pool', 'rbd');
    dfltZero(rbd, 'user', 'admin');
    dfltZero(rbd, 'keyring', '/etc/ceph/keyring');
  }
  const azureDisk = objAt(src, 'azureDisk');
  if (azureDisk) {
    dflt(azureDisk, 'cachingMode', 'ReadWrite');
    dflt(azureDisk, 'fsType', 'ext4');
    dflt(azureDisk, 'readOnly', false);
    dflt(azureDisk, 'kind', 'Shared');
  }
  const scaleIO = objAt(src, 'scaleIO');
  if (scaleIO) {
    dfltZero(scaleIO, 'storageMode', 'ThinProvisioned');
    dfltZero(scaleIO, 'fsType', 'xfs');
  }
}

/** SetDefaults_Volume and the defaults of its source. */
function defaultVolume(v: Obj): void {
  const sources = Object.keys(v).filter((k) => k !== 'name' && v[k] !== undefined && v[k] !== null);
  if (sources.length === 0) v.emptyDir = {};
  defaultVolumeSource(v);
  for (const k of ['secret', 'configMap', 'downwardAPI', 'projected']) {
    const src = objAt(v, k);
    if (src) dflt(src, 'defaultMode', 420);
  }
  defaultFieldRefs(objAt(v, 'downwardAPI'));
  for (const source of items(objAt(v, 'projected'), 'sources')) {
    defaultFieldRefs(objAt(source, 'downwardAPI'));
    const token = objAt(source, 'serviceAccountToken');
    if (token) dflt(token, 'expirationSeconds', 3600);
  }
  const claim = objAt(objAt(v, 'ephemeral'), 'volumeClaimTemplate');
  if (claim) defaultPVCSpec(child(claim, 'spec'));
  const image = objAt(v, 'image');
  if (image && (image.pullPolicy === undefined || image.pullPolicy === null || image.pullPolicy === '')) {
    image.pullPolicy = typeof image.reference === 'string' && imageTag(image.reference) === 'latest' ? 'Always' : 'IfNotPresent';
  }
}

/**
 * SetDefaults_PodSpec with its containers, volumes and probes: what every
 * pod template gets. Pod-only defaults (requests from limits, service links,
 * host-network ports) are in pods.ts. Mutates spec.
 */
export function defaultPodSpec(spec: PodSpec): void {
  const o = spec as unknown as Obj;
  dfltZero(o, 'dnsPolicy', 'ClusterFirst');
  dfltZero(o, 'restartPolicy', 'Always');
  dflt(o, 'securityContext', {});
  dflt(o, 'terminationGracePeriodSeconds', 30);
  dfltZero(o, 'schedulerName', 'default-scheduler');
  for (const v of items(o, 'volumes')) defaultVolume(v);
  for (const c of items(o, 'initContainers')) defaultContainer(c);
  for (const c of items(o, 'containers')) defaultContainer(c);
  for (const c of items(o, 'ephemeralContainers')) defaultContainer(c);
  roundUpResourceList(o.overhead);
  const res = objAt(o, 'resources');
  roundUpResourceList(objAt(res, 'limits'));
  roundUpResourceList(objAt(res, 'requests'));
}

/** Defaults of a pod template (spec only; pods get their pod-only defaults in pods.ts). */
export function defaultPodTemplate(t: PodTemplateSpec | undefined): void {
  if (!t) return;
  defaultPodSpec(child(t, 'spec') as unknown as PodSpec);
}

const restartPolicies = ['Always', 'OnFailure', 'Never'];
const dnsPolicies = ['ClusterFirstWithHostNet', 'ClusterFirst', 'Default', 'None'];
const pullPolicies = ['Always', 'IfNotPresent', 'Never'];
const messagePolicies = ['File', 'FallbackToLogsOnError'];
const protocols = ['TCP', 'UDP', 'SCTP'];

function validateResources(c: Container, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const limits = (c.resources?.limits ?? {}) as Record<string, string>;
  const requests = (c.resources?.requests ?? {}) as Record<string, string>;
  for (const [kind, list] of [['limits', limits], ['requests', requests]] as const) {
    for (const [name, q] of Object.entries(list)) {
      const p = `${path}.resources.${kind}[${name}]`;
      if (!isQuantity(String(q))) errs.push(invalid(p, q, 'must be a valid quantity'));
      else if (compareQuantities(String(q), '0') < 0) errs.push(invalid(p, String(q), 'must be greater than or equal to 0'));
    }
  }
  for (const [name, q] of Object.entries(requests)) {
    const lim = limits[name];
    if (lim === undefined || !isQuantity(String(q)) || !isQuantity(String(lim))) continue;
    if (compareQuantities(String(q), String(lim)) > 0) {
      errs.push(invalid(`${path}.resources.requests[${name}]`, String(q), `must be less than or equal to ${name} limit of ${lim}`));
    }
  }
  return errs;
}

function validateContainers(list: Container[], path: string, names: Set<string>, volumes: Set<string>): FieldError[] {
  const errs: FieldError[] = [];
  for (const [i, c] of list.entries()) {
    const p = `${path}[${i}]`;
    if (!c.name) errs.push(required(`${p}.name`, ''));
    else {
      for (const m of isDNS1123Label(c.name)) errs.push(invalid(`${p}.name`, c.name, m));
      if (names.has(c.name)) errs.push(duplicate(`${p}.name`, c.name));
      names.add(c.name);
    }
    if (!c.image) errs.push(required(`${p}.image`, ''));
    errs.push(...oneOf(c.imagePullPolicy, pullPolicies, `${p}.imagePullPolicy`));
    errs.push(...oneOf(c.terminationMessagePolicy, messagePolicies, `${p}.terminationMessagePolicy`));
    const portNames = new Set<string>();
    for (const [j, port] of (c.ports ?? []).entries()) {
      const pp = `${p}.ports[${j}]`;
      if (port.name) {
        for (const m of isValidPortName(port.name)) errs.push(invalid(`${pp}.name`, port.name, m));
        if (portNames.has(port.name)) errs.push(duplicate(`${pp}.name`, port.name));
        portNames.add(port.name);
      }
      if (port.containerPort === undefined || port.containerPort === 0) errs.push(required(`${pp}.containerPort`, ''));
      else for (const m of isValidPortNum(port.containerPort)) errs.push(invalid(`${pp}.containerPort`, port.containerPort, m));
      if (port.hostPort) for (const m of isValidPortNum(port.hostPort)) errs.push(invalid(`${pp}.hostPort`, port.hostPort, m));
      errs.push(...oneOf(port.protocol, protocols, `${pp}.protocol`));
    }
    for (const [j, vm] of (c.volumeMounts ?? []).entries()) {
      const vp = `${p}.volumeMounts[${j}]`;
      if (!vm.name) errs.push(required(`${vp}.name`, ''));
      else if (!volumes.has(vm.name)) errs.push(notFound(`${vp}.name`, vm.name));
      if (!vm.mountPath) errs.push(required(`${vp}.mountPath`, ''));
    }
    errs.push(...validateResources(c, p));
  }
  return errs;
}

/** validatePodSpec: containers, volumes, policies. `path` is `spec` or `spec.template.spec`. */
export function validatePodSpec(spec: PodSpec | undefined, path: string): FieldError[] {
  if (!spec) return [required(path, '')];
  const errs: FieldError[] = [];
  const volumes = new Set<string>();
  for (const [i, v] of (spec.volumes ?? []).entries()) {
    const p = `${path}.volumes[${i}].name`;
    if (!v.name) errs.push(required(p, ''));
    else {
      for (const m of isDNS1123Label(v.name)) errs.push(invalid(p, v.name, m));
      if (volumes.has(v.name)) errs.push(duplicate(p, v.name));
      volumes.add(v.name);
    }
  }
  const names = new Set<string>();
  if (!spec.containers?.length) errs.push(required(`${path}.containers`, ''));
  else errs.push(...validateContainers(spec.containers, `${path}.containers`, names, volumes));
  errs.push(...validateContainers(spec.initContainers ?? [], `${path}.initContainers`, names, volumes));
  errs.push(...oneOf(spec.restartPolicy, restartPolicies, `${path}.restartPolicy`));
  errs.push(...oneOf(spec.dnsPolicy, dnsPolicies, `${path}.dnsPolicy`));
  errs.push(...nonNegative(spec.terminationGracePeriodSeconds, `${path}.terminationGracePeriodSeconds`));
  if (spec.activeDeadlineSeconds !== undefined && (spec.activeDeadlineSeconds < 1 || spec.activeDeadlineSeconds > 2147483647)) {
    errs.push(invalid(`${path}.activeDeadlineSeconds`, spec.activeDeadlineSeconds, 'must be between 1 and 2147483647, inclusive'));
  }
  if (spec.nodeSelector) errs.push(...validateLabels(spec.nodeSelector, `${path}.nodeSelector`));
  return errs;
}

/**
 * ValidatePodTemplateSpec for workloads: labels, annotations, spec, and the
 * allowed restart policies (`Always` for apps kinds, `OnFailure`/`Never` for jobs).
 */
export function validatePodTemplate(t: PodTemplateSpec | undefined, path: string, restartPolicies?: string[]): FieldError[] {
  if (!t) return [required(path, '')];
  const errs: FieldError[] = [
    ...validateLabels(t.metadata?.labels, `${path}.metadata.labels`),
    ...validateAnnotations(t.metadata?.annotations, `${path}.metadata.annotations`),
    ...validatePodSpec(t.spec, `${path}.spec`),
  ];
  const rp = t.spec?.restartPolicy;
  if (restartPolicies && rp && !errs.some((e) => e.field === `${path}.spec.restartPolicy`) && !restartPolicies.includes(rp)) {
    errs.push(...oneOf(rp, restartPolicies, `${path}.spec.restartPolicy`));
  }
  return errs;
}
