/**
 * Subresources: status, scale, pods/binding (and the bindings resource),
 * pods/eviction, namespaces/finalize, certificatesigningrequests/approval,
 * and the node streaming endpoints (pods/log, exec, attach, portforward and
 * the proxy subresources, proxied to the kubelet: node-proxy.ts).
 */
import type { Binding, Namespace, Pod, PodCondition } from 'kubernetes-types/core/v1.js';
import type { PodDisruptionBudget } from 'kubernetes-types/policy/v1.js';
import type { Scale } from 'kubernetes-types/autoscaling/v1.js';
import type { KubeObject } from '../../api/types.js';
import { selectorFromLabelSelector } from '../../api/labels.js';
import { rfc3339 } from '../../util/clock/clock.js';
import type { RequestScope } from '../context.js';
import { writeObject } from '../output.js';
import { negotiateWithoutTable } from '../table.js';
import { dryRunOf, readJsonBody, readObject } from './decode.js';
import { handleUpdate } from './update.js';
import { writeRendered } from './get.js';
import { handlePatch } from './patch.js';
import { handleTokenRequest } from './token-request.js';
import { trackWrite } from './field-manager.js';
import { admissionInfo, writeOptionsOf } from './admission-info.js';
import { decodeTyped } from './field-validation.js';
import { openApiOf } from '../router.js';
import { deleteObject, parseDeleteOptions } from '../deletion.js';
import { finalizeNamespace } from '../namespaces.js';
import { StorageError } from '../storage/storage.js';
import { storagePrefix, readView } from '../store.js';
import { badRequest, conflict, conflictModified, forbidden, methodNotAllowed, notFound, notSupported, StatusError, successStatus, tooManyRequests } from '../status.js';
import { newStatus } from '../../client/errors.js';
import { logLocation, nodeProxyLocation, podProxyLocation, proxyPlain, proxyRestPath, serviceProxyLocation, streamLocation, type BackendTarget } from './node-proxy.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export async function handleSubresource(s: RequestScope): Promise<void> {
  if (s.r.group === '' && s.subresource.split('/')[0] === 'proxy' && ['pods', 'services', 'nodes'].includes(s.r.resource)) return proxy(s);
  const sub = s.r.subresources.get(s.subresource);
  if (!sub) throw notFound({ group: s.r.group, resource: `${s.r.resource}/${s.subresource}` }, s.name);
  const key = `${s.r.group}/${s.r.resource}/${s.subresource}`;
  switch (s.subresource) {
    case 'status':
      return status(s);
    case 'scale':
      return scale(s);
  }
  switch (key) {
    case '/pods/binding':
      if (s.verb !== 'create') throw methodNotAllowed(s.verb, { group: '', resource: 'pods/binding' });
      return bind(s, s.name);
    case '/pods/eviction':
      if (s.verb !== 'create') throw methodNotAllowed(s.verb, { group: '', resource: 'pods/eviction' });
      return evict(s);
    case '/namespaces/finalize': {
      if (s.verb !== 'update') throw methodNotAllowed(s.verb, { group: '', resource: 'namespaces/finalize' });
      const body = (await readObject(s)) as Namespace & KubeObject;
      if (body.metadata?.name && body.metadata.name !== s.name) throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${s.name})`);
      return writeObject(s, 200, await finalizeNamespace(s.server, s.r, s.name, body, { dryRun: dryRunOf(s), user: s.user }));
    }
    case '/serviceaccounts/token':
      if (s.verb !== 'create') throw methodNotAllowed(s.verb, { group: '', resource: 'serviceaccounts/token' });
      return handleTokenRequest(s);
    case 'certificates.k8s.io/certificatesigningrequests/approval':
      return approval(s);
    case '/pods/log': {
      if (s.verb !== 'get') throw methodNotAllowed(s.verb, { group: '', resource: 'pods/log' });
      negotiateWithoutTable(s);
      const target = await logLocation(s.server, s.namespace, s.name, s.query);
      // A pod without a node yet has no log: an empty body (LocationStreamer without a location).
      if (!target) return void (s.res.writeHead(200, { 'Content-Type': 'text/plain' }), s.res.end());
      return proxyPlain(s, target, 'log', s.name);
    }
    case '/pods/exec':
    case '/pods/attach':
    case '/pods/portforward':
      if (s.verb !== 'get' && s.verb !== 'create') throw methodNotAllowed(s.verb, { group: '', resource: `pods/${s.subresource}` });
      // Upgrade requests are served on the server's `upgrade` event (handler.ts handleUpgrade); this is a plain one.
      await streamLocation(s.server, s.subresource as 'exec' | 'attach' | 'portforward', s.namespace, s.name, s.query);
      throw badRequest('Upgrade request required');
    default:
      throw notSupported(`the ${s.r.resource}/${s.subresource} subresource is not supported by this server`);
  }
}

/** pods/proxy, services/proxy, nodes/proxy (any verb): the request streamed to the backend and back. */
async function proxy(s: RequestScope): Promise<void> {
  const rest = proxyRestPath(s.url.pathname);
  const raw = s.url.search.replace(/^\?/, '');
  const target = await proxyTarget(s.server, s.r.resource, s.namespace, s.name, rest, raw);
  return proxyPlain(s, target, 'proxy');
}

/** The backend of a proxy subresource request (also used by upgrade requests). */
export function proxyTarget(server: RequestScope['server'], resource: string, namespace: string, id: string, rest: string, rawQuery: string): Promise<BackendTarget> {
  switch (resource) {
    case 'pods':
      return podProxyLocation(server, namespace, id, rest, rawQuery);
    case 'services':
      return serviceProxyLocation(server, namespace, id, rest, rawQuery);
    default:
      return nodeProxyLocation(server, id, rest, rawQuery);
  }
}

async function status(s: RequestScope): Promise<void> {
  switch (s.verb) {
    case 'get':
      return writeRendered(s, 200, await s.server.store.get(s.r, s.namespace, s.name));
    case 'update':
      return handleUpdate(s, 'status');
    case 'patch':
      return handlePatch(s, 'status');
    default:
      throw methodNotAllowed(s.verb, { group: s.r.group, resource: `${s.r.resource}/status` });
  }
}

async function scale(s: RequestScope): Promise<void> {
  const access = s.r.strategy.scale;
  if (!access) throw notFound({ group: s.r.group, resource: `${s.r.resource}/scale` }, s.name);
  const store = s.server.store;
  switch (s.verb) {
    case 'get':
      return writeObject(s, 200, access.get(await store.get(s.r, s.namespace, s.name)));
    case 'update': {
      const body = (await readObject(s, { group: 'autoscaling', version: 'v1', kind: 'Scale' })) as Scale & KubeObject;
      if (body.metadata?.name && body.metadata.name !== s.name) throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${s.name})`);
      const replicas = body.spec?.replicas ?? 0;
      if (!Number.isInteger(replicas) || replicas < 0) {
        throw new StatusError(newStatus(422, 'Invalid', `Scale.autoscaling "${s.name}" is invalid: spec.replicas: Invalid value: ${replicas}: must be greater than or equal to 0`, {
          name: s.name, group: 'autoscaling', kind: 'Scale', causes: [{ reason: 'FieldValueInvalid', message: `Invalid value: ${replicas}: must be greater than or equal to 0`, field: 'spec.replicas' }],
        }));
      }
      const out = await store.guaranteedUpdate(s.r, s.namespace, s.name, (cur) => {
        const rv = body.metadata?.resourceVersion;
        if (rv && rv !== cur.metadata?.resourceVersion) throw conflictModified(s.r, s.name);
        const next = deepCopy(cur);
        access.set(next, replicas);
        trackWrite(s, cur, next, 'scale');
        return next;
      }, { dryRun: dryRunOf(s), user: s.user, subresource: 'scale', admission: admissionInfo(s, writeOptionsOf(s, 'UpdateOptions')) });
      return writeObject(s, 200, access.get(out));
    }
    case 'patch': {
      // Patch the Scale view, then write its replicas back.
      const { patchKindOf, applyPatchTo } = await import('./patch.js');
      const kind = patchKindOf(s.req.headers['content-type']);
      const body = await readJsonBody(s);
      const out = await store.guaranteedUpdate(s.r, s.namespace, s.name, async (cur) => {
        const scaleRes = { ...s.r, group: 'autoscaling', version: 'v1', kind: 'Scale' };
        const next = deepCopy(cur);
        const patched = (await applyPatchTo(scaleRes, access.get(next) as KubeObject, kind, body, { fieldManager: s.query.get('fieldManager') ?? '', force: s.query.get('force') === 'true' })) as Scale;
        const replicas = patched.spec?.replicas ?? 0;
        if (!Number.isInteger(replicas) || replicas < 0) throw badRequest(`spec.replicas: Invalid value: ${replicas}: must be greater than or equal to 0`);
        access.set(next, replicas);
        trackWrite(s, cur, next, 'scale');
        return next;
      }, { dryRun: dryRunOf(s), user: s.user, subresource: 'scale', admission: admissionInfo(s, writeOptionsOf(s, 'PatchOptions')) });
      return writeObject(s, 200, access.get(out));
    }
    default:
      throw methodNotAllowed(s.verb, { group: s.r.group, resource: `${s.r.resource}/scale` });
  }
}

