/**
 * createApiHandler: the embedded API server as a plain Node request
 * listener. The serving layer (TLS, authentication) wraps it and passes the
 * authenticated user; tests wrap it in a node:http server on port 0.
 *
 * At start it rebuilds service allocations from storage and creates what
 * kube-apiserver bootstraps: the system namespaces, the system priority
 * classes, the `default/kubernetes` Service (ClusterIP = first address of
 * the range) and, given the client CA, the ConfigMap
 * kube-system/extension-apiserver-authentication (`client-ca-file`, as the
 * cluster-authentication-trust controller writes it; components read it for
 * their delegated authentication). `setServingEndpoint` points that
 * Service's Endpoints and EndpointSlice at the serving address once it is
 * known.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Endpoints, Service } from 'kubernetes-types/core/v1.js';
import type { EndpointSlice } from 'kubernetes-types/discovery/v1.js';
import type { KubeObject } from '../api/types.js';
import { realClock, type Clock } from '../util/clock/clock.js';
import { newLogger, type Logger } from '../util/log/logger.js';
import type { Storage } from './storage/storage.js';
import { newResourceTable, type ResourceTable } from './resources.js';
import { Store, storagePrefix, type WriteHooks } from './store.js';
import { newApiMetrics, type ApiMetrics } from './metrics.js';
import { newServiceAllocators, nthIp, type ServiceAllocators } from './ipalloc.js';
import type { ServerAuth, ServerContext } from './context.js';
import type { UserInfo } from './request-info.js';
import { openApiOf, requestTargetOf, route, type HealthCheck } from './router.js';
import { installCustomResources } from './crd/install.js';
import { newAdmissionChain, type AdmissionPlugin, type ObjectLister, type ObjectReader } from './admission/admission.js';
import { newLimitRanger } from './admission/limit-ranger.js';
import { newResourceQuotaAdmission } from './admission/resource-quota.js';
import { newNamespaceLifecycle } from './admission/namespace-lifecycle.js';
import { newServiceAccountAdmission } from './admission/service-account.js';
import { newDefaultTolerationSeconds } from './admission/default-toleration-seconds.js';
import { newPriorityAdmission, systemPriorityClasses } from './admission/priority.js';
import { newTaintNodesByCondition } from './admission/taint-nodes-by-condition.js';
import { newStorageObjectInUseProtection } from './admission/storage-object-in-use-protection.js';
import { newDefaultStorageClass } from './admission/default-storage-class.js';
import { newPersistentVolumeClaimResize } from './admission/persistent-volume-claim-resize.js';
import { startWebhookAdmission } from './admission/webhook/webhook-admission.js';
import { installMatchConditionEngine } from './admission/match-condition-engine.js';
import { startPolicyAdmission } from './admission/policy/plugin.js';
import { systemNamespaces } from './namespaces.js';
import {
  bootstrapClusterRoleBindings,
  bootstrapClusterRoles,
  bootstrapNamespaceRoleBindings,
  bootstrapNamespaceRoles,
  forbiddenError,
  newRbacAuthorizer,
  type Authorizer,
} from './authz/index.js';
import { headerLists, impersonatedUser } from './authz/impersonation.js';
import { writeStatus } from './output.js';
import { isAlreadyExists, StatusError } from '../client/errors.js';
import { methodNotAllowed } from './status.js';
import type { ResourceMetricsSource } from './metrics-api/types.js';
import { logLocation, streamLogOverWebSocket, spliceUpgrade, statusOf, streamLocation, proxyRestPath, writeStatusToSocket, type KubeletClientConfig } from './handlers/node-proxy.js';
import { proxyTarget } from './handlers/subresources.js';
import { metricsResources, METRICS_RESOURCES_OWNER } from './metrics-api/resources.js';
import { deepCopy } from '../util/json/deep-copy.js';

export interface ApiHandlerOptions {
  storage: Storage;
  clock?: Clock;
  /** kube-apiserver --service-cluster-ip-range (default 10.0.0.0/24). */
  serviceClusterIPRange?: string;
  /** kube-apiserver --service-node-port-range (default 30000-32767). */
  serviceNodePortRange?: string;
  logger?: Logger;
  /** Watches time out after this many seconds times a random factor in [1, 2) (--min-request-timeout, default 1800). */
  minRequestTimeoutSeconds?: number;
  /** Watch bookmark period (default 60 s). */
  bookmarkIntervalMs?: number;
  /** Replaces the default admission plugins (NamespaceLifecycle, LimitRanger, ServiceAccount, DefaultTolerationSeconds, Priority, TaintNodesByCondition, ResourceQuota). */
  admission?: (defaults: AdmissionPlugin[], reader: ObjectReader) => AdmissionPlugin[];
  /** kube-apiserver --authorization-mode: AlwaysAllow (default) or RBAC (bootstrap roles are created at start). */
  authorizationMode?: 'AlwaysAllow' | 'RBAC';
  /** Token review and signing for the authentication APIs (TokenReview, serviceaccounts/token); the authorizer is added here. */
  auth?: Omit<ServerAuth, 'authorizer'>;
  /** PEM bundle that verifies client certificates: published as `client-ca-file` in kube-system/extension-apiserver-authentication. */
  clientCA?: string;
  /** The CRD conversion webhooks' deadline in ms (upstream: 30 s; tests shorten it). */
  crdConversionWebhookTimeoutMs?: number;
  /**
   * Serves the resource metrics API (metrics.k8s.io/v1beta1, as
   * metrics-server) with usage from this source. (kcm serves no
   * apiregistration.k8s.io, so there is no APIService object for it.)
   */
  resourceMetrics?: ResourceMetricsSource;
  /** How the node streaming endpoints reach kubelets (--kubelet-token, --kubelet-preferred-address-types). */
  kubelet?: KubeletClientConfig;
}

