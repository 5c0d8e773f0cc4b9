/**
 * A container's environment as kubelet's makeEnvironmentVariables builds it
 * (pkg/kubelet/kubelet_pods.go, v1.20), plus what the container runtime adds.
 *
 * Order of precedence (later wins): service link variables, `envFrom`
 * (configMapRef/secretRef, with prefix; invalid names skipped with an
 * `InvalidEnvironmentVariableNames` warning), `env` (value with `$(VAR)`
 * expansion against the variables defined so far and the service variables;
 * valueFrom fieldRef / resourceFieldRef / configMapKeyRef / secretKeyRef).
 *
 * The runtime (docker/containerd, see `runtimeEnv`) then puts `PATH` first
 * (the image's, default `/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`),
 * `HOSTNAME` (the pod's kernel hostname) unless the pod sets it, and `HOME=/root`
 * when missing (runc sets HOME from the user's passwd entry; containers run as root here).
 */
import type { ConfigMap, Container, Pod, Secret, Service } from 'kubernetes-types/core/v1.js';
import { podFieldSelectorRuntimeValue, resourceFieldValue } from './downward.js';
import { podIPsOf, type NodeFacts, type ObjectSource } from './types.js';

export const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
/** kubelet's masterServiceNamespace. */
export const MASTER_SERVICE_NAMESPACE = 'default';

// ---------------------------------------------------------------------------
// $(VAR) expansion (third_party/forked/golang/expansion)

/** expansion.MappingFuncFor: the first map that has the name wins; unknown names stay `$(NAME)`. */
export function mappingFuncFor(...context: ReadonlyMap<string, string>[]): (name: string) => string {
  return (name) => {
    for (const m of context) {
      const v = m.get(name);
      if (v !== undefined) return v;
    }
    return `$(${name})`;
  };
}

/** expansion.Expand: `$(VAR)` replaced through `mapping`, `$$` -> `$`, anything else left as written. */
export function expand(input: string, mapping: (name: string) => string): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] === '$' && cursor + 1 < input.length) {
      out += input.slice(checkpoint, cursor);
      const rest = input.slice(cursor + 1);
      let advance = 1;
      if (rest[0] === '$') out += '$';
      else if (rest[0] === '(') {
        const close = rest.indexOf(')', 1);
        if (close >= 1) {
          out += mapping(rest.slice(1, close));
          advance = close + 1;
        } else out += '$(';
      } else out += '$' + rest[0];
      cursor += advance;
      checkpoint = cursor + 1;
    }
  }
  return out + input.slice(checkpoint);
}

// ---------------------------------------------------------------------------
// Service links (pkg/kubelet/envvars)

function isServiceIPSet(s: Service): boolean {
  const ip = s.spec?.clusterIP;
  return ip !== undefined && ip !== '' && ip !== 'None';
}

function envName(s: string): string {
  return s.replace(/-/g, '_').toUpperCase();
}

function joinHostPort(host: string, port: number): string {
  return host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
}

/** envvars.FromServices: the variables of each service (with a cluster IP), in order. */
export function fromServices(services: readonly Service[]): [string, string][] {
  const out: [string, string][] = [];
  for (const s of services) {
    if (!isServiceIPSet(s)) continue;
    const ports = s.spec?.ports ?? [];
    if (ports.length === 0) continue; // upstream would index Ports[0]; validation forbids this
    const ip = s.spec!.clusterIP!;
    const prefix = envName(s.metadata?.name ?? '');
    out.push([`${prefix}_SERVICE_HOST`, ip]);
    const portName = `${prefix}_SERVICE_PORT`;
    out.push([portName, String(ports[0]!.port)]);
    for (const sp of ports) if (sp.name) out.push([`${portName}_${envName(sp.name)}`, String(sp.port)]);
    ports.forEach((sp, i) => {
      const proto = sp.protocol || 'TCP';
      const url = `${proto.toLowerCase()}://${joinHostPort(ip, sp.port)}`;
      if (i === 0) out.push([`${prefix}_PORT`, url]);
      const pp = `${prefix}_PORT_${sp.port}_${proto.toUpperCase()}`;
      out.push([pp, url], [`${pp}_PROTO`, proto.toLowerCase()], [`${pp}_PORT`, String(sp.port)], [`${pp}_ADDR`, ip]);
    });
  }
  return out;
}

