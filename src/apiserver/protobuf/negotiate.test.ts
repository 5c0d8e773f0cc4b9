import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { negotiateMedia, notAcceptableMessage } from './negotiate.js';
import { parseAccept } from '../accept.js';

const builtin = { protobuf: true };
const custom = { protobuf: false };
const pb = 'application/vnd.kubernetes.protobuf';

describe('output media type negotiation', () => {
  it('answers JSON without an Accept header, and for */* and application/*', () => {
    for (const a of [undefined, '', '*/*', 'application/*', 'application/json']) {
      assert.deepEqual(negotiateMedia(a, builtin), { rendering: 'object', encoding: 'json' }, String(a));
    }
  });

  it('answers protobuf when client-go asks for it first', () => {
    assert.deepEqual(negotiateMedia(`${pb}, */*`, builtin), { rendering: 'object', encoding: 'protobuf' });
    assert.deepEqual(negotiateMedia(`${pb};stream=watch, */*`, { ...builtin, stream: true }), { rendering: 'object', encoding: 'protobuf' });
    assert.equal(negotiateMedia(`application/json, ${pb}`, builtin)?.encoding, 'json');
  });

  it('orders clauses by q, then concrete types before wildcards', () => {
    assert.equal(negotiateMedia(`${pb};q=0.5, application/json`, builtin)?.encoding, 'json');
    assert.equal(negotiateMedia(`*/*, ${pb}`, builtin)?.encoding, 'protobuf');
    assert.deepEqual(parseAccept('a/b;q=0.1, */*, c/*, d/e').map((c) => `${c.type}/${c.subType}`), ['d/e', 'c/*', '*/*', 'a/b']);
  });

  it('never sends custom resources as protobuf: JSON when */* is also accepted, 406 otherwise', () => {
    assert.equal(negotiateMedia(`${pb}, */*`, custom)?.encoding, 'json');
    assert.equal(negotiateMedia(pb, custom), undefined);
    assert.equal(negotiateMedia(pb, builtin)?.encoding, 'protobuf');
  });

  it('sends PartialObjectMetadata in protobuf, for custom resources too, but Table only in JSON', () => {
    const gc = `${pb};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json`;
    assert.deepEqual(negotiateMedia(gc, builtin), { rendering: 'metadata', encoding: 'protobuf' });
    assert.deepEqual(negotiateMedia(gc, custom), { rendering: 'metadata', encoding: 'protobuf' });
    assert.deepEqual(negotiateMedia(`${pb};as=Table;g=meta.k8s.io;v=v1, application/json`, builtin), { rendering: 'object', encoding: 'json' });
    assert.deepEqual(negotiateMedia('application/json;as=Table;v=v1;g=meta.k8s.io,application/json', builtin), { rendering: 'table', encoding: 'json' });
    assert.deepEqual(negotiateMedia('application/json;as=Table;v=v1beta1;g=meta.k8s.io', builtin)?.rendering, 'table');
  });

  it('skips unknown transformations, groups and versions', () => {
    assert.equal(negotiateMedia('application/json;as=Widget;g=meta.k8s.io;v=v1', builtin), undefined);
    assert.equal(negotiateMedia('application/json;as=Table;g=meta.k8s.io', builtin), undefined);
    assert.equal(negotiateMedia('application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json', builtin)?.rendering, 'object');
  });

  it('refuses watches whose chosen serializer has no stream form, and unknown stream values', () => {
    assert.equal(negotiateMedia('application/yaml', { ...builtin, stream: true }), undefined);
    assert.deepEqual(negotiateMedia('application/yaml', builtin), { rendering: 'object', encoding: 'json', yaml: true });
    assert.equal(negotiateMedia(`${pb};stream=other`, builtin), undefined);
  });

  it('negotiates errors without transformation', () => {
    const noTransform = { protobuf: true, noTransform: true };
    assert.equal(negotiateMedia(`${pb}, */*`, noTransform)?.encoding, 'protobuf');
    assert.equal(negotiateMedia(`${pb};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json`, noTransform)?.encoding, 'json');
    assert.equal(negotiateMedia('application/json;as=Table;g=meta.k8s.io;v=v1', noTransform), undefined);
  });

  it('lists the accepted media types in a 406', () => {
    assert.equal(notAcceptableMessage(false), 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf');
    assert.equal(notAcceptableMessage(true), 'only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch');
  });

  it('remembers a choice per Accept header and target (frozen), and a 406 as a 406', () => {
    const a = negotiateMedia(`${pb}, */*`, builtin);
    assert.equal(negotiateMedia(`${pb}, */*`, builtin), a);
    assert.ok(Object.isFrozen(a));
    assert.equal(negotiateMedia(`${pb}, */*`, custom)?.encoding, 'json', 'the same header for another target is chosen afresh');
    assert.equal(negotiateMedia(`${pb}, */*`, { ...builtin, stream: true })?.encoding, 'protobuf');
    assert.equal(negotiateMedia(pb, custom), undefined);
    assert.equal(negotiateMedia(pb, custom), undefined);
    // More distinct headers than it keeps: answers stay right after it forgets.
    for (let i = 0; i < 600; i++) assert.equal(negotiateMedia(`application/json;q=0.${i % 10}, text/x-${i}`, builtin)?.encoding, 'json');
    assert.equal(negotiateMedia(`${pb}, */*`, builtin)?.encoding, 'protobuf');
  });
});
