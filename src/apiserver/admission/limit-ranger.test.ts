import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, type TestServer } from '../test-server.js';
import { aggregateMessage, defaultLimitRangeItem } from './limit-ranger.js';

const pod = (name: string, containers: Record<string, unknown>[]) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers } });

describe('LimitRanger admission', () => {
  let t: TestServer;
  before(async () => {
    t = await startTestServer();
    await t.request('POST', '/api/v1/namespaces', { metadata: { name: 'lr' } });
    await t.request('POST', '/api/v1/namespaces/lr/serviceaccounts', { metadata: { name: 'default' } });
    const lr = {
      metadata: { name: 'limits' },
      spec: {
        limits: [
          { type: 'Container', default: { cpu: '500m', memory: '256Mi' }, defaultRequest: { cpu: '200m' }, min: { cpu: '100m' }, max: { cpu: '1' }, maxLimitRequestRatio: { cpu: '4' } },
          { type: 'PersistentVolumeClaim', min: { storage: '1Gi' }, max: { storage: '10Gi' } },
        ],
      },
    };
    const res = await t.request('POST', '/api/v1/namespaces/lr/limitranges', lr);
    assert.equal(res.status, 201, res.text);
  });
  after(async () => {
    await t.close();
  });

  it('fills missing requests and limits from the defaults and notes it in an annotation', async () => {
    const res = await t.request('POST', '/api/v1/namespaces/lr/pods', pod('d', [{ name: 'web', image: 'nginx' }, { name: 'side', image: 'x', resources: { requests: { cpu: '300m' } } }]));
    assert.equal(res.status, 201, res.text);
    const [web, side] = res.body.spec.containers;
    assert.deepEqual(web.resources, { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '200m', memory: '256Mi' } });
    assert.deepEqual(side.resources, { limits: { cpu: '500m', memory: '256Mi' }, requests: { cpu: '300m', memory: '256Mi' } });
    assert.equal(
      res.body.metadata.annotations['kubernetes.io/limit-ranger'],
      'LimitRanger plugin set: cpu, memory request for container web; cpu, memory limit for container web; memory request for container side; cpu, memory limit for container side',
    );
  });

  it('refuses a container under the minimum with upstream message', async () => {
    const res = await t.request('POST', '/api/v1/namespaces/lr/pods', pod('small', [{ name: 'c', image: 'x', resources: { requests: { cpu: '50m' }, limits: { cpu: '100m' } } }]));
    assert.equal(res.status, 403);
    assert.equal(res.body.message, 'pods "small" is forbidden: minimum cpu usage per Container is 100m, but request is 50m');
  });

  it('lists several violations in brackets', async () => {
    const res = await t.request('POST', '/api/v1/namespaces/lr/pods', pod('big', [{ name: 'c', image: 'x', resources: { requests: { cpu: '100m' }, limits: { cpu: '2' } } }]));
    assert.equal(res.status, 403);
    assert.equal(res.body.message, 'pods "big" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, cpu max limit to request ratio per Container is 4, but provided ratio is 20.000000]');
  });

  it('enforces PVC storage bounds', async () => {
    const pvc = (name: string, storage: string) => ({ metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage } } } });
    assert.equal((await t.request('POST', '/api/v1/namespaces/lr/persistentvolumeclaims', pvc('ok', '5Gi'))).status, 201);
    const big = await t.request('POST', '/api/v1/namespaces/lr/persistentvolumeclaims', pvc('huge', '20Gi'));
    assert.equal(big.status, 403);
    assert.equal(big.body.message, 'persistentvolumeclaims "huge" is forbidden: maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi');
    const tiny = await t.request('POST', '/api/v1/namespaces/lr/persistentvolumeclaims', pvc('tiny', '500Mi'));
    assert.equal(tiny.body.message, 'persistentvolumeclaims "tiny" is forbidden: minimum storage usage per PersistentVolumeClaim is 1Gi, but request is 500Mi');
  });

  it('defaults a Container item as the API does: default from max, defaultRequest from default then min', () => {
    const item = defaultLimitRangeItem({ type: 'Container', max: { cpu: '2' }, min: { memory: '64Mi' } });
    assert.deepEqual(item.default, { cpu: '2' });
    assert.deepEqual(item.defaultRequest, { cpu: '2', memory: '64Mi' });
    assert.equal(defaultLimitRangeItem({ type: 'Pod', max: { cpu: '2' } }).default, undefined);
  });

  it('formats aggregates like utilerrors: one error plain, duplicates dropped', () => {
    assert.equal(aggregateMessage(['a']), 'a');
    assert.equal(aggregateMessage(['a', 'a']), 'a');
    assert.equal(aggregateMessage(['a', 'b']), '[a, b]');
  });
});
