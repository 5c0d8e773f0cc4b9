import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  escapeFieldValue,
  everythingFieldSelector,
  fieldSelectorFromSet,
  FieldSelectorParseError,
  oneTermEqualSelector,
  parseFieldSelector,
  unescapeFieldValue,
} from './fields.js';

describe('parseFieldSelector', () => {
  it('parses =, == and != terms and sorts them', () => {
    const s = parseFieldSelector('status.phase!=Running,metadata.name==web');
    assert.deepEqual(s.requirements(), [
      { field: 'metadata.name', operator: '==', value: 'web' },
      { field: 'status.phase', operator: '!=', value: 'Running' },
    ]);
    assert.equal(s.toString(), 'metadata.name=web,status.phase!=Running');
  });

  it('selects everything for the empty string and skips empty terms', () => {
    assert.equal(parseFieldSelector('').empty(), true);
    assert.equal(parseFieldSelector(',a=b,').requirements().length, 1);
  });

  it('matches missing fields as the empty string', () => {
    assert.equal(parseFieldSelector('spec.nodeName=').matches({}), true);
    assert.equal(parseFieldSelector('spec.nodeName!=').matches({ 'spec.nodeName': 'n1' }), true);
    assert.equal(parseFieldSelector('spec.nodeName=n1').matches({ 'spec.nodeName': 'n2' }), false);
    assert.equal(parseFieldSelector('a=1,b=2').matches({ a: '1', b: '2' }), true);
  });

  it('unescapes backslash escapes in values and escapes them again in toString', () => {
    const s = parseFieldSelector('metadata.name=a\\,b\\=c\\\\d');
    assert.equal(s.requirements()[0]!.value, 'a,b=c\\d');
    assert.equal(s.toString(), 'metadata.name=a\\,b\\=c\\\\d');
    assert.equal(s.matches({ 'metadata.name': 'a,b=c\\d' }), true);
  });

  it('rejects terms without an operator', () => {
    assert.throws(() => parseFieldSelector('abc'), {
      name: 'FieldSelectorParseError',
      message: "invalid selector: 'abc'; can't understand 'abc'",
    });
  });

  it('rejects unescaped and badly escaped characters as apimachinery does', () => {
    assert.throws(() => parseFieldSelector('a=b=c'), { message: 'invalid field selector: unescaped character in value: 61' });
    assert.throws(() => parseFieldSelector('a=b\\q'), { message: 'invalid field selector: invalid escape sequence: \\q' });
    assert.throws(() => parseFieldSelector('a=b\\'), FieldSelectorParseError);
  });

  it('reports exact-match requirements for indexing', () => {
    const s = parseFieldSelector('spec.nodeName=n1,status.phase!=Failed');
    assert.equal(s.requiresExactMatch('spec.nodeName'), 'n1');
    assert.equal(s.requiresExactMatch('status.phase'), undefined);
  });

  it('transforms fields and values into a new selector', () => {
    const s = parseFieldSelector('name=web').transform((field, value) => ({ field: `metadata.${field}`, value: value.toUpperCase() }));
    assert.equal(s.toString(), 'metadata.name=WEB');
  });
});

describe('field selector helpers', () => {
  it('builds one-term and set selectors', () => {
    assert.equal(oneTermEqualSelector('metadata.name', 'a,b').toString(), 'metadata.name=a\\,b');
    assert.equal(fieldSelectorFromSet({ a: '1' }).matches({ a: '1' }), true);
    assert.equal(everythingFieldSelector().matches({ x: 'y' }), true);
  });

  it('round-trips escape and unescape', () => {
    for (const v of ['plain', 'a,b', 'x=y', 'back\\slash', '']) assert.equal(unescapeFieldValue(escapeFieldValue(v)), v);
  });
});
