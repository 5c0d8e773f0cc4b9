import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Type } from 'typebox';
import { SchemaConversionError, conditions, embeddedResource, intOrString, listMap, listSet, preserveUnknownFields, quantity, toStructuralSchema } from './schema.js';

describe('TypeBox to structural schemas', () => {
  it('converts objects, required fields, scalars, bounds, defaults and descriptions', () => {
    const s = toStructuralSchema(
      Type.Object({
        name: Type.String({ minLength: 1, maxLength: 63, pattern: '^[a-z]+$', description: 'the name' }),
        count: Type.Integer({ minimum: 0, maximum: 10, default: 3 }),
        ratio: Type.Optional(Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 1, multipleOf: 0.5 })),
        on: Type.Optional(Type.Boolean({ default: false })),
        when: Type.Optional(Type.String({ format: 'date-time' })),
      }),
    );
    assert.deepEqual(s, {
      type: 'object',
      required: ['name', 'count'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 63, pattern: '^[a-z]+$', description: 'the name' },
        count: { type: 'integer', minimum: 0, maximum: 10, default: 3 },
        ratio: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true, multipleOf: 0.5 },
        on: { type: 'boolean', default: false },
        when: { type: 'string', format: 'date-time' },
      },
    });
  });

  it('turns literal unions, enums and constants into typed enums', () => {
    assert.deepEqual(toStructuralSchema(Type.Union([Type.Literal('a'), Type.Literal('b')])), { type: 'string', enum: ['a', 'b'] });
    assert.deepEqual(toStructuralSchema(Type.Enum(['x', 'y'])), { type: 'string', enum: ['x', 'y'] });
    assert.deepEqual(toStructuralSchema(Type.Union([Type.Literal(1), Type.Literal(2)])), { type: 'integer', enum: [1, 2] });
    assert.deepEqual(toStructuralSchema(Type.Literal('only')), { type: 'string', enum: ['only'] });
    assert.throws(() => toStructuralSchema(Type.Union([Type.Literal('a'), Type.Literal(1)])), /enum values must share one type/);
  });

  it('makes X | null nullable and integer | string int-or-string', () => {
    assert.deepEqual(toStructuralSchema(Type.Union([Type.String(), Type.Null()])), { type: 'string', nullable: true });
    assert.deepEqual(toStructuralSchema(Type.Union([Type.Object({ a: Type.String() }), Type.Null()])), {
      type: 'object',
      required: ['a'],
      properties: { a: { type: 'string' } },
      nullable: true,
    });
    assert.deepEqual(toStructuralSchema(Type.Union([Type.Integer(), Type.String()])), { 'x-kubernetes-int-or-string': true });
    assert.deepEqual(toStructuralSchema(intOrString({ description: 'd' })), { 'x-kubernetes-int-or-string': true, description: 'd' });
    const q = toStructuralSchema(quantity()) as Record<string, unknown>;
    assert.equal(q['x-kubernetes-int-or-string'], true);
    assert.match(String(q.pattern), /KMGTPE/);
  });

  it('turns records into maps and open objects into preserved unknown fields', () => {
    assert.deepEqual(toStructuralSchema(Type.Record(Type.String(), Type.Integer())), { type: 'object', additionalProperties: { type: 'integer' } });
    assert.deepEqual(toStructuralSchema(Type.Object({}, { additionalProperties: true })), { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(toStructuralSchema(Type.Object({ a: Type.String() }, { additionalProperties: Type.Integer() })), {
      type: 'object',
      required: ['a'],
      properties: { a: { type: 'string' } },
      additionalProperties: { type: 'integer' },
    });
    assert.deepEqual(toStructuralSchema(Type.Unknown()), { 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(toStructuralSchema(preserveUnknownFields()), { type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(toStructuralSchema(embeddedResource()), { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true });
  });

  it('keeps list types, map keys and CEL rules, and converts nested arrays', () => {
    assert.deepEqual(toStructuralSchema(listSet(Type.String())), { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' });
    assert.deepEqual(toStructuralSchema(listMap(Type.Object({ name: Type.String() }), ['name'])), {
      type: 'array',
      items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['name'],
    });
    const cel = toStructuralSchema(Type.Object({ min: Type.Integer(), max: Type.Integer() }, { 'x-kubernetes-validations': [{ rule: 'self.min <= self.max', message: 'min must not exceed max' }] }));
    assert.deepEqual((cel as Record<string, unknown>)['x-kubernetes-validations'], [{ rule: 'self.min <= self.max', message: 'min must not exceed max' }]);
    assert.deepEqual(toStructuralSchema(Type.Array(Type.Array(Type.Integer()))), { type: 'array', items: { type: 'array', items: { type: 'integer' } } });
    const conds = toStructuralSchema(conditions()) as Record<string, unknown>;
    assert.equal(conds['x-kubernetes-list-type'], 'map');
    assert.deepEqual(conds['x-kubernetes-list-map-keys'], ['type']);
  });

  it('refuses what a structural schema cannot say, naming the field', () => {
    const cases: Array<[() => unknown, RegExp]> = [
      [() => toStructuralSchema(Type.Object({ a: Type.Union([Type.String(), Type.Boolean()]) })), /^\.a: a union other than literals/],
      [() => toStructuralSchema(Type.Object({ a: Type.Array(Type.String(), { uniqueItems: true }) })), /^\.a: uniqueItems is not allowed.*listSet/],
      [() => toStructuralSchema(Type.Object({ t: Type.Tuple([Type.String(), Type.Integer()]) })), /^\.t: tuples are not supported/],
      [() => toStructuralSchema(Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })])), /intersections/],
      [() => toStructuralSchema(Type.Object({ m: Type.Record(Type.String({ pattern: '^x' }), Type.String()) })), /^\.m: maps must have string keys of any form/],
      [() => toStructuralSchema(Type.Object({ s: Type.String({ contentEncoding: 'base64' }) })), /^\.s: keyword contentEncoding is not supported/],
    ];
    for (const [fn, re] of cases) {
      assert.throws(fn, (err: unknown) => err instanceof SchemaConversionError && re.test(err.message), String(re));
    }
  });
});
