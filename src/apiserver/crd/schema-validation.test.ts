import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { validateValue } from './schema-validation.js';
import { prune } from './schema-pruning.js';
import { applyDefaults } from './schema-defaulting.js';
import type { Schema } from './schema.js';

const spec: Schema = {
  type: 'object',
  properties: {
    replicas: { type: 'integer', minimum: 0, maximum: 10 },
    name: { type: 'string', minLength: 3, maxLength: 5, pattern: '^[a-z]+$' },
    mode: { type: 'string', enum: ['Fast', 'Slow'] },
    port: { 'x-kubernetes-int-or-string': true },
    tags: { type: 'array', maxItems: 2, items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
    when: { type: 'string', format: 'date-time' },
    ratio: { type: 'number', exclusiveMaximum: true, maximum: 1 },
    opt: { type: 'string', nullable: true },
    items: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
    labels: { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 2 },
  },
  required: ['replicas'],
};
const root: Schema = { type: 'object', properties: { spec } };

const messages = (v: unknown) => validateValue(v, root).map((e) => e.message);

describe('structural schema validation', () => {
  it('accepts a value that follows the schema', () => {
    assert.deepEqual(messages({ spec: { replicas: 3, name: 'abc', mode: 'Fast', port: 'http', tags: ['a'], when: '2024-01-02T03:04:05Z', ratio: 0.5, opt: null, items: [{ name: 'x' }], labels: { a: 'b' } } }), []);
  });

  it('names the field and the expected type as kube-apiserver does', () => {
    const errs = validateValue({ spec: { replicas: 'string' } }, root);
    assert.equal(errs.length, 1);
    assert.equal(errs[0]!.field, 'spec.replicas');
    assert.equal(errs[0]!.type, 'FieldValueTypeInvalid');
    assert.equal(errs[0]!.message, 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"');
  });

  it('reports a missing required field as Required value', () => {
    assert.deepEqual(messages({ spec: {} }), ['spec.replicas: Required value']);
  });

  it('reports enum, bounds, lengths and patterns with upstream wording', () => {
    assert.deepEqual(messages({ spec: { replicas: 11, name: 'ab', mode: 'Medium' } }), [
      'spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10',
      'spec.name: Invalid value: "ab": spec.name in body should be at least 3 chars long',
      'spec.mode: Unsupported value: "Medium": supported values: "Fast", "Slow"',
    ]);
    assert.deepEqual(messages({ spec: { replicas: -1, name: 'ABCDEF' } }), [
      'spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0',
      'spec.name: Too long: must have at most 5 bytes',
      "spec.name: Invalid value: \"ABCDEF\": spec.name in body should match '^[a-z]+$'",
    ]);
    assert.deepEqual(messages({ spec: { replicas: 1, ratio: 1 } }), ['spec.ratio: Invalid value: 1: spec.ratio in body should be less than 1']);
  });

  it('checks int-or-string, formats, nullability and list items with indexed paths', () => {
    assert.deepEqual(messages({ spec: { replicas: 1, port: true } }), ['spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"']);
    assert.deepEqual(messages({ spec: { replicas: 1, when: 'yesterday' } }), ['spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday"']);
    assert.deepEqual(messages({ spec: { replicas: null } }), ['spec.replicas: Invalid value: "null": spec.replicas in body must be of type integer: "null"']);
    assert.deepEqual(messages({ spec: { replicas: 1, items: [{ name: 'a' }, {}] } }), ['spec.items[1].name: Required value']);
  });

  it('refuses too many items, duplicate set members and too many properties', () => {
    assert.deepEqual(messages({ spec: { replicas: 1, tags: ['a', 'b', 'a'], labels: { a: 'x', b: 'y', c: 'z' } } }), [
      'spec.tags: Too many: 3: must have at most 2 items',
      'spec.tags[2]: Duplicate value: "a"',
      'spec.labels: Too many: 3: must have at most 2 items',
    ]);
  });

  it('validates additionalProperties values against their schema', () => {
    assert.deepEqual(messages({ spec: { replicas: 1, labels: { a: 1 } } }), ['spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"']);
  });

  it('applies anyOf, oneOf and not', () => {
    const s: Schema = { type: 'object', properties: { v: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string', pattern: '^\\d+%$' }] } } };
    assert.deepEqual(validateValue({ v: '50%' }, s), []);
    assert.ok(validateValue({ v: 'half' }, s).some((e) => e.message.endsWith('v in body must validate at least one schema (anyOf)')));
    const n: Schema = { type: 'object', properties: { v: { type: 'string', not: { enum: ['bad'] } } } };
    assert.equal(validateValue({ v: 'bad' }, n)[0]!.message, 'v: Invalid value: "": v in body must not validate the schema (not)');
  });

  it('requires apiVersion and kind of embedded resources', () => {
    const s: Schema = { type: 'object', properties: { tpl: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } } };
    assert.deepEqual(validateValue({ tpl: { metadata: {} } }, s).map((e) => e.field), ['tpl.apiVersion', 'tpl.kind']);
  });
});

describe('pruning', () => {
  it('drops fields the schema does not name and keeps type meta at the root', () => {
    const obj = { apiVersion: 'x/v1', kind: 'K', metadata: { name: 'a' }, spec: { replicas: 1, bogus: true, items: [{ name: 'n', extra: 1 }] }, other: 1 };
    const removed = prune(obj, root);
    assert.deepEqual(obj, { apiVersion: 'x/v1', kind: 'K', metadata: { name: 'a' }, spec: { replicas: 1, items: [{ name: 'n' }] } });
    assert.deepEqual(removed, ['spec.bogus', 'spec.items[0].extra', 'other']);
  });

  it('keeps unknown fields under x-kubernetes-preserve-unknown-fields but prunes known children', () => {
    const s: Schema = { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { a: { type: 'string' } } } } } } };
    const obj = { spec: { free: { anything: 1 }, known: { a: 'x', b: 'y' } } };
    prune(obj, s);
    assert.deepEqual(obj, { spec: { free: { anything: 1 }, known: { a: 'x' } } });
  });

  it('keeps apiVersion, kind and metadata of embedded resources', () => {
    const s: Schema = { type: 'object', properties: { tpl: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } } } };
    const obj = { tpl: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {}, junk: 1 } };
    prune(obj, s);
    assert.deepEqual(obj, { tpl: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: {} } });
  });
});