/** POST pods/{name}/binding or POST bindings: assigns the pod to a node (pkg/registry/core/pod/storage assignPod). */
export async function bind(s: RequestScope, podName: string): Promise<void> {
  negotiateWithoutTable(s);
  const body = (await readObject(s, { group: '', version: 'v1', kind: 'Binding' })) as Binding & KubeObject;
  const name = body.metadata?.name || podName;
  if (podName && name !== podName) throw badRequest(`the name of the object (${name}) does not match the name on the URL (${podName})`);
  const node = body.target?.name;
  const podsR = s.server.resources.find('', 'v1', 'pods')!;
  const bindR = { group: '', resource: 'pods/binding' };
  if (!node) {
    throw new StatusError(newStatus(422, 'Invalid', `Binding "${name}" is invalid: target.name: Required value`, { name, kind: 'Binding', causes: [{ reason: 'FieldValueRequired', message: 'Required value', field: 'target.name' }] }));
  }
  const dryRun = dryRunOf(s);
  for (let attempt = 0; ; attempt++) {
    const cur = await s.server.store.getStored(podsR, s.namespace, name);
    if (!cur) throw notFound(podsR, name);
    // Read-only (it may share the stored object's frozen fields): the changed parts are new objects, and rawStore copies it.
    const pod = (await readView(podsR, cur.object)) as Pod & KubeObject;
    if (body.metadata?.uid && body.metadata.uid !== pod.metadata?.uid) throw conflict(bindR, name, `Precondition failed: UID in precondition: ${body.metadata.uid}, UID in object meta: ${pod.metadata?.uid}`);
    if (pod.metadata?.deletionTimestamp) throw conflict(bindR, name, `pod ${name} is being deleted, cannot be assigned to a host`);
    if (pod.spec?.nodeName) throw conflict(bindR, name, `pod ${name} is already assigned to node "${pod.spec.nodeName}"`);
    pod.spec = { ...pod.spec!, nodeName: node };
    if (body.metadata?.annotations) pod.metadata = { ...pod.metadata, annotations: { ...(pod.metadata!.annotations ?? {}), ...body.metadata.annotations } };
    const now = rfc3339(s.server.clock.now());
    const conds: PodCondition[] = (pod.status?.conditions ?? []).filter((c) => c.type !== 'PodScheduled');
    const old = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    conds.push({ type: 'PodScheduled', status: 'True', lastProbeTime: null as unknown as string, lastTransitionTime: old?.status === 'True' && old.lastTransitionTime ? old.lastTransitionTime : now });
    (pod as KubeObject).status = { ...(pod.status ?? {}), conditions: conds };
    if (dryRun) break;
    try {
      await s.server.store.rawStore(podsR, s.namespace, name, pod, cur.revision);
      break;
    } catch (err) {
      if (err instanceof StorageError && err.code === 'Conflict' && attempt < 5) continue;
      throw err;
    }
  }
  writeObject(s, 201, { ...successStatus(), code: 201 });
}

