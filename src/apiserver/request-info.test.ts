import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseRequestInfo, truthyParam } from './request-info.js';
import { decodeContinue, encodeContinue, startAfterKey } from './continue-token.js';
import { humanDuration } from './table.js';
import { negotiate } from './output.js';

describe('request info', () => {
  it('parses namespaced, cluster-scoped and subresource paths', () => {
    assert.deepEqual(parseRequestInfo('GET', '/apis/apps/v1/namespaces/ns/deployments/web/scale', false), {
      kind: 'resource', group: 'apps', version: 'v1', namespace: 'ns', resource: 'deployments', name: 'web', subresource: 'scale', verb: 'get',
    });
    const nsStatus = parseRequestInfo('PUT', '/api/v1/namespaces/x/finalize', false);
    assert.deepEqual(nsStatus, { kind: 'resource', group: '', version: 'v1', namespace: '', resource: 'namespaces', name: 'x', subresource: 'finalize', verb: 'update' });
    const ns = parseRequestInfo('DELETE', '/api/v1/namespaces/x', false);
    assert.equal(ns.kind === 'resource' && ns.name, 'x');
    const list = parseRequestInfo('GET', '/api/v1/pods', true);
    assert.equal(list.kind === 'resource' && list.verb, 'watch');
    const legacy = parseRequestInfo('GET', '/api/v1/watch/namespaces/a/pods', false);
    assert.equal(legacy.kind === 'resource' && legacy.verb, 'watch');
    assert.equal(parseRequestInfo('DELETE', '/api/v1/namespaces/a/pods', false).kind === 'resource' && (parseRequestInfo('DELETE', '/api/v1/namespaces/a/pods', false) as any).verb, 'deletecollection');
    assert.equal(parseRequestInfo('GET', '/apis/apps/v1', false).kind, 'nonResource');
  });

  it('reads watch flags like apiserver', () => {
    assert.equal(truthyParam('1'), true);
    assert.equal(truthyParam('true'), true);
    assert.equal(truthyParam('false'), false);
    assert.equal(truthyParam('0'), false);
    assert.equal(truthyParam(null), false);
  });
});

describe('continue tokens', () => {
  it('round-trips the revision and resumes after the last key', () => {
    const tok = encodeContinue(42, '/registry/pods/ns/b', '/registry/pods/');
    const d = decodeContinue(tok);
    assert.equal(d.rv, 42);
    assert.equal(startAfterKey(d, '/registry/pods/'), '/registry/pods/ns/b');
  });

  it('refuses foreign or path-escaping tokens', () => {
    assert.throws(() => decodeContinue(Buffer.from('{"v":"x","rv":1,"start":"a"}').toString('base64url')), /continue key is not valid/);
    assert.throws(() => decodeContinue(Buffer.from('{"v":"meta.k8s.io/v1","rv":1,"start":"../etc"}').toString('base64url')), /not a valid relative path/);
  });
});

describe('rendering helpers', () => {
  it('prints ages like kubectl', () => {
    assert.equal(humanDuration(45_000), '45s');
    assert.equal(humanDuration(310_000), '5m10s');
    assert.equal(humanDuration(3 * 3600_000), '3h');
    assert.equal(humanDuration((2 * 24 + 5) * 3600_000), '2d5h');
    assert.equal(humanDuration(400 * 24 * 3600_000), '400d');
  });

  it('negotiates Table, metadata and plain JSON from Accept', () => {
    assert.equal(negotiate('application/json;as=Table;v=v1;g=meta.k8s.io,application/json'), 'table');
    assert.equal(negotiate('application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1'), 'metadata');
    assert.equal(negotiate('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json'), 'object');
    assert.equal(negotiate(undefined), 'object');
  });
});
