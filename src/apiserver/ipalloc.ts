/**
 * Service ClusterIP and NodePort allocation (pkg/registry/core/service/
 * ipallocator and portallocator). IPv4 only. The first address of the range
 * is the `kubernetes` service's; dynamic IPs come from the upper band of the
 * range first, as upstream, so static picks in the lower band rarely clash.
 * Allocations are rebuilt from stored Services at start.
 */
import type { Service } from 'kubernetes-types/core/v1.js';
import type { KubeObject } from '../api/types.js';
import { formatIPv4, parseIPv4 } from '../util/net/ip.js';
import type { WriteHooks } from './store.js';
import { invalid, type FieldErrorLike } from './status.js';

export interface IpRange {
  /** Network address as a 32-bit number. */
  base: number;
  /** Number of addresses in the CIDR. */
  size: number;
  cidr: string;
}

export function parseCidr(cidr: string): IpRange {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(cidr.trim());
  if (!m) throw new Error(`invalid service CIDR ${JSON.stringify(cidr)} (IPv4 only)`);
  const bits = Number(m[5]);
  if (bits < 8 || bits > 30) throw new Error(`service CIDR ${cidr} must have a prefix between /8 and /30`);
  const ip = parseIPv4(`${m[1]}.${m[2]}.${m[3]}.${m[4]}`)!;
  const size = 2 ** (32 - bits);
  return { base: ip - (ip % size), size, cidr };
}

/** The n-th usable address (1 = first after the network address). */
export function nthIp(r: IpRange, n: number): string {
  return formatIPv4(r.base + n);
}

export interface ServiceAllocators {
  readonly range: IpRange;
  readonly portRange: { min: number; max: number };
  /** Marks the IP and node ports of an existing Service as used. */
  restore(svc: KubeObject): void;
  allocatedIps(): number;
  allocatedPorts(): number;
  hooks: WriteHooks;
}

function gvkInvalid(svc: Service, errs: FieldErrorLike[]) {
  return invalid('', 'Service', svc.metadata?.name ?? '', errs);
}

function needsNodePorts(type: string | undefined): boolean {
  return type === 'NodePort' || type === 'LoadBalancer';
}