/** POST pods/{name}/eviction: deletes the pod unless a PodDisruptionBudget forbids it (pkg/registry/core/pod/storage/eviction.go). */
async function evict(s: RequestScope): Promise<void> {
  negotiateWithoutTable(s);
  const body = requireEviction(s, await readJsonBody(s));
  if (body.metadata?.name && body.metadata.name !== s.name) throw badRequest(`name in URL does not match name in Eviction object`);
  const store = s.server.store;
  const podsR = s.r;
  const pod = (await store.get(podsR, s.namespace, s.name)) as Pod & KubeObject;
  const delOpts = parseDeleteOptions(body.deleteOptions, new URLSearchParams(), s.user);
  delOpts.dryRun = delOpts.dryRun || dryRunOf(s);
  const phase = pod.status?.phase;
  const ignorePdb = phase === 'Succeeded' || phase === 'Failed' || phase === 'Pending' || !!pod.metadata?.deletionTimestamp;
  if (!ignorePdb) {
    const pdbR = s.server.resources.find('policy', 'v1', 'poddisruptionbudgets')!;
    const list = await s.server.storage.list(storagePrefix(pdbR, s.namespace));
    const pdbs = list.items
      .map((x) => x.object as PodDisruptionBudget & KubeObject)
      .filter((p) => selectorFromLabelSelector(p.spec?.selector).matches(pod.metadata?.labels));
    if (pdbs.length > 1) {
      throw new StatusError(newStatus(500, 'InternalError', 'This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.'));
    }
    if (pdbs.length === 1) {
      const pdb = pdbs[0]!;
      const pdbName = pdb.metadata?.name ?? '';
      const st = pdb.status;
      const cause = (message: string) => [{ reason: 'DisruptionBudget', message }];
      const refuse = 'Cannot evict pod as it would violate the pod\'s disruption budget.';
      if ((st?.observedGeneration ?? 0) < (pdb.metadata?.generation ?? 0)) throw tooManyRequests(refuse, cause(`The disruption budget ${pdbName} is still being processed by the server.`), 10);
      if ((st?.disruptionsAllowed ?? 0) < 0) throw forbidden(podsR, s.name, 'pdb disruptions allowed is negative');
      if ((st?.disruptionsAllowed ?? 0) === 0) {
        throw tooManyRequests(refuse, cause(`The disruption budget ${pdbName} needs ${st?.desiredHealthy ?? 0} healthy pods and has ${st?.currentHealthy ?? 0} currently`));
      }
      if (!delOpts.dryRun) {
        const pre = pdb.metadata?.resourceVersion;
        const next = deepCopy(pdb) as PodDisruptionBudget & KubeObject & { status: unknown };
        next.status = { ...next.status!, disruptionsAllowed: (st?.disruptionsAllowed ?? 0) - 1, disruptedPods: { ...(st?.disruptedPods ?? {}), [s.name]: rfc3339(s.server.clock.now()) } };
        try {
          await store.rawUpdate(pdbR, s.namespace, pdbName, next, Number(pre));
        } catch (err) {
          if (err instanceof StorageError && err.code === 'Conflict') throw tooManyRequests(refuse, cause(`The disruption budget ${pdbName} was modified concurrently; retry the eviction.`), 1);
          throw err;
        }
      }
    }
  }
  await deleteObject(store, podsR, s.namespace, s.name, delOpts);
  writeObject(s, 201, { ...successStatus(), code: 201 });
}