export interface ApiHandler {
  /** The request listener; never throws, always answers. */
  handle(req: IncomingMessage, res: ServerResponse, user: UserInfo): void;
  /**
   * The `upgrade` listener: exec, attach, portforward and the proxy
   * subresources are spliced to the kubelet; any other upgrade request is
   * served as a plain request on the socket. Never throws, always answers.
   */
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, user: UserInfo): void;
  /** Ends every open watch. The storage is the caller's to close. */
  close(): Promise<void>;
  metrics: ApiMetrics;
  resources: ResourceTable;
  /** Points the `kubernetes` Service's Endpoints/EndpointSlice at the serving address and sets its targetPort. */
  setServingEndpoint(ip: string, port: number): Promise<void>;
  /** Adds a /healthz, /livez and /readyz check. */
  addHealthCheck(check: HealthCheck): void;
  /** Open watch streams (for leak checks). */
  openWatches(): number;
}

export const systemUser: UserInfo = { username: 'system:apiserver', groups: ['system:masters'] };

export async function createApiHandler(opts: ApiHandlerOptions): Promise<ApiHandler> {
  const clock = opts.clock ?? realClock;
  const logger = opts.logger ?? newLogger('apiserver');
  const metrics = newApiMetrics();
  const storage = metrics.instrument(opts.storage);
  const resources = newResourceTable();
  const allocators: ServiceAllocators = newServiceAllocators({ serviceClusterIPRange: opts.serviceClusterIPRange, serviceNodePortRange: opts.serviceNodePortRange });
  const hooks = new Map<string, WriteHooks>([['/services', allocators.hooks]]);
  // Admission and authorization read through these, as upstream's plugins read informer listers: from
  // the watch cache, and not counted or timed as storage requests (etcd_request_duration_seconds).
  const reader: ObjectReader = {
    async get(group, resource, namespace, name) {
      const r = resources.storageResource(group, resource);
      if (!r) return undefined;
      return (await opts.storage.get(`${storagePrefix(r, r.namespaced ? namespace : '')}${name}`))?.object;
    },
  };
  const lister: ObjectLister = {
    async list(group, resource, namespace) {
      const r = resources.storageResource(group, resource);
      if (!r) return undefined;
      return (await opts.storage.list(storagePrefix(r, r.namespaced ? namespace : ''))).items.map((x) => x.object);
    },
  };
  const pcR = resources.storageResource('scheduling.k8s.io', 'priorityclasses')!;
  // The webhooks read `server` (its OpenAPI document) only when called, after it exists.
  const late: { server?: ServerContext } = {};
  installMatchConditionEngine();
  const webhooks = await startWebhookAdmission({ storage, resources, reader, lister, logger, clock, swagger: () => openApiOf(late.server!).swagger() });
  const policies = await startPolicyAdmission({ storage, resources, reader, lister, logger, authorizer: () => late.server?.auth.authorizer });
  // Upstream's order: NamespaceLifecycle, LimitRanger, ServiceAccount, ..., the webhooks, ResourceQuota last.
  const defaults: AdmissionPlugin[] = [
    newNamespaceLifecycle(reader),
    newLimitRanger(lister),
    newServiceAccountAdmission(reader),
    newDefaultTolerationSeconds(),
    newPriorityAdmission(reader, { list: async () => (await storage.list(storagePrefix(pcR, ''))).items.map((x) => x.object as never) }),
    newTaintNodesByCondition(),
    newDefaultStorageClass(lister),
    newStorageObjectInUseProtection(),
    newPersistentVolumeClaimResize(reader),
    webhooks.mutating,
    policies.plugin,
    webhooks.validating,
    newResourceQuotaAdmission(lister, { clock }),
  ];
  const admission = newAdmissionChain(opts.admission ? opts.admission(defaults, reader) : defaults);
  const store = new Store({ storage, clock, logger, resources, admission, hooks });
  const server: ServerContext = {
    storage,
    store,
    resources,
    clock,
    logger,
    metrics,
    allocators,
    watches: new Set(),
    minRequestTimeoutSeconds: opts.minRequestTimeoutSeconds ?? 1800,
    bookmarkIntervalMs: opts.bookmarkIntervalMs ?? 60_000,
    auth: { ...(opts.auth ?? {}) },
    webhookClient: webhooks.client,
    ...(opts.resourceMetrics ? { resourceMetrics: opts.resourceMetrics } : {}),
    ...(opts.kubelet ? { kubelet: opts.kubelet } : {}),
  };
  if (opts.resourceMetrics) resources.setDynamic(METRICS_RESOURCES_OWNER, metricsResources());
  late.server = server;
  const checks: HealthCheck[] = [
    { name: 'log', check: () => true },
    { name: 'etcd', check: () => storage.currentRevision() >= 0 },
    { name: 'poststarthook/bootstrap-controller', check: () => bootstrapped },
  ];

  const svcR = resources.storageResource('', 'services')!;
  for (const it of (await storage.list(storagePrefix(svcR, ''))).items) allocators.restore(it.object);

  let bootstrapped = false;
  const ensure = async (group: string, resource: string, ns: string, obj: KubeObject) => {
    const r = resources.storageResource(group, resource)!;
    if (await store.getStored(r, ns, obj.metadata!.name!)) return;
    try {
      await store.create(r, ns, obj, { dryRun: false, user: systemUser });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
  };
  for (const name of systemNamespaces) await ensure('', 'namespaces', '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  const authorizer: Authorizer | undefined = opts.authorizationMode === 'RBAC' ? newRbacAuthorizer(lister, reader) : undefined;
  if (authorizer) server.auth.authorizer = authorizer;
  if (authorizer) {
    for (const cr of bootstrapClusterRoles) await ensure('rbac.authorization.k8s.io', 'clusterroles', '', deepCopy(cr) as unknown as KubeObject);
    for (const b of bootstrapClusterRoleBindings) await ensure('rbac.authorization.k8s.io', 'clusterrolebindings', '', deepCopy(b) as unknown as KubeObject);
    for (const r of bootstrapNamespaceRoles) await ensure('rbac.authorization.k8s.io', 'roles', r.metadata!.namespace!, deepCopy(r) as unknown as KubeObject);
    for (const b of bootstrapNamespaceRoleBindings) await ensure('rbac.authorization.k8s.io', 'rolebindings', b.metadata!.namespace!, deepCopy(b) as unknown as KubeObject);
  }
  if (opts.clientCA) await publishAuthenticationConfigMap(opts.clientCA);
  for (const pc of systemPriorityClasses) await ensure('scheduling.k8s.io', 'priorityclasses', '', deepCopy(pc) as unknown as KubeObject);
  const kubernetesService: Service = {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'kubernetes', namespace: 'default', labels: { component: 'apiserver', provider: 'kubernetes' } },
    spec: { type: 'ClusterIP', clusterIP: nthIp(allocators.range, 1), sessionAffinity: 'None', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }] },
  };
  await ensure('', 'services', 'default', kubernetesService as KubeObject);
  bootstrapped = true;
  // CustomResourceDefinitions: the in-server apiextensions loop (names, Established, serving, cleanup).
  const crds = await installCustomResources(server, opts.crdConversionWebhookTimeoutMs !== undefined ? { conversionWebhookTimeoutMs: opts.crdConversionWebhookTimeoutMs } : {});
  const stopTracking = await metrics.trackObjects(opts.storage, logger);

  async function setServingEndpoint(ip: string, port: number): Promise<void> {
    const svc = (await store.get(svcR, 'default', 'kubernetes')) as Service & KubeObject;
    const p = svc.spec?.ports?.[0];
    if (p && p.targetPort !== port) {
      p.targetPort = port;
      await store.update(svcR, 'default', 'kubernetes', svc, { dryRun: false, user: systemUser });
    }
    const epR = resources.storageResource('', 'endpoints')!;
    const endpoints: Endpoints = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'kubernetes', namespace: 'default', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } },
      subsets: [{ addresses: [{ ip }], ports: [{ name: 'https', port, protocol: 'TCP' }] }],
    };
    await store.update(epR, 'default', 'kubernetes', endpoints as KubeObject, { dryRun: false, user: systemUser });
    const sliceR = resources.storageResource('discovery.k8s.io', 'endpointslices')!;
    const slice: EndpointSlice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      metadata: { name: 'kubernetes', namespace: 'default', labels: { 'kubernetes.io/service-name': 'kubernetes', 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' } },
      addressType: 'IPv4',
      endpoints: [{ addresses: [ip], conditions: { ready: true } }],
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    };
    const existing = await store.getStored(sliceR, 'default', 'kubernetes');
    if (existing) await store.update(sliceR, 'default', 'kubernetes', slice as unknown as KubeObject, { dryRun: false, user: systemUser });
    else await store.create(sliceR, 'default', slice as unknown as KubeObject, { dryRun: false, user: systemUser });
  }

  /** kube-system/extension-apiserver-authentication with the client CA (created, or updated when it changed). */
  async function publishAuthenticationConfigMap(clientCA: string): Promise<void> {
    const cmR = resources.storageResource('', 'configmaps')!;
    const name = 'extension-apiserver-authentication';
    const existing = (await store.getStored(cmR, 'kube-system', name))?.object as (KubeObject & { data?: Record<string, string> }) | undefined;
    if (existing?.data?.['client-ca-file'] === clientCA) return;
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'kube-system' }, data: { ...(existing?.data ?? {}), 'client-ca-file': clientCA } };
    if (existing) await store.update(cmR, 'kube-system', name, { ...cm, metadata: { ...existing.metadata, ...cm.metadata } } as KubeObject, { dryRun: false, user: systemUser });
    else await ensure('', 'configmaps', 'kube-system', cm as KubeObject);
  }

  /** Authorizes the request as `user` (when RBAC is on) and routes it. */
  function serve(req: IncomingMessage, res: ServerResponse, user: UserInfo): void {
    if (!authorizer) {
      route(server, () => checks, req, res, user);
      return;
    }
    const { url, method, info } = requestTargetOf(req);
    const attrs =
      info.kind === 'resource'
        ? // The subresource is the first segment after the name (`proxy` of `nodes/x/proxy/healthz`), as RequestInfoFactory.
          { user, verb: info.verb, resourceRequest: true, apiGroup: info.group, apiVersion: info.version, resource: info.resource, subresource: info.subresource.split('/')[0]!, namespace: info.namespace, name: info.name }
        : { user, verb: method.toLowerCase(), resourceRequest: false, path: url.pathname };
    authorizer.authorize(attrs).then(
      (d) => {
        if (d.allowed) route(server, () => checks, req, res, user);
        else writeStatus(res, forbiddenError(attrs, d.reason).status);
      },
      (err: unknown) => {
        logger.error(err, { uri: req.url }, 'authorization failed');
        writeStatus(res, forbiddenError(attrs, 'authorizer error').status);
      },
    );
  }

  /** Resolves the user the request acts as (impersonation), then calls `next`; `fail` answers a refusal. */
  function asUser(req: IncomingMessage, requestor: UserInfo, next: (user: UserInfo) => void, fail: (status: ReturnType<typeof statusOf>) => void): void {
    if (!Object.keys(req.headers).some((h) => h.startsWith('impersonate-'))) return next(requestor);
    impersonatedUser(headerLists(req.headersDistinct, req.headers), requestor, authorizer).then(
      (user) => {
        logger.v(4).info({ uri: req.url, user: requestor.username, as: user.username }, 'impersonating');
        next(user);
      },
      (err: unknown) => {
        if (!(err instanceof StatusError) || err.code >= 500) logger.error(err, { uri: req.url }, 'impersonation failed');
        fail((err instanceof StatusError ? err : forbiddenError({ user: requestor, verb: 'impersonate', resourceRequest: true }, 'authorizer error')).status);
      },
    );
  }

  /** An upgrade request: authorized as any request, then spliced to its backend (UpgradeAwareHandler.tryUpgrade). */
  function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, user: UserInfo): void {
    const { url, info } = requestTargetOf(req);
    const sub = info.kind === 'resource' ? info.subresource.split('/')[0]! : '';
    const streaming =
      info.kind === 'resource' && info.group === '' && info.version === 'v1' && info.name !== '' &&
      ((info.resource === 'pods' && ['exec', 'attach', 'portforward', 'proxy', 'log'].includes(sub)) || ((info.resource === 'services' || info.resource === 'nodes') && sub === 'proxy'));
    if (!streaming || info.kind !== 'resource') {
      // Not a streaming endpoint: answered as a plain request on this socket, then closed.
      const res = new ServerResponse(req);
      res.assignSocket(socket as Socket);
      res.shouldKeepAlive = false;
      res.once('finish', () => socket.end());
      serve(req, res, user);
      return;
    }
    const attrs = { user, verb: info.verb, resourceRequest: true, apiGroup: info.group, apiVersion: info.version, resource: info.resource, subresource: sub, namespace: info.namespace, name: info.name };
    socket.on('error', () => socket.destroy());
    const run = async () => {
      if (authorizer) {
        const d = await authorizer.authorize(attrs).catch(() => ({ allowed: false, reason: 'authorizer error' }));
        if (!d.allowed) throw forbiddenError(attrs, d.reason);
      }
      if (info.verb !== 'get' && info.verb !== 'create' && sub !== 'proxy') throw methodNotAllowed(info.verb, { group: '', resource: `pods/${sub}` });
      if (sub === 'log') {
        streamLogOverWebSocket(req, socket, head, await logLocation(server, info.namespace, info.name, url.searchParams));
        return;
      }
      const target =
        sub === 'proxy'
          ? await proxyTarget(server, info.resource, info.namespace, info.name, proxyRestPath(url.pathname), url.search.replace(/^\?/, ''))
          : await streamLocation(server, sub as 'exec' | 'attach' | 'portforward', info.namespace, info.name, url.searchParams);
      await spliceUpgrade(req, socket, head, target);
    };
    run().catch((err: unknown) => {
      const st = statusOf(err);
      if ((st.code ?? 500) >= 500) logger.error(err, { uri: req.url }, 'upgrade request failed');
      writeStatusToSocket(socket, st);
    });
  }

  return {
    handle(req, res, requestor) {
      asUser(req, requestor, (user) => serve(req, res, user), (st) => writeStatus(res, st));
    },
    handleUpgrade(req, socket, head, requestor) {
      asUser(req, requestor, (user) => upgrade(req, socket, head, user), (st) => writeStatusToSocket(socket, st));
    },
    async close() {
      stopTracking();
      crds.stop();
      for (const w of [...server.watches]) w.stop();
      policies.close();
      await webhooks.close();
    },
    metrics,
    resources,
    setServingEndpoint,
    addHealthCheck(c) {
      checks.push(c);
    },
    openWatches: () => server.watches.size,
  };
}
