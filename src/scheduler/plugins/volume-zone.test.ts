import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { claimVolumes, cycle, makeClaim, makeNode, makePod, makeStorageClass, makeVolume, nodeInfos, storageLookups } from '../testing.js';
import { ERR_REASON_VOLUME_ZONE_CONFLICT, volumeZone } from './volume-zone.js';

describe('VolumeZone', () => {
  const claim = makeClaim('data', { volume: 'pv-a' });
  const zones = (zone: string) => ({ 'topology.kubernetes.io/zone': zone, 'topology.kubernetes.io/region': 'r1' });

  it("keeps a pod with a zonal volume to nodes in the volume's zones", () => {
    const { lookups } = storageLookups({ claims: [claim], volumes: [makeVolume('pv-a', { labels: { 'topology.kubernetes.io/zone': 'a__c' }, claim })] });
    const infos = nodeInfos([makeNode('a1', { labels: zones('a') }), makeNode('b1', { labels: zones('b') }), makeNode('c1', { labels: zones('c') }), makeNode('plain')]);
    const ctx = cycle(makePod('p', { spec: { volumes: claimVolumes('data') } }), infos, lookups);
    assert.equal(volumeZone.preFilter!(ctx), undefined);
    assert.deepEqual(
      infos.map((n) => volumeZone.filter(ctx, n)?.reasons[0]),
      [undefined, ERR_REASON_VOLUME_ZONE_CONFLICT, undefined, undefined],
    );
  });

  it('matches a beta zone label on the volume against the GA label on the node', () => {
    const { lookups } = storageLookups({ claims: [claim], volumes: [makeVolume('pv-a', { labels: { 'failure-domain.beta.kubernetes.io/zone': 'b' }, claim })] });
    const infos = nodeInfos([makeNode('a1', { labels: zones('a') }), makeNode('b1', { labels: zones('b') })]);
    const ctx = cycle(makePod('p', { spec: { volumes: claimVolumes('data') } }), infos, lookups);
    volumeZone.preFilter!(ctx);
    assert.deepEqual(volumeZone.filter(ctx, infos[0]!), { code: 'UnschedulableAndUnresolvable', reasons: [ERR_REASON_VOLUME_ZONE_CONFLICT] });
    assert.equal(volumeZone.filter(ctx, infos[1]!), undefined);
  });

  it('skips unbound WaitForFirstConsumer claims and rejects unbound Immediate ones', () => {
    const { lookups } = storageLookups({
      claims: [makeClaim('late', { class: 'wffc' }), makeClaim('now', { class: 'imm' })],
      classes: [makeStorageClass('wffc', { mode: 'WaitForFirstConsumer' }), makeStorageClass('imm')],
    });
    const infos = nodeInfos([makeNode('a1', { labels: zones('a') })]);
    assert.equal(volumeZone.preFilter!(cycle(makePod('p', { spec: { volumes: claimVolumes('late') } }), infos, lookups)), undefined);
    assert.deepEqual(volumeZone.preFilter!(cycle(makePod('p', { spec: { volumes: claimVolumes('now') } }), infos, lookups))?.reasons, ['PersistentVolume had no name']);
  });
});