/**
 * kubelet's getServiceEnvVarMap: the `kubernetes` service of `default` always,
 * the services of the pod's namespace when enableServiceLinks.
 */
export function serviceEnvVars(namespace: string, enableServiceLinks: boolean, src: ObjectSource): Map<string, string> {
  const byName = new Map<string, Service>();
  const all = namespace === MASTER_SERVICE_NAMESPACE ? src.services(namespace) : [...src.services(MASTER_SERVICE_NAMESPACE), ...src.services(namespace)];
  for (const s of all) {
    if (!isServiceIPSet(s)) continue;
    const name = s.metadata?.name ?? '';
    const ns = s.metadata?.namespace ?? '';
    if (ns === MASTER_SERVICE_NAMESPACE && name === 'kubernetes') {
      if (!byName.has(name)) byName.set(name, s);
    } else if (ns === namespace && enableServiceLinks) byName.set(name, s);
  }
  const sorted = [...byName.keys()].sort().map((k) => byName.get(k)!);
  return new Map(fromServices(sorted));
}

// ---------------------------------------------------------------------------

/** validation.IsEnvVarName. */
export function isEnvVarName(k: string): boolean {
  return /^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(k);
}

/** A Secret value (base64 in the object) as the bytes kubelet puts in the environment. */
function secretValue(s: Secret, key: string): string | undefined {
  const v = s.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
}

export interface ContainerEnvResult {
  /** Name -> value: kubelet's variables (envFrom and env in order, then the remaining service variables sorted). */
  env: Record<string, string>;
  /** CreateContainerConfigError's message; `env` is then what was built so far. */
  error?: string;
  /** Warning events (reason InvalidEnvironmentVariableNames) for skipped envFrom keys. */
  warnings: string[];
}

