import { describe, it, before } from 'node:test';
import assert from 'node:assert/strict';
import type { PersistentVolume, PersistentVolumeClaim, Pod } from 'kubernetes-types/core/v1.js';
import type { StorageClass } from 'kubernetes-types/storage/v1.js';
import { GVR } from '../../api/gvr.js';
import type { FakeClient } from '../../controller/testing/fake-client.js';
import type { Kube } from '../../tools/cache/factory.js';
import { setLogOutput } from '../../util/log/logger.js';
import { setupController, until } from '../endpointslice/test-support.js';
import { descriptor, newPVBinderController } from './persistentvolumebinder-controller.js';
import { findBestMatchForClaim } from './volume-helpers.js';

type Pv = Kube<PersistentVolume>;
type Pvc = Kube<PersistentVolumeClaim>;

interface PvOpts {
  size?: string;
  modes?: string[];
  cls?: string;
  phase?: string;
  claim?: { name: string; uid?: string; ns?: string };
  policy?: string;
  labels?: Record<string, string>;
  mode?: string;
  annotations?: Record<string, string>;
}
function pv(name: string, o: PvOpts = {}): Pv {
  return {
    metadata: { name, uid: `uid-${name}`, ...(o.labels ? { labels: o.labels } : {}), ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      capacity: { storage: o.size ?? '1Gi' },
      accessModes: o.modes ?? ['ReadWriteOnce'],
      persistentVolumeReclaimPolicy: o.policy ?? 'Retain',
      hostPath: { path: `/tmp/${name}` },
      ...(o.cls !== undefined ? { storageClassName: o.cls } : {}),
      ...(o.mode ? { volumeMode: o.mode } : {}),
      ...(o.claim ? { claimRef: { kind: 'PersistentVolumeClaim', apiVersion: 'v1', namespace: o.claim.ns ?? 'default', name: o.claim.name, uid: o.claim.uid ?? '' } } : {}),
    },
    status: { phase: o.phase ?? 'Available' },
  };
}
interface PvcOpts {
  size?: string;
  modes?: string[];
  cls?: string | null;
  volumeName?: string;
  selector?: Record<string, string>;
  annotations?: Record<string, string>;
  phase?: string;
}
function pvc(name: string, o: PvcOpts = {}): Pvc {
  return {
    metadata: { name, namespace: 'default', uid: `uid-${name}`, ...(o.annotations ? { annotations: o.annotations } : {}) },
    spec: {
      accessModes: o.modes ?? ['ReadWriteOnce'],
      resources: { requests: { storage: o.size ?? '1Gi' } },
      ...(o.cls !== undefined && o.cls !== null ? { storageClassName: o.cls } : {}),
      ...(o.cls === undefined ? { storageClassName: '' } : {}),
      ...(o.volumeName ? { volumeName: o.volumeName } : {}),
      ...(o.selector ? { selector: { matchLabels: o.selector } } : {}),
    },
    status: { phase: o.phase ?? 'Pending' },
  };
}
function sc(name: string, provisioner: string, mode = 'Immediate', isDefault = false): Kube<StorageClass> {
  return {
    metadata: { name, ...(isDefault ? { annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } } : {}) },
    provisioner,
    reclaimPolicy: 'Delete',
    volumeBindingMode: mode,
  };
}
const getPv = (f: FakeClient, n: string) => f.stored<Pv>(GVR.persistentVolumes, '', n);
const getPvc = (f: FakeClient, n: string) => f.stored<Pvc>(GVR.persistentVolumeClaims, 'default', n);
const create = newPVBinderController;

/** Chainable seeding: `chain(f).seed(GVR.pods, a).seed(GVR.nodes, b)`. */
function chain(f: FakeClient) {
  const c = {
    seed<T extends Kube<object>>(gvr: Parameters<FakeClient['seed']>[0], ...objs: T[]) {
      f.seed(gvr, ...objs);
      return c;
    },
  };
  return c;
}