describe('defaulting', () => {
  it('fills missing properties, recursing into defaulted values and list items', () => {
    const s: Schema = {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          default: {},
          properties: {
            replicas: { type: 'integer', default: 1 },
            strategy: { type: 'object', default: {}, properties: { type: { type: 'string', default: 'Rolling' } } },
            ports: { type: 'array', items: { type: 'object', properties: { protocol: { type: 'string', default: 'TCP' } } } },
          },
        },
      },
    };
    const a: Record<string, unknown> = {};
    applyDefaults(a, s);
    assert.deepEqual(a, { spec: { replicas: 1, strategy: { type: 'Rolling' } } });
    const b = { spec: { replicas: 3, ports: [{}, { protocol: 'UDP' }] } };
    applyDefaults(b, s);
    assert.deepEqual(b, { spec: { replicas: 3, strategy: { type: 'Rolling' }, ports: [{ protocol: 'TCP' }, { protocol: 'UDP' }] } });
  });

  it('replaces null of a non-nullable field by its default and drops it when there is none', () => {
    const s: Schema = { type: 'object', properties: { a: { type: 'string', default: 'x' }, b: { type: 'string' }, c: { type: 'string', nullable: true } } };
    const o = { a: null, b: null, c: null };
    applyDefaults(o, s);
    assert.deepEqual(o, { a: 'x', c: null });
  });
});