export function newServiceAllocators(opts: { serviceClusterIPRange?: string; serviceNodePortRange?: string; random?: () => number } = {}): ServiceAllocators {
  const range = parseCidr(opts.serviceClusterIPRange ?? '10.0.0.0/24');
  const [pmin, pmax] = (opts.serviceNodePortRange ?? '30000-32767').split('-').map(Number) as [number, number];
  if (!Number.isInteger(pmin) || !Number.isInteger(pmax) || pmin > pmax) throw new Error(`invalid service node port range ${opts.serviceNodePortRange}`);
  const rnd = opts.random ?? Math.random;
  const ips = new Set<number>(); // offsets from base
  const ports = new Set<number>();
  const usable = range.size - 2; // without network and broadcast
  const bandOffset = Math.min(Math.max(16, Math.floor(usable / 16)), 256);

  function ipOffset(ip: string): number | undefined {
    const n = parseIPv4(ip);
    if (n === undefined) return undefined;
    const off = n - range.base;
    return off >= 1 && off <= usable ? off : undefined;
  }

  function pickIp(): number | undefined {
    const bands: [number, number][] = usable > bandOffset ? [[bandOffset + 1, usable], [1, bandOffset]] : [[1, usable]];
    for (const [lo, hi] of bands) {
      const n = hi - lo + 1;
      const start = Math.floor(rnd() * n);
      for (let i = 0; i < n; i++) {
        const off = lo + ((start + i) % n);
        if (!ips.has(off)) return off;
      }
    }
    return undefined;
  }

  function pickPort(): number | undefined {
    const n = pmax - pmin + 1;
    const start = Math.floor(rnd() * n);
    for (let i = 0; i < n; i++) {
      const p = pmin + ((start + i) % n);
      if (!ports.has(p)) return p;
    }
    return undefined;
  }

  /** Allocates the IP and ports `svc` asks for (mutating it); returns what it reserved. */
  function allocate(svc: Service, reserve: boolean, oldPorts: Set<number> = new Set()): { ip?: number; ports: number[] } {
    const spec = (svc.spec ??= {});
    const got: { ip?: number; ports: number[] } = { ports: [] };
    const errs: FieldErrorLike[] = [];
    const requested = spec.clusterIP || spec.clusterIPs?.[0] || '';
    if (spec.type !== 'ExternalName' && requested !== 'None') {
      let off: number | undefined;
      if (requested) {
        off = ipOffset(requested);
        if (off === undefined) {
          errs.push({ type: 'FieldValueInvalid', field: 'spec.clusterIPs', message: `spec.clusterIPs: Invalid value: []string{"${requested}"}: failed to allocate IP ${requested}: the provided IP (${requested}) is not in the valid range. The range of valid IPs is ${range.cidr}` });
        } else if (ips.has(off)) {
          errs.push({ type: 'FieldValueInvalid', field: 'spec.clusterIPs', message: `spec.clusterIPs: Invalid value: []string{"${requested}"}: failed to allocate IP ${requested}: provided IP is already allocated` });
        }
      } else {
        off = pickIp();
        if (off === undefined) errs.push({ type: 'FieldValueInvalid', field: 'spec.clusterIPs', message: `spec.clusterIPs: Internal error: failed to allocate a serviceIP: range is full` });
      }
      if (off !== undefined && !errs.length) {
        got.ip = off;
        spec.clusterIP = nthIp(range, off);
        spec.clusterIPs = [spec.clusterIP];
        spec.ipFamilies ??= ['IPv4'];
        spec.ipFamilyPolicy ??= 'SingleStack';
      }
    } else if (requested === 'None') {
      spec.clusterIP = 'None';
      spec.clusterIPs = ['None'];
    }
    if (needsNodePorts(spec.type)) {
      const seen = new Set<number>();
      (spec.ports ?? []).forEach((p, i) => {
        if (p.nodePort) {
          const fld = `spec.ports[${i}].nodePort`;
          if (p.nodePort < pmin || p.nodePort > pmax) {
            errs.push({ type: 'FieldValueInvalid', field: fld, message: `${fld}: Invalid value: ${p.nodePort}: provided port is not in the valid range. The range of valid ports is ${pmin}-${pmax}` });
          } else if ((ports.has(p.nodePort) && !oldPorts.has(p.nodePort)) || (seen.has(p.nodePort) && !oldPorts.has(p.nodePort))) {
            errs.push({ type: 'FieldValueInvalid', field: fld, message: `${fld}: Invalid value: ${p.nodePort}: provided port is already allocated` });
          } else if (!oldPorts.has(p.nodePort)) {
            got.ports.push(p.nodePort);
            ports.add(p.nodePort);
          }
          seen.add(p.nodePort);
        } else {
          const port = pickPort();
          if (port === undefined) errs.push({ type: 'FieldValueInvalid', field: `spec.ports[${i}].nodePort`, message: `spec.ports[${i}].nodePort: Internal error: failed to allocate a nodePort: range is full` });
          else {
            p.nodePort = port;
            got.ports.push(port);
            ports.add(port);
          }
        }
      });
    }
    if (errs.length || !reserve) {
      for (const p of got.ports) ports.delete(p);
      if (errs.length) throw gvkInvalid(svc, errs);
      return { ports: [] };
    }
    if (got.ip !== undefined) ips.add(got.ip);
    return got;
  }

  function releaseAll(svc: Service): void {
    const ip = svc.spec?.clusterIP;
    if (ip && ip !== 'None') {
      const off = ipOffset(ip);
      if (off !== undefined) ips.delete(off);
    }
    for (const p of svc.spec?.ports ?? []) if (p.nodePort) ports.delete(p.nodePort);
  }

  const hooks: WriteHooks = {
    beforeCreate(obj, dryRun) {
      allocate(obj as Service, !dryRun);
    },
    createFailed(obj) {
      releaseAll(obj as Service);
    },
    beforeUpdate(obj, old, dryRun) {
      const svc = obj as Service;
      const prev = old as Service;
      svc.spec ??= {};
      // The IP is immutable; an update that omits it keeps the old one (an ExternalName service has none).
      if (svc.spec.type !== 'ExternalName' && !svc.spec.clusterIP && prev.spec?.clusterIP) {
        svc.spec.clusterIP = prev.spec.clusterIP;
        svc.spec.clusterIPs = prev.spec.clusterIPs ?? [prev.spec.clusterIP];
      }
      const oldPorts = new Set((prev.spec?.ports ?? []).map((p) => p.nodePort).filter((p): p is number => !!p));
      if (!needsNodePorts(svc.spec.type)) {
        for (const p of svc.spec.ports ?? []) delete p.nodePort;
      } else {
        // Keep node ports of ports that still exist when the update omits them.
        for (const p of svc.spec.ports ?? []) {
          if (p.nodePort) continue;
          const same = (prev.spec?.ports ?? []).find((q) => q.port === p.port && (q.protocol ?? 'TCP') === (p.protocol ?? 'TCP'));
          if (same?.nodePort && needsNodePorts(prev.spec?.type)) p.nodePort = same.nodePort;
        }
      }
      const hadIP = prev.spec?.type !== 'ExternalName' ? prev.spec?.clusterIP : undefined;
      if (svc.spec.type !== 'ExternalName' && !svc.spec.clusterIP) {
        // A type change from ExternalName: a cluster IP (and node ports) as on create.
        allocate(svc, !dryRun, oldPorts);
      } else if (needsNodePorts(svc.spec.type)) {
        const saved = { clusterIP: svc.spec.clusterIP, clusterIPs: svc.spec.clusterIPs };
        // Only ports are (re)allocated on update: pretend the IP is headless for allocate().
        const probe: Service = { ...svc, spec: { ...svc.spec, clusterIP: 'None', clusterIPs: ['None'], ports: svc.spec.ports } };
        allocate(probe, !dryRun, oldPorts);
        svc.spec.ports = probe.spec!.ports;
        svc.spec.clusterIP = saved.clusterIP;
        svc.spec.clusterIPs = saved.clusterIPs;
      }
      if (!dryRun && hadIP && hadIP !== 'None' && svc.spec.clusterIP !== hadIP) {
        // A type change to ExternalName gave the IP up.
        const off = ipOffset(hadIP);
        if (off !== undefined) ips.delete(off);
      }
      if (!dryRun) {
        const now = new Set((svc.spec.ports ?? []).map((p) => p.nodePort).filter((p): p is number => !!p));
        for (const p of oldPorts) if (!now.has(p)) ports.delete(p);
      }
    },
    afterDelete(obj) {
      releaseAll(obj as Service);
    },
  };

  return {
    range,
    portRange: { min: pmin, max: pmax },
    restore(obj) {
      const svc = obj as Service;
      const ip = svc.spec?.clusterIP;
      if (ip && ip !== 'None') {
        const off = ipOffset(ip);
        if (off !== undefined) ips.add(off);
      }
      for (const p of svc.spec?.ports ?? []) if (p.nodePort) ports.add(p.nodePort);
    },
    allocatedIps: () => ips.size,
    allocatedPorts: () => ports.size,
    hooks,
  };
}
