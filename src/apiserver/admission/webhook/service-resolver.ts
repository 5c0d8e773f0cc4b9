/**
 * Where a webhook's `service` reference points: kube-apiserver with
 * `--enable-aggregator-routing` dials a ready endpoint of the Service
 * rather than its cluster IP (apiserver pkg/util/proxy ResolveEndpoint):
 * the Service must exist with type ClusterIP, NodePort or LoadBalancer and
 * have the port; the address is a ready endpoint of its EndpointSlices
 * (`kubernetes.io/service-name`), or of its Endpoints when it has no
 * slices, on the endpoint port named as the service port. So a selectorless
 * Service with an EndpointSlice at 127.0.0.1 reaches a process on the host.
 */
import type { Endpoints, Service, ServicePort } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import type { ObjectLister, ObjectReader } from '../admission.js';
import { newStatus, StatusError } from '../../../client/errors.js';

export interface ResolvedEndpoint {
  ip: string;
  port: number;
}

export interface ServiceResolver {
  resolve(namespace: string, name: string, port: number): Promise<ResolvedEndpoint>;
}

function serviceUnavailable(message: string): StatusError {
  return new StatusError(newStatus(503, 'ServiceUnavailable', message));
}

function notFound(resource: string, name: string): StatusError {
  // Listers word it with the singular resource for services (`service "x" not found`).
  if (resource === 'services') resource = 'service';
  return new StatusError(newStatus(404, 'NotFound', `${resource} "${name}" not found`, { name, kind: resource }));
}

function pick<T>(xs: readonly T[]): T {
  return xs[Math.floor(Math.random() * xs.length)]!;
}

/** Resolves through the server's own objects (Service, EndpointSlices, Endpoints). */
export function newEndpointServiceResolver(reader: ObjectReader, lister: ObjectLister): ServiceResolver {
  return {
    async resolve(namespace, name, port) {
      const svc = (await reader.get('', 'services', namespace, name)) as (Service & { metadata?: { name?: string } }) | undefined;
      if (!svc) throw notFound('services', name);
      const type = svc.spec?.type ?? 'ClusterIP';
      if (type !== 'ClusterIP' && type !== 'LoadBalancer' && type !== 'NodePort') throw new Error(`unsupported service type ${JSON.stringify(type)}`);
      const svcPort: ServicePort | undefined = (svc.spec?.ports ?? []).find((p) => p.port === port);
      if (!svcPort) throw serviceUnavailable(`no service port ${port} found for service ${JSON.stringify(name)}`);
      const portName = svcPort.name ?? '';
      const slices = ((await lister.list('discovery.k8s.io', 'endpointslices', namespace)) ?? []).filter(
        (s) => s.metadata?.labels?.['kubernetes.io/service-name'] === name,
      ) as unknown as EndpointSlice[];
      if (slices.length > 0) {
        const candidates: ResolvedEndpoint[] = [];
        for (const slice of slices) {
          const p = (slice.ports ?? []).find((x) => (x.name ?? '') === portName);
          if (!p || p.port === undefined || p.port === null) continue;
          for (const ep of slice.endpoints ?? []) {
            if (ep.conditions?.ready === false) continue;
            for (const ip of ep.addresses ?? []) candidates.push({ ip, port: p.port });
          }
        }
        if (candidates.length === 0) throw serviceUnavailable(`no endpoints available for service ${JSON.stringify(name)}`);
        return pick(candidates);
      }
      const eps = (await reader.get('', 'endpoints', namespace, name)) as Endpoints | undefined;
      if (!eps) throw notFound('endpoints', name);
      const subsets = eps.subsets ?? [];
      if (subsets.length === 0) throw serviceUnavailable(`no endpoints available for service ${JSON.stringify(name)}`);
      const seed = Math.floor(Math.random() * subsets.length);
      for (let i = 0; i < subsets.length; i++) {
        const ss = subsets[(seed + i) % subsets.length]!;
        if (!ss.addresses?.length) continue;
        const p = (ss.ports ?? []).find((x) => (x.name ?? '') === portName);
        if (p) return { ip: pick(ss.addresses).ip, port: p.port };
      }
      throw serviceUnavailable(`no endpoints available for service ${JSON.stringify(name)}`);
    },
  };
}
