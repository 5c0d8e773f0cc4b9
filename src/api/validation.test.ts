import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  aggregateMessage,
  duplicate,
  fieldErrorBody,
  forbidden,
  GoLiteral,
  internalError,
  invalid,
  isCIdentifier,
  isConfigMapKey,
  isDNS1035Label,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidLabelValue,
  isValidPercent,
  isValidPortName,
  isValidPortNum,
  notSupported,
  required,
  tooLong,
  tooMany,
  validateAnnotations,
  validateLabels,
  validatePathSegmentName,
} from './validation.js';

const labelMsg =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character " +
  "(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const subdomainMsg =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

describe('DNS name checks', () => {
  it('accepts valid RFC 1123 labels and subdomains', () => {
    assert.deepEqual(isDNS1123Label('my-name'), []);
    assert.deepEqual(isDNS1123Label('123-abc'), []);
    assert.deepEqual(isDNS1123Subdomain('example.com'), []);
  });

  it('words label failures exactly as Kubernetes', () => {
    assert.deepEqual(isDNS1123Label('My-Name'), [labelMsg]);
    assert.deepEqual(isDNS1123Label('a.b'), ['must not contain dots']);
    assert.deepEqual(isDNS1123Label('a'.repeat(64)), ['must be no more than 63 bytes']);
    assert.deepEqual(isDNS1123Subdomain('-a'), [subdomainMsg]);
    assert.deepEqual(isDNS1123Subdomain('a'.repeat(254)), ['must be no more than 253 bytes']);
  });

  it('requires RFC 1035 labels to start with a letter', () => {
    assert.deepEqual(isDNS1035Label('abc-123'), []);
    assert.equal(isDNS1035Label('1abc').length, 1);
    assert.match(isDNS1035Label('1abc')[0]!, /^a DNS-1035 label must consist of/);
  });
});

describe('label keys and values', () => {
  it('accepts prefixed and plain qualified names', () => {
    assert.deepEqual(isQualifiedName('app'), []);
    assert.deepEqual(isQualifiedName('app.kubernetes.io/name'), []);
    assert.deepEqual(isQualifiedName('My.Name_1'), []);
  });

  it('explains which part of a qualified name is wrong', () => {
    assert.deepEqual(isQualifiedName('/a'), ['prefix part must be non-empty']);
    assert.deepEqual(isQualifiedName('a/'), [
      'name part must be non-empty',
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]);
    assert.deepEqual(isQualifiedName('x'.repeat(64)), ['name part must be no more than 63 bytes']);
    assert.match(isQualifiedName('a/b/c')[0]!, /^a valid label key must consist of .* with an optional DNS subdomain prefix and '\/' \(e\.g\. 'example\.com\/MyName'\)$/);
    assert.match(isQualifiedName('Bad_Prefix/a')[0]!, /^prefix part a lowercase RFC 1123 subdomain/);
  });

  it('validates label values', () => {
    assert.deepEqual(isValidLabelValue(''), []);
    assert.deepEqual(isValidLabelValue('v1.2_x-y'), []);
    assert.deepEqual(isValidLabelValue('-a'), [
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]);
    assert.deepEqual(isValidLabelValue('é'.repeat(32)).slice(0, 1), ['must be no more than 63 bytes'], 'lengths count UTF-8 bytes');
  });
});

describe('ports, identifiers and path segments', () => {
  it('checks port numbers and names', () => {
    assert.deepEqual(isValidPortNum(80), []);
    assert.deepEqual(isValidPortNum(0), ['must be between 1 and 65535, inclusive']);
    assert.deepEqual(isValidPortNum(65536), ['must be between 1 and 65535, inclusive']);
    assert.deepEqual(isValidPortName('http'), []);
    assert.deepEqual(isValidPortName('-http--'), ['must not contain consecutive hyphens', 'must not begin or end with a hyphen']);
    assert.deepEqual(isValidPortName('12'), ['must contain at least one letter (a-z)']);
    assert.deepEqual(isValidPortName('HTTP'), [
      'must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)',
      'must contain at least one letter (a-z)',
    ]);
    assert.deepEqual(isValidPortName('abcdefghijklmnop'), ['must be no more than 15 bytes']);
  });

  it('checks C identifiers, percents and config map keys', () => {
    assert.deepEqual(isCIdentifier('MY_NAME1'), []);
    assert.deepEqual(isCIdentifier('1a'), [
      "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')",
    ]);
    assert.deepEqual(isValidPercent('50%'), []);
    assert.equal(isValidPercent('50').length, 1);
    assert.deepEqual(isConfigMapKey('key.name'), []);
    assert.deepEqual(isConfigMapKey('..a'), ["must not start with '..'"]);
  });

  it('rejects names that cannot be a URL path segment', () => {
    assert.deepEqual(validatePathSegmentName('..'), ["may not be '..'"]);
    assert.deepEqual(validatePathSegmentName('.'), ["may not be '.'"]);
    assert.deepEqual(validatePathSegmentName('a/b%c'), ["may not contain '/'", "may not contain '%'"]);
    assert.deepEqual(validatePathSegmentName('..', true), []);
    assert.deepEqual(validatePathSegmentName('ok-name'), []);
  });
});

