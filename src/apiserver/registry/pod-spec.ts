/**
 * Pod spec defaulting and validation shared by pods and every pod template
 * (pkg/apis/core/v1/defaults.go SetDefaults_PodSpec / _Container / _Probe /
 * _Volume, and the validatePodSpec part of core validation).
 */
import type { PodSpec, Container, PodTemplateSpec, Probe, Volume } from 'kubernetes-types/core/v1.js';
import { type FieldError, invalid, required, duplicate, notFound, isDNS1123Label, isValidPortName, isValidPortNum } from '../../api/validation.js';
import { oneOf, nonNegative, validateLabels, validateAnnotations } from './meta-validation.js';
import { child, dflt } from './generic.js';
import { compareQuantities, isQuantity } from './quantities.js';

type Obj = Record<string, unknown>;

/** `Always` for `:latest` or untagged images, `IfNotPresent` otherwise (digests included). */
export function defaultImagePullPolicy(image: string): 'Always' | 'IfNotPresent' {
  if (image.includes('@')) return 'IfNotPresent';
  const lastSlash = image.lastIndexOf('/');
  const colon = image.indexOf(':', lastSlash + 1);
  if (colon < 0) return 'Always';
  return image.slice(colon + 1) === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultProbe(p: Probe | undefined): void {
  if (!p) return;
  const o = p as Obj;
  dflt(o, 'timeoutSeconds', 1);
  dflt(o, 'periodSeconds', 10);
  dflt(o, 'successThreshold', 1);
  dflt(o, 'failureThreshold', 3);
  if (p.httpGet) {
    dflt(p.httpGet, 'path', '/');
    dflt(p.httpGet, 'scheme', 'HTTP');
  }
}

function defaultContainer(c: Container, hostNetwork: boolean): void {
  const o = c as unknown as Obj;
  // Upstream parses the image ignoring errors: no (parsable) image gives IfNotPresent.
  if (c.imagePullPolicy === undefined) c.imagePullPolicy = c.image ? defaultImagePullPolicy(c.image) : 'IfNotPresent';
  dflt(o, 'terminationMessagePath', '/dev/termination-log');
  dflt(o, 'terminationMessagePolicy', 'File');
  dflt(o, 'resources', {});
  for (const p of c.ports ?? []) {
    dflt(p, 'protocol', 'TCP');
    if (hostNetwork && p.hostPort === undefined) p.hostPort = p.containerPort;
  }
  for (const e of c.env ?? []) {
    if (e.valueFrom?.fieldRef) dflt(e.valueFrom.fieldRef, 'apiVersion', 'v1');
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
}

function defaultVolume(v: Volume): void {
  const sources = Object.keys(v).filter((k) => k !== 'name');
  if (sources.length === 0) (v as unknown as Obj).emptyDir = {};
  if (v.secret) dflt(v.secret, 'defaultMode', 420);
  if (v.configMap) dflt(v.configMap, 'defaultMode', 420);
  if (v.downwardAPI) dflt(v.downwardAPI, 'defaultMode', 420);
  if (v.projected) dflt(v.projected, 'defaultMode', 420);
  if (v.hostPath) dflt(v.hostPath, 'type', '');
}

/** SetDefaults_PodSpec and its containers, volumes and probes. Mutates spec. */
export function defaultPodSpec(spec: PodSpec): void {
  const o = spec as unknown as Obj;
  dflt(o, 'dnsPolicy', 'ClusterFirst');
  dflt(o, 'restartPolicy', 'Always');
  dflt(o, 'terminationGracePeriodSeconds', 30);
  dflt(o, 'securityContext', {});
  dflt(o, 'schedulerName', 'default-scheduler');
  const hostNetwork = spec.hostNetwork === true;
  for (const c of spec.initContainers ?? []) defaultContainer(c, hostNetwork);
  for (const c of spec.containers ?? []) defaultContainer(c, hostNetwork);
  for (const v of spec.volumes ?? []) defaultVolume(v);
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