describe('persistentvolume binder controller', () => {
  before(() => setLogOutput(() => {}));

  it('binds a claim to the smallest fitting volume and marks both Bound', async () => {
    const env = await setupController(
      (f) => chain(f).seed(GVR.persistentVolumes, pv('big', { size: '10Gi' }), pv('small', { size: '2Gi' }), pv('tiny', { size: '500Mi' })).seed(GVR.persistentVolumeClaims, pvc('data', { size: '1Gi' })),
      (ctx) => create(ctx),
    );
    await env.c.syncClaim('default/data');
    const claim = getPvc(env.fake, 'data')!;
    assert.equal(claim.spec?.volumeName, 'small');
    assert.equal(claim.metadata?.annotations?.['pv.kubernetes.io/bind-completed'], 'yes');
    assert.equal(claim.metadata?.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
    assert.equal(claim.status?.phase, 'Bound');
    assert.deepEqual(claim.status?.capacity, { storage: '2Gi' });
    assert.deepEqual(claim.status?.accessModes, ['ReadWriteOnce']);
    const vol = getPv(env.fake, 'small')!;
    assert.equal(vol.status?.phase, 'Bound');
    assert.equal(vol.spec?.claimRef?.name, 'data');
    assert.equal(vol.spec?.claimRef?.uid, 'uid-data');
    assert.equal(vol.spec?.claimRef?.kind, 'PersistentVolumeClaim');
    assert.equal(vol.metadata?.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
    assert.equal(getPv(env.fake, 'big')!.spec?.claimRef, undefined);
    await env.stop();
  });

  it('matches access modes, class, label selector and volumeMode', () => {
    const vols = [
      pv('rwx', { modes: ['ReadWriteMany'] }),
      pv('fast', { cls: 'fast' }),
      pv('block', { mode: 'Block' }),
      pv('unlabelled'),
      pv('labelled', { labels: { tier: 'gold' }, size: '5Gi' }),
      pv('released', { phase: 'Released' }),
    ];
    assert.equal(findBestMatchForClaim(pvc('a', { modes: ['ReadWriteMany'] }), vols, false)?.metadata?.name, 'rwx');
    assert.equal(findBestMatchForClaim(pvc('a', { cls: 'fast' }), vols, false)?.metadata?.name, 'fast');
    assert.equal(findBestMatchForClaim(pvc('a', { selector: { tier: 'gold' } }), vols, false)?.metadata?.name, 'labelled');
    const block = pvc('a');
    block.spec = { ...block.spec, volumeMode: 'Block' };
    assert.equal(findBestMatchForClaim(block, vols, false)?.metadata?.name, 'block');
    assert.equal(findBestMatchForClaim(pvc('a', { size: '20Gi' }), vols, false), undefined);
    // Fewer offered access modes win over size.
    const multi = [pv('wide', { modes: ['ReadWriteOnce', 'ReadOnlyMany'], size: '1Gi' }), pv('narrow', { size: '3Gi' })];
    assert.equal(findBestMatchForClaim(pvc('a'), multi, false)?.metadata?.name, 'narrow');
    // WaitForFirstConsumer: only a volume pre-bound to the claim.
    assert.equal(findBestMatchForClaim(pvc('a'), vols, true), undefined);
    assert.equal(findBestMatchForClaim(pvc('a'), [...vols, pv('pre', { claim: { name: 'a' }, size: '9Gi' })], true)?.metadata?.name, 'pre');
  });

  it('binds a volume pre-bound to the claim by the user without bound-by-controller on the volume', async () => {
    const env = await setupController(
      (f) => chain(f).seed(GVR.persistentVolumes, pv('mine', { claim: { name: 'data' }, size: '5Gi' }), pv('other', { size: '1Gi' })).seed(GVR.persistentVolumeClaims, pvc('data')),
      (ctx) => create(ctx),
    );
    await env.c.syncClaim('default/data');
    const vol = getPv(env.fake, 'mine')!;
    assert.equal(vol.spec?.claimRef?.uid, 'uid-data');
    assert.equal(vol.metadata?.annotations?.['pv.kubernetes.io/bound-by-controller'], undefined);
    assert.equal(getPvc(env.fake, 'data')!.spec?.volumeName, 'mine');
    await env.stop();
  });

  it('binds a claim naming its volume, and refuses a volume that does not satisfy it', async () => {
    const env = await setupController(
      (f) => chain(f).seed(GVR.persistentVolumes, pv('ok'), pv('small', { size: '100Mi' })).seed(GVR.persistentVolumeClaims, pvc('a', { volumeName: 'ok' }), pvc('b', { volumeName: 'small' })),
      (ctx) => create(ctx),
    );
    await env.c.syncClaim('default/a');
    await env.c.syncClaim('default/b');
    const a = getPvc(env.fake, 'a')!;
    assert.equal(a.status?.phase, 'Bound');
    assert.equal(a.metadata?.annotations?.['pv.kubernetes.io/bound-by-controller'], undefined, 'the user bound it');
    assert.equal(getPv(env.fake, 'ok')!.metadata?.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
    assert.equal(getPvc(env.fake, 'b')!.status?.phase, 'Pending');
    assert.ok(env.recorder.events.includes('Warning VolumeMismatch Cannot bind to requested volume "small": requested PV is too small'));
    await env.stop();
  });

  it('leaves a claim of an external provisioner Pending with the ExternalProvisioning event and annotation', async () => {
    const env = await setupController(
      (f) => chain(f).seed(GVR.storageClasses, sc('csi', 'example.com/csi')).seed(GVR.persistentVolumeClaims, pvc('data', { cls: 'csi' })),
      (ctx) => create(ctx),
    );
    await env.c.syncClaim('default/data');
    const claim = getPvc(env.fake, 'data')!;
    assert.equal(claim.metadata?.annotations?.['volume.kubernetes.io/storage-provisioner'], 'example.com/csi');
    assert.equal(claim.metadata?.annotations?.['volume.beta.kubernetes.io/storage-provisioner'], 'example.com/csi');
    assert.equal(claim.status?.phase, 'Pending');
    assert.deepEqual(env.recorder.events, [
      "Normal ExternalProvisioning Waiting for a volume to be created either by the external provisioner 'example.com/csi' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.",
    ]);
    await env.stop();
  });

  it('hands CSI-migrated in-tree provisioners to their driver and fails other in-tree ones', async () => {
    const env = await setupController(
      (f) => chain(f).seed(GVR.storageClasses, sc('ebs', 'kubernetes.io/aws-ebs'), sc('local', 'kubernetes.io/no-provisioner'))
          .seed(GVR.persistentVolumeClaims, pvc('a', { cls: 'ebs' }), pvc('b', { cls: 'local' }), pvc('c', { cls: 'missing' })),
      (ctx) => create(ctx),
    );
    await env.c.syncClaim('default/a');
    await env.c.syncClaim('default/b');
    await env.c.syncClaim('default/c');
    assert.equal(getPvc(env.fake, 'a')!.metadata?.annotations?.['volume.kubernetes.io/storage-provisioner'], 'ebs.csi.aws.com');
    assert.ok(env.recorder.events.includes('Warning ProvisioningFailed no volume plugin matched name: kubernetes.io/no-provisioner'));
    assert.ok(env.recorder.events.includes('Warning ProvisioningFailed storageclass.storage.k8s.io "missing" not found'));
    await env.stop();
  });

  it('waits for the first consumer in WaitForFirstConsumer classes, naming unscheduled pods', async () => {
    const podUsing = (name: string, node?: string): Kube<Pod> => ({
      metadata: { name, namespace: 'default' },
      spec: { ...(node ? { nodeName: node } : {}), containers: [{ name: 'c', image: 'x' }], volumes: [{ name: 'v', persistentVolumeClaim: { claimName: 'late' } }] },
      status: { phase: 'Pending' },
    });
    const env = await setupController(
      (f) => chain(f).seed(GVR.storageClasses, sc('local', 'kubernetes.io/no-provisioner', 'WaitForFirstConsumer'))
          .seed(GVR.persistentVolumes, pv('v', { cls: 'local' }))
          .seed(GVR.persistentVolumeClaims, pvc('data', { cls: 'local' }), pvc('late', { cls: 'local' }))
          .seed(GVR.pods, podUsing('web-0'), podUsing('web-1', 'node-1')),
      (ctx) => create(ctx),
    );
    await env.c.syncClaim('default/data');
    await env.c.syncClaim('default/late');
    assert.equal(getPvc(env.fake, 'data')!.spec?.volumeName, undefined, 'the scheduler binds, not the controller');
    assert.equal(getPv(env.fake, 'v')!.spec?.claimRef, undefined);
    assert.deepEqual(env.recorder.events, ['Normal WaitForFirstConsumer waiting for first consumer to be created before binding', 'Normal WaitForPodScheduled waiting for pod web-0 to be scheduled']);
    await env.stop();
  });

  it('reports a claim without class or volume with FailedBinding, and assigns the default class retroactively', async () => {
    const env = await setupController((f) => chain(f).seed(GVR.persistentVolumeClaims, pvc('plain'), pvc('nocls', { cls: null })), (ctx) => create(ctx));
    await env.c.syncClaim('default/plain');
    assert.deepEqual(env.recorder.events, ['Normal FailedBinding no persistent volumes available for this claim and no storage class is set']);
    await env.c.syncClaim('default/nocls');
    assert.equal(getPvc(env.fake, 'nocls')!.spec?.storageClassName, undefined, 'no default class: unchanged');
    await env.fake.resource(GVR.storageClasses).create(sc('standard', 'example.com/csi', 'Immediate', true));
    await until(() => env.informers.storageClasses().getIndexer().list().length === 1, 'class cached');
    await env.c.syncClaim('default/nocls');
    assert.equal(getPvc(env.fake, 'nocls')!.spec?.storageClassName, 'standard');
    await env.stop();
  });

  it('releases a Retain volume when its claim is deleted and marks the claim Lost when its volume goes', async () => {
    const bound = (name: string, claim: string, policy: string, phase = 'Bound') => pv(name, { claim: { name: claim, uid: `uid-${claim}` }, policy, phase });
    const boundClaim = (name: string, vol: string) => pvc(name, { volumeName: vol, phase: 'Bound', annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } });
    const env = await setupController(
      (f) => chain(f).seed(GVR.persistentVolumes, bound('kept', 'gone', 'Retain'), bound('deleted', 'gone2', 'Delete'), bound('recycled', 'gone3', 'Recycle'))
          .seed(GVR.persistentVolumeClaims, boundClaim('orphan', 'missing-volume')),
      (ctx) => create(ctx),
    );
    await env.c.syncVolume('kept');
    assert.equal(getPv(env.fake, 'kept')!.status?.phase, 'Released');
    assert.equal(getPv(env.fake, 'kept')!.spec?.claimRef?.name, 'gone', 'Retain keeps the claimRef');
    await env.c.syncVolume('deleted');
    assert.equal(getPv(env.fake, 'deleted'), undefined, 'Delete removes the PV object');
    await env.c.syncVolume('recycled');
    const rec = getPv(env.fake, 'recycled')!;
    assert.equal(rec.status?.phase, 'Failed');
    assert.equal(rec.status?.message, 'No recycler plugin found for the volume!');
    assert.ok(env.recorder.events.includes('Warning VolumeFailedRecycle No recycler plugin found for the volume!'));
    await env.c.syncClaim('default/orphan');
    assert.equal(getPvc(env.fake, 'orphan')!.status?.phase, 'Lost');
    assert.ok(env.recorder.events.includes('Warning ClaimLost Bound claim has lost its PersistentVolume. Data on the volume is lost!'));
    await env.stop();
  });

  it('leaves a volume of an external provisioner for its deleter', async () => {
    const env = await setupController(
      (f) => chain(f).seed(GVR.persistentVolumes, pv('ext', { claim: { name: 'gone', uid: 'uid-gone' }, policy: 'Delete', phase: 'Bound', annotations: { 'pv.kubernetes.io/provisioned-by': 'example.com/csi' } })),
      (ctx) => create(ctx),
    );
    await env.c.syncVolume('ext');
    assert.equal(getPv(env.fake, 'ext')!.status?.phase, 'Released');
    await env.stop();
  });

  it('does not release a volume whose claim the cache has not seen yet', async () => {
    const env = await setupController((f) => chain(f).seed(GVR.persistentVolumes, pv('v', { claim: { name: 'new', uid: 'uid-new' }, phase: 'Bound' })), (ctx) => create(ctx));
    // The claim exists on the server but not in the informer cache.
    env.fake.seed(GVR.persistentVolumeClaims, pvc('new', { volumeName: 'v', phase: 'Bound', annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } }));
    await env.c.syncVolume('v');
    assert.equal(getPv(env.fake, 'v')!.status?.phase, 'Bound');
    await env.stop();
  });

  it('unbinds a volume the controller bound to a claim that ended up on another volume', async () => {
    const env = await setupController(
      (f) => chain(f).seed(GVR.persistentVolumes, pv('loser', { claim: { name: 'data', uid: 'uid-data' }, phase: 'Bound', annotations: { 'pv.kubernetes.io/bound-by-controller': 'yes' } }))
          .seed(GVR.persistentVolumeClaims, pvc('data', { volumeName: 'winner', phase: 'Bound', annotations: { 'pv.kubernetes.io/bind-completed': 'yes' } })),
      (ctx) => create(ctx),
    );
    await env.c.syncVolume('loser');
    const vol = getPv(env.fake, 'loser')!;
    assert.equal(vol.spec?.claimRef, undefined);
    assert.equal(vol.metadata?.annotations, undefined);
    assert.equal(vol.status?.phase, 'Available');
    await env.stop();
  });

  it('binds through informer events while running and resyncs on the sync period', async () => {
    const env = await setupController((f) => chain(f).seed(GVR.persistentVolumeClaims, pvc('data')), (ctx) => create(ctx, { syncPeriodMs: 15_000 }));
    const abort = new AbortController();
    const run = env.c.run(1, abort.signal);
    await until(() => getPvc(env.fake, 'data')?.status?.phase === 'Pending' && env.recorder.events.length > 0, 'first sync');
    // A volume created without an event reaching the claim queue is found by the periodic resync.
    await env.fake.resource(GVR.persistentVolumes).create(pv('late'));
    await until(() => getPv(env.fake, 'late')?.status?.phase === 'Available' || getPv(env.fake, 'late')?.status?.phase === 'Bound', 'volume synced');
    await env.clock.advance(15_000);
    await until(() => getPvc(env.fake, 'data')?.status?.phase === 'Bound', 'claim bound after resync');
    assert.equal(getPv(env.fake, 'late')!.status?.phase, 'Bound');
    abort.abort();
    await run;
    assert.equal(env.c.healthy(), true);
    await env.stop();
  });

  it('is registered under its upstream name', () => {
    assert.equal(descriptor.name, 'persistentvolume-binder-controller');
    assert.deepEqual(descriptor.aliases, ['persistentvolume-binder']);
  });
});