describe('field errors', () => {
  it('formats messages as field.Error.Error()', () => {
    assert.equal(invalid('spec.replicas', -1, 'must be greater than or equal to 0').message, 'spec.replicas: Invalid value: -1: must be greater than or equal to 0');
    assert.equal(invalid('metadata.name', 'A', 'bad').message, 'metadata.name: Invalid value: "A": bad');
    assert.equal(invalid('spec.x', null, 'bad').message, 'spec.x: Invalid value: null: bad');
    assert.equal(invalid('spec.x', true, 'bad').message, 'spec.x: Invalid value: true: bad');
    assert.equal(invalid('spec.x', ['a', 'b'], 'bad').message, 'spec.x: Invalid value: []string{"a", "b"}: bad');
    assert.equal(invalid('spec.x', new GoLiteral('[]string(nil)'), 'bad').message, 'spec.x: Invalid value: []string(nil): bad');
    assert.equal(invalid('spec.x', 'tab\there "q"', 'bad').message, 'spec.x: Invalid value: "tab\\there \\"q\\"": bad');
    assert.equal(required('metadata.name').message, 'metadata.name: Required value');
    assert.equal(required('metadata.name', 'name or generateName is required').message, 'metadata.name: Required value: name or generateName is required');
    assert.equal(
      notSupported('spec.restartPolicy', 'Sometimes', ['Always', 'OnFailure', 'Never']).message,
      'spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"',
    );
    assert.equal(forbidden('spec', 'updates are forbidden').message, 'spec: Forbidden: updates are forbidden');
    assert.equal(duplicate('spec.containers[1].name', 'web').message, 'spec.containers[1].name: Duplicate value: "web"');
    assert.equal(tooLong('metadata.annotations', '', 262144).message, 'metadata.annotations: Too long: must have at most 262144 bytes');
    assert.equal(tooMany('spec.x', 5, 4).message, 'spec.x: Too many: 5: must have at most 4 items');
    assert.equal(internalError('spec', 'boom').message, 'spec: Internal error: boom');
  });

  it('exposes type, field, bad value and body', () => {
    const e = invalid('spec.replicas', -1, 'must be greater than or equal to 0');
    assert.equal(e.type, 'FieldValueInvalid');
    assert.equal(e.field, 'spec.replicas');
    assert.equal(e.badValue, -1);
    assert.equal(fieldErrorBody(e), 'Invalid value: -1: must be greater than or equal to 0');
    assert.equal(Object.isFrozen(e), true);
  });

  it('aggregates messages like utilerrors, dropping duplicates', () => {
    const a = required('a');
    const b = required('b');
    assert.equal(aggregateMessage([]), '');
    assert.equal(aggregateMessage([a]), 'a: Required value');
    assert.equal(aggregateMessage([a, b, a]), '[a: Required value, b: Required value]');
  });
});

describe('metadata validation', () => {
  it('validates label keys and values under the labels path', () => {
    assert.deepEqual(validateLabels({ app: 'web' }, 'metadata.labels'), []);
    const errs = validateLabels({ 'bad key': 'ok', good: '-bad' }, 'metadata.labels');
    assert.equal(errs.length, 2);
    assert.match(errs[0]!.message, /^metadata\.labels: Invalid value: "bad key": name part must consist of/);
    assert.match(errs[1]!.message, /^metadata\.labels: Invalid value: "-bad": a valid label must be/);
  });

  it('accepts upper-case annotation keys and limits their total size', () => {
    assert.deepEqual(validateAnnotations({ 'Example.COM/Key': 'v' }, 'metadata.annotations'), []);
    const errs = validateAnnotations({ a: 'x'.repeat(256 * 1024) }, 'metadata.annotations');
    assert.deepEqual(errs.map((e) => e.message), ['metadata.annotations: Too long: must have at most 262144 bytes']);
  });
});
