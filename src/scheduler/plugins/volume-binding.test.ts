import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { PersistentVolumeClaim } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import type { KubeObject } from '../../api/types.js';
import { newFakeClient } from '../../controller/testing/fake-client.js';
import { FakeClock, flushMicrotasks } from '../../util/clock/clock.js';
import { fitErrorMessage, schedulePod } from '../algorithm.js';
import { preempt } from '../preemption.js';
import { noLookups, newSnapshot } from '../framework.js';
import { newPodInfo } from '../node-info.js';
import { defaultProfile } from '../profile.js';
import { seededRandom } from '../random.js';
import { claimVolumes, cycle, makeClaim, makeNode, makePod, makeStorageClass, makeVolume, nodeInfos, storageLookups } from '../testing.js';
import {
  ERR_REASON_BIND_CONFLICT,
  ERR_REASON_NODE_CONFLICT,
  ERR_REASON_PV_NOT_EXIST,
  ERR_REASON_UNBOUND_IMMEDIATE,
  newVolumeBinding,
} from './volume-binding.js';

const zoneNode = (name: string, zone: string) => makeNode(name, { labels: { 'topology.kubernetes.io/zone': zone } });

describe('VolumeBinding', () => {
  it('lets pods without claims through', () => {
    const vb = newVolumeBinding();
    const ctx = cycle(makePod('p'), nodeInfos([makeNode('n1')]));
    assert.equal(vb.preFilter!(ctx), undefined);
    assert.equal(vb.filter(ctx, ctx.snapshot.nodes[0]!), undefined);
  });

  it('rejects a pod whose claim does not exist, or whose Immediate claim is unbound, in preFilter', () => {
    const vb = newVolumeBinding();
    const { lookups } = storageLookups({ claims: [makeClaim('data', { class: 'fast' })], classes: [makeStorageClass('fast')] });
    const missing = cycle(makePod('p', { spec: { volumes: claimVolumes('nope') } }), nodeInfos([makeNode('n1')]), lookups);
    assert.deepEqual(vb.preFilter!(missing), { code: 'UnschedulableAndUnresolvable', reasons: ['persistentvolumeclaim "nope" not found'] });
    const unbound = cycle(makePod('p', { spec: { volumes: claimVolumes('data') } }), nodeInfos([makeNode('n1')]), lookups);
    assert.deepEqual(vb.preFilter!(unbound), { code: 'UnschedulableAndUnresolvable', reasons: [ERR_REASON_UNBOUND_IMMEDIATE] });
  });

  it('words the FitError for an unbound Immediate claim as upstream', () => {
    const { lookups } = storageLookups({ claims: [makeClaim('data', { class: 'fast' })], classes: [makeStorageClass('fast')] });
    const pod = makePod('p', { spec: { volumes: claimVolumes('data') } });
    const o = { profile: defaultProfile(), snapshot: newSnapshot(nodeInfos([makeNode('n1'), makeNode('n2')])), lookups: { ...noLookups, ...lookups }, random: seededRandom(1) };
    const r = schedulePod(pod, o, newPodInfo(pod));
    assert.ok(r.kind === 'unschedulable' && r.fit);
    const post = preempt(pod, r.nodeStatuses, { ...o, pdbs: [] });
    assert.equal(
      post.kind === 'none' && fitErrorMessage({ ...r.fit, postFilterMessage: post.message }),
      '0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..',
    );
  });

  it("sends a pod with a claim bound to a local volume to the volume's node", () => {
    const claim = makeClaim('data', { volume: 'local-1' });
    const { lookups } = storageLookups({ claims: [claim], volumes: [makeVolume('local-1', { hosts: ['n2'], claim })] });
    const pod = makePod('p', { spec: { volumes: claimVolumes('data') } });
    const infos = nodeInfos([makeNode('n1'), makeNode('n2'), makeNode('n3')]);
    const vb = newVolumeBinding();
    const ctx = cycle(pod, infos, lookups);
    assert.equal(vb.preFilter!(ctx), undefined);
    assert.deepEqual(vb.filter(ctx, infos[0]!), { code: 'UnschedulableAndUnresolvable', reasons: [ERR_REASON_NODE_CONFLICT] });
    assert.equal(vb.filter(ctx, infos[1]!), undefined);

    const r = schedulePod(pod, { profile: defaultProfile(), snapshot: newSnapshot(infos), lookups: ctx.lookups, random: seededRandom(1) }, newPodInfo(pod));
    assert.equal(r.kind === 'scheduled' && r.node, 'n2');
  });

  it('rejects every node when a bound claim names a volume that does not exist', () => {
    const { lookups } = storageLookups({ claims: [makeClaim('data', { volume: 'gone' })] });
    const vb = newVolumeBinding();
    const ctx = cycle(makePod('p', { spec: { volumes: claimVolumes('data') } }), nodeInfos([makeNode('n1')]), lookups);
    assert.equal(vb.preFilter!(ctx), undefined);
    assert.deepEqual(vb.filter(ctx, ctx.snapshot.nodes[0]!)?.reasons, [ERR_REASON_PV_NOT_EXIST]);
  });

  it('matches a WaitForFirstConsumer claim with the smallest Available volume that fits the node', () => {
    const { lookups } = storageLookups({
      claims: [makeClaim('data', { class: 'local', size: '5Gi' })],
      classes: [makeStorageClass('local', { mode: 'WaitForFirstConsumer', provisioner: 'kubernetes.io/no-provisioner' })],
      volumes: [
        makeVolume('big', { class: 'local', size: '100Gi', hosts: ['n1'] }),
        makeVolume('small', { class: 'local', size: '2Gi', hosts: ['n1'] }),
        makeVolume('right', { class: 'local', size: '10Gi', hosts: ['n1'] }),
        makeVolume('rwx', { class: 'local', size: '5Gi', hosts: ['n1'], accessModes: ['ReadWriteMany'] }),
        makeVolume('other', { class: 'other', size: '5Gi', hosts: ['n2'] }),
      ],
    });
    const vb = newVolumeBinding();
    const infos = nodeInfos([makeNode('n1'), makeNode('n2')]);
    const ctx = cycle(makePod('p', { spec: { volumes: claimVolumes('data') } }), infos, lookups);
    assert.equal(vb.preFilter!(ctx), undefined);
    assert.equal(vb.filter(ctx, infos[0]!), undefined);
    assert.deepEqual(vb.filter(ctx, infos[1]!), { code: 'UnschedulableAndUnresolvable', reasons: [ERR_REASON_BIND_CONFLICT] });
    // Reserve assumes the claimRef on the chosen volume: a second pod's claim can no longer have it.
    assert.equal(vb.reserve(ctx, 'n1'), undefined);
    assert.equal(vb.assumedCount(), 1);
    const { lookups: l2 } = storageLookups({
      claims: [makeClaim('data2', { class: 'local', size: '5Gi' })],
      classes: [makeStorageClass('local', { mode: 'WaitForFirstConsumer', provisioner: 'kubernetes.io/no-provisioner' })],
      volumes: [makeVolume('right', { class: 'local', size: '10Gi', hosts: ['n1'] })],
    });
    const ctx2 = cycle(makePod('q', { spec: { volumes: claimVolumes('data2') } }), infos, l2);
    vb.preFilter!(ctx2);
    assert.deepEqual(vb.filter(ctx2, infos[0]!)?.reasons, [ERR_REASON_BIND_CONFLICT]);
    vb.unreserve(ctx, 'n1');
    assert.equal(vb.assumedCount(), 0);
    const ctx3 = cycle(makePod('q', { spec: { volumes: claimVolumes('data2') } }), infos, l2);
    vb.preFilter!(ctx3);
    assert.equal(vb.filter(ctx3, infos[0]!), undefined);
  });

  it("provisions a WaitForFirstConsumer claim on nodes in the class's allowed topologies", () => {
    const { lookups } = storageLookups({
      claims: [makeClaim('data', { class: 'zonal' })],
      classes: [makeStorageClass('zonal', { mode: 'WaitForFirstConsumer', zones: ['a'] })],
    });
    const vb = newVolumeBinding();
    const infos = nodeInfos([zoneNode('a1', 'a'), zoneNode('b1', 'b')]);
    const ctx = cycle(makePod('p', { spec: { volumes: claimVolumes('data') } }), infos, lookups);
    assert.equal(vb.preFilter!(ctx), undefined);
    assert.equal(vb.filter(ctx, infos[0]!), undefined);
    assert.deepEqual(vb.filter(ctx, infos[1]!)?.reasons, [ERR_REASON_BIND_CONFLICT]);
  });

  it('only accepts the selected node for a claim that already has one', () => {
    const { lookups } = storageLookups({
      claims: [makeClaim('data', { class: 'wffc', annotations: { 'volume.kubernetes.io/selected-node': 'n2' } })],
      classes: [makeStorageClass('wffc', { mode: 'WaitForFirstConsumer' })],
    });
    const vb = newVolumeBinding();
    const infos = nodeInfos([makeNode('n1'), makeNode('n2')]);
    const ctx = cycle(makePod('p', { spec: { volumes: claimVolumes('data') } }), infos, lookups);
    vb.preFilter!(ctx);
    assert.deepEqual(vb.filter(ctx, infos[0]!)?.reasons, [ERR_REASON_BIND_CONFLICT]);
    assert.equal(vb.filter(ctx, infos[1]!), undefined);
  });

  describe('preBind', () => {
    async function setup(claim: PersistentVolumeClaim) {
      const clock = new FakeClock();
      const fake = newFakeClient({ clock });
      fake.seed(GVR.persistentVolumeClaims, { apiVersion: 'v1', kind: 'PersistentVolumeClaim', ...claim } as KubeObject);
      const stored = fake.stored<PersistentVolumeClaim & KubeObject>(GVR.persistentVolumeClaims, 'default', 'data')!;
      const pod = makePod('p', { spec: { volumes: claimVolumes('data') } });
      const { fixture, lookups } = storageLookups({ pods: [pod], claims: [stored], classes: [makeStorageClass('wffc', { mode: 'WaitForFirstConsumer' })] });
      const vb = newVolumeBinding({ client: fake, clock, bindTimeoutMs: 10_000 });
      const infos = nodeInfos([makeNode('n1')]);
      const ctx = cycle(pod, infos, lookups);
      assert.equal(vb.preFilter!(ctx), undefined);
      assert.equal(vb.filter(ctx, infos[0]!), undefined);
      assert.equal(vb.reserve(ctx, 'n1'), undefined);
      let result: unknown = 'pending';
      void vb.preBind(ctx, 'n1', new AbortController().signal).then((s) => (result = s));
      for (let i = 0; i < 5; i++) await flushMicrotasks();
      const written = fake.stored<PersistentVolumeClaim & KubeObject>(GVR.persistentVolumeClaims, 'default', 'data')!;
      return { clock, fake, fixture, vb, written, result: () => result };
    }

    it('writes the selected-node annotation and waits until the claim is bound', async () => {
      const t = await setup(makeClaim('data', { class: 'wffc' }));
      assert.equal(t.written.metadata?.annotations?.['volume.kubernetes.io/selected-node'], 'n1');
      t.fixture.claims = [t.written];
      await t.clock.advance(1_000);
      await flushMicrotasks();
      assert.equal(t.result(), 'pending');
      // The provisioner and the PersistentVolume controller bind the claim.
      const bound = await t.fake.resource(GVR.persistentVolumeClaims).namespace('default').update({
        ...t.written,
        metadata: { ...t.written.metadata, annotations: { ...t.written.metadata?.annotations, 'pv.kubernetes.io/bind-completed': 'yes' } },
        spec: { ...t.written.spec, volumeName: 'pvc-1' },
      }) as PersistentVolumeClaim;
      t.fixture.claims = [bound];
      t.fixture.volumes = [makeVolume('pvc-1', { class: 'wffc', claim: bound })];
      await t.clock.advance(1_000);
      for (let i = 0; i < 5; i++) await flushMicrotasks();
      assert.equal(t.result(), undefined);
    });

    it('fails when the provisioner removes the selected-node annotation', async () => {
      const t = await setup(makeClaim('data', { class: 'wffc' }));
      const reset = await t.fake.resource(GVR.persistentVolumeClaims).namespace('default').update({ ...t.written, metadata: { ...t.written.metadata, annotations: {} } }) as PersistentVolumeClaim;
      t.fixture.claims = [reset];
      await t.clock.advance(1_000);
      for (let i = 0; i < 5; i++) await flushMicrotasks();
      assert.deepEqual(t.result(), { code: 'Error', reasons: ['binding volumes: selectedNode annotation reset for PVC "data"'] });
    });

    it('gives up after the bind timeout', async () => {
      const t = await setup(makeClaim('data', { class: 'wffc' }));
      t.fixture.claims = [t.written];
      for (let i = 0; i < 10; i++) {
        await t.clock.advance(1_000);
        await flushMicrotasks();
      }
      for (let i = 0; i < 5; i++) await flushMicrotasks();
      assert.deepEqual(t.result(), { code: 'Error', reasons: ['binding volumes: context deadline exceeded'] });
    });
  });
});
