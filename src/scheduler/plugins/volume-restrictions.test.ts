import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { claimVolumes, cycle, makeClaim, makeNode, makePod, nodeInfos, storageLookups } from '../testing.js';
import { ERR_REASON_DISK_CONFLICT, ERR_REASON_RWOP_CONFLICT, volumeRestrictions } from './volume-restrictions.js';

describe('VolumeRestrictions', () => {
  it('rejects every node while another pod uses a ReadWriteOncePod claim', () => {
    const claim = makeClaim('solo', { accessModes: ['ReadWriteOncePod'], volume: 'pv-1' });
    const { lookups } = storageLookups({ claims: [claim] });
    const user = makePod('user', { nodeName: 'n1', spec: { volumes: claimVolumes('solo') } });
    const infos = nodeInfos([makeNode('n1'), makeNode('n2')], [user]);
    const ctx = cycle(makePod('p', { spec: { volumes: claimVolumes('solo') } }), infos, lookups);
    assert.equal(volumeRestrictions.preFilter!(ctx), undefined);
    for (const n of infos) assert.deepEqual(volumeRestrictions.filter(ctx, n), { code: 'Unschedulable', reasons: [ERR_REASON_RWOP_CONFLICT] });

    const free = cycle(makePod('p', { spec: { volumes: claimVolumes('solo') } }), nodeInfos([makeNode('n1'), makeNode('n2')]), lookups);
    volumeRestrictions.preFilter!(free);
    assert.equal(volumeRestrictions.filter(free, free.snapshot.nodes[0]!), undefined);
  });

  it('lets ReadWriteOnce claims be shared and needs the claim to exist', () => {
    const { lookups } = storageLookups({ claims: [makeClaim('shared', { volume: 'pv-1' })] });
    const user = makePod('user', { nodeName: 'n1', spec: { volumes: claimVolumes('shared') } });
    const ctx = cycle(makePod('p', { spec: { volumes: claimVolumes('shared') } }), nodeInfos([makeNode('n1')], [user]), lookups);
    assert.equal(volumeRestrictions.preFilter!(ctx), undefined);
    assert.equal(volumeRestrictions.filter(ctx, ctx.snapshot.nodes[0]!), undefined);
    const missing = cycle(makePod('p', { spec: { volumes: claimVolumes('nope') } }), nodeInfos([makeNode('n1')]), lookups);
    assert.deepEqual(volumeRestrictions.preFilter!(missing), { code: 'UnschedulableAndUnresolvable', reasons: ['persistentvolumeclaim "nope" not found'] });
  });

  it('rejects a node where another pod mounts the same EBS volume or a read-write GCE PD', () => {
    const ebs = { name: 'd', awsElasticBlockStore: { volumeID: 'vol-1' } };
    const onNode = makePod('user', { nodeName: 'n1', spec: { volumes: [ebs, { name: 'g', gcePersistentDisk: { pdName: 'pd', readOnly: true } }] } });
    const infos = nodeInfos([makeNode('n1'), makeNode('n2')], [onNode]);
    const ctx = cycle(makePod('p', { spec: { volumes: [ebs] } }), infos);
    volumeRestrictions.preFilter!(ctx);
    assert.deepEqual(volumeRestrictions.filter(ctx, infos[0]!), { code: 'Unschedulable', reasons: [ERR_REASON_DISK_CONFLICT] });
    assert.equal(volumeRestrictions.filter(ctx, infos[1]!), undefined);
    const roPD = cycle(makePod('p', { spec: { volumes: [{ name: 'g', gcePersistentDisk: { pdName: 'pd', readOnly: true } }] } }), infos);
    assert.equal(volumeRestrictions.filter(roPD, infos[0]!), undefined);
    const rwPD = cycle(makePod('p', { spec: { volumes: [{ name: 'g', gcePersistentDisk: { pdName: 'pd' } }] } }), infos);
    assert.deepEqual(volumeRestrictions.filter(rwPD, infos[0]!)?.reasons, [ERR_REASON_DISK_CONFLICT]);
  });
});