/** kubelet's makeEnvironmentVariables for `container` of `pod`. */
export function containerEnv(pod: Pod, container: Container, src: ObjectSource, node: NodeFacts): ContainerEnvResult {
  const ns = pod.metadata?.namespace ?? '';
  const warnings: string[] = [];
  const serviceEnv = serviceEnvVars(ns, pod.spec?.enableServiceLinks ?? true, src);
  const configMaps = new Map<string, ConfigMap>();
  const secrets = new Map<string, Secret>();
  const tmpEnv = new Map<string, string>();
  const finish = (error?: string): ContainerEnvResult => {
    const env: Record<string, string> = {};
    for (const [k, v] of tmpEnv) env[k] = v;
    for (const k of [...serviceEnv.keys()].sort()) if (!tmpEnv.has(k)) env[k] = serviceEnv.get(k)!;
    return error === undefined ? { env, warnings } : { env, error, warnings };
  };
  const getConfigMap = (name: string): ConfigMap | undefined => {
    let cm = configMaps.get(name);
    if (!cm) {
      cm = src.configMap(ns, name);
      if (cm) configMaps.set(name, cm);
    }
    return cm;
  };
  const getSecret = (name: string): Secret | undefined => {
    let s = secrets.get(name);
    if (!s) {
      s = src.secret(ns, name);
      if (s) secrets.set(name, s);
    }
    return s;
  };

  for (const ef of container.envFrom ?? []) {
    const prefix = ef.prefix ?? '';
    if (ef.configMapRef) {
      const name = ef.configMapRef.name ?? '';
      const cm = getConfigMap(name);
      if (!cm) {
        if (ef.configMapRef.optional) continue;
        return finish(`configmap "${name}" not found`);
      }
      const invalid: string[] = [];
      for (const [k0, v] of Object.entries(cm.data ?? {})) {
        const k = prefix + k0;
        if (!isEnvVarName(k)) invalid.push(k);
        else tmpEnv.set(k, v);
      }
      if (invalid.length > 0) {
        warnings.push(`Keys [${invalid.sort().join(', ')}] from the EnvFrom configMap ${ns}/${name} were skipped since they are considered invalid environment variable names.`);
      }
    } else if (ef.secretRef) {
      const name = ef.secretRef.name ?? '';
      const s = getSecret(name);
      if (!s) {
        if (ef.secretRef.optional) continue;
        return finish(`secret "${name}" not found`);
      }
      const invalid: string[] = [];
      for (const k0 of Object.keys(s.data ?? {})) {
        const k = prefix + k0;
        if (!isEnvVarName(k)) invalid.push(k);
        else tmpEnv.set(k, secretValue(s, k0)!);
      }
      if (invalid.length > 0) {
        warnings.push(`Keys [${invalid.sort().join(', ')}] from the EnvFrom secret ${ns}/${name} were skipped since they are considered invalid environment variable names.`);
      }
    }
  }

  const mapping = mappingFuncFor(tmpEnv, serviceEnv);
  const podIPs = podIPsOf(node);
  for (const ev of container.env ?? []) {
    let val = ev.value ?? '';
    if (val !== '') val = expand(val, mapping);
    else if (ev.valueFrom) {
      const vf = ev.valueFrom;
      try {
        if (vf.fieldRef) {
          val = podFieldSelectorRuntimeValue(vf.fieldRef, pod, node.hostIP, node.podIP, podIPs);
        } else if (vf.resourceFieldRef) {
          val = resourceFieldValue(vf.resourceFieldRef, pod, container, node.allocatable);
        } else if (vf.configMapKeyRef) {
          const { name = '', key, optional } = vf.configMapKeyRef;
          const cm = getConfigMap(name);
          if (!cm) {
            if (optional) continue;
            return finish(`configmap "${name}" not found`);
          }
          const v = cm.data?.[key];
          if (v === undefined) {
            if (optional) continue;
            return finish(`couldn't find key ${key} in ConfigMap ${ns}/${name}`);
          }
          val = v;
        } else if (vf.secretKeyRef) {
          const { name = '', key, optional } = vf.secretKeyRef;
          const s = getSecret(name);
          if (!s) {
            if (optional) continue;
            return finish(`secret "${name}" not found`);
          }
          const v = secretValue(s, key);
          if (v === undefined) {
            if (optional) continue;
            return finish(`couldn't find key ${key} in Secret ${ns}/${name}`);
          }
          val = v;
        }
      } catch (e) {
        return finish(e instanceof Error ? e.message : String(e));
      }
    }
    serviceEnv.delete(ev.name);
    // Re-setting keeps a Map's first insertion position; an env entry should move to its declared place.
    tmpEnv.delete(ev.name);
    tmpEnv.set(ev.name, val);
  }
  return finish();
}

/**
 * What the container runtime adds to kubelet's variables: `PATH` (the image's
 * or the default) unless set, `HOSTNAME` unless set, `HOME=/root` unless set.
 * Returns a new record in the order docker shows them (`PATH`, `HOSTNAME`, the
 * image's variables, kubelet's, `HOME`).
 */
export function runtimeEnv(env: Record<string, string>, opts: { hostname: string; imageEnv?: Record<string, string> }): Record<string, string> {
  const out: Record<string, string> = {};
  out.PATH = env.PATH ?? opts.imageEnv?.PATH ?? DEFAULT_PATH;
  out.HOSTNAME = env.HOSTNAME ?? opts.hostname;
  for (const [k, v] of Object.entries(opts.imageEnv ?? {})) if (!(k in out)) out[k] = v;
  for (const [k, v] of Object.entries(env)) out[k] = v;
  if (!('HOME' in out)) out.HOME = '/root';
  return out;
}
