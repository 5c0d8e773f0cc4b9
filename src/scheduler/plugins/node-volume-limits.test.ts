import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { CSINode } from 'kubernetes-types/storage/v1.js';
import { claimVolumes, cycle, makeClaim, makeNode, makePod, makeStorageClass, makeVolume, nodeInfos, storageLookups } from '../testing.js';
import { ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED, nodeVolumeLimits } from './node-volume-limits.js';

const DRIVER = 'ebs.csi.aws.com';
const csiNode = (name: string, count: number): CSINode => ({ metadata: { name }, spec: { drivers: [{ name: DRIVER, nodeID: name, allocatable: { count } }] } });

describe('NodeVolumeLimits', () => {
  const claims = ['c1', 'c2', 'c3'].map((c, i) => makeClaim(c, { volume: `pv-${i + 1}` }));
  const volumes = claims.map((c, i) => makeVolume(`pv-${i + 1}`, { csi: { driver: DRIVER, handle: `vol-${i + 1}` }, claim: c }));

  it('rejects a node whose CSI driver would exceed its allocatable count', () => {
    const { lookups } = storageLookups({ claims, volumes, csiNodes: [csiNode('n1', 2), csiNode('n2', 3)] });
    const existing = makePod('e', { nodeName: 'n1', spec: { volumes: claimVolumes('c1') } });
    const existing2 = makePod('e2', { nodeName: 'n2', spec: { volumes: claimVolumes('c1') } });
    const infos = nodeInfos([makeNode('n1'), makeNode('n2'), makeNode('n3')], [existing, existing2]);
    const ctx = cycle(makePod('p', { spec: { volumes: claimVolumes('c2', 'c3') } }), infos, lookups);
    assert.deepEqual(nodeVolumeLimits.filter(ctx, infos[0]!), { code: 'Unschedulable', reasons: [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED] });
    assert.equal(nodeVolumeLimits.filter(ctx, infos[1]!), undefined);
    assert.equal(nodeVolumeLimits.filter(ctx, infos[2]!), undefined, 'no CSINode: no limit');
  });

  it('counts a volume already attached for another pod once', () => {
    const { lookups } = storageLookups({ claims, volumes, csiNodes: [csiNode('n1', 2)] });
    const existing = makePod('e', { nodeName: 'n1', spec: { volumes: claimVolumes('c1', 'c2') } });
    const infos = nodeInfos([makeNode('n1')], [existing]);
    assert.equal(nodeVolumeLimits.filter(cycle(makePod('p', { spec: { volumes: claimVolumes('c2') } }), infos, lookups), infos[0]!), undefined);
    assert.deepEqual(nodeVolumeLimits.filter(cycle(makePod('p', { spec: { volumes: claimVolumes('c3') } }), infos, lookups), infos[0]!)?.reasons, [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED]);
  });

  it("counts an unbound claim as a volume of its class's provisioner", () => {
    const { lookups } = storageLookups({
      claims: [makeClaim('new', { class: 'ebs' }), ...claims],
      volumes,
      classes: [makeStorageClass('ebs', { provisioner: DRIVER, mode: 'WaitForFirstConsumer' })],
      csiNodes: [csiNode('n1', 1)],
    });
    const infos = nodeInfos([makeNode('n1')], [makePod('e', { nodeName: 'n1', spec: { volumes: claimVolumes('c1') } })]);
    assert.deepEqual(nodeVolumeLimits.filter(cycle(makePod('p', { spec: { volumes: claimVolumes('new') } }), infos, lookups), infos[0]!)?.reasons, [ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED]);
  });
});