function requireEviction(s: RequestScope, v: unknown): { metadata?: { name?: string }; deleteOptions?: unknown } {
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw badRequest('the request body must be an Eviction');
  const e = v as { apiVersion?: unknown; kind?: string; metadata?: { name?: string }; deleteOptions?: unknown };
  if (e.kind && e.kind !== 'Eviction') throw badRequest(`expected Eviction, got ${e.kind}`);
  // Decoded as the policy version it names (v1 when none).
  const version = e.apiVersion === 'policy/v1beta1' ? 'v1beta1' : 'v1';
  decodeTyped(openApiOf(s.server).swagger(), { group: 'policy', version, kind: 'Eviction' }, e as KubeObject);
  return e;
}

/**
 * certificatesigningrequests/{name}/approval: get, update and patch, where a
 * write changes only metadata and status.conditions (the strategy's
 * subresourcePrepare.approval).
 */
async function approval(s: RequestScope): Promise<void> {
  switch (s.verb) {
    case 'get':
      return writeRendered(s, 200, await s.server.store.get(s.r, s.namespace, s.name));
    case 'update':
      return handleUpdate(s, 'approval');
    case 'patch':
      return handlePatch(s, 'approval');
    default:
      throw methodNotAllowed(s.verb, { group: s.r.group, resource: `${s.r.resource}/approval` });
  }
}
