/**
 * Rules evaluated on schema-typed data, from upstream's
 * apiextensions-apiserver/pkg/apiserver/schema/cel/validation_test.go
 * (TestValidationExpressions, Kubernetes 1.33): strings (code points, the
 * strings extension, format), lists, list sets and map lists (equality and
 * `+` by list type), maps, sets functions. Each valid rule must pass; each
 * error rule must fail with a message containing the expected text.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Schema } from '../../crd/schema.js';
import { newValidator, validateRules } from './validator.js';

interface Group {
  name: string;
  obj: Record<string, unknown>;
  schema: Record<string, Schema>;
  valid: string[];
  errors?: Record<string, string>;
}

const str: Schema = { type: 'string' };
const int: Schema = { type: 'integer' };
const list = (items: Schema, listType?: 'set'): Schema => ({ type: 'array', items, ...(listType ? { 'x-kubernetes-list-type': listType } : {}) });
const kv: Schema = { type: 'object', properties: { k: str, v: str } };

const groups: Group[] = [
  {
    name: 'unicode strings',
    obj: { val1: 'Rook takes 👑', val2: 'Rook takes 👑' },
    schema: { val1: str, val2: str },
    valid: [
      "self.val1.startsWith('Rook')",
      "!self.val1.startsWith('knight')",
      "self.val1.contains('takes')",
      "!self.val1.contains('gives')",
      "self.val1.endsWith('👑')",
      "!self.val1.endsWith('pawn')",
      "self.val1.matches('^[^0-9]*$')",
      "!self.val1.matches('^[0-9]*$')",
      'type(self.val1) == string',
      'size(self.val1) == 12',
      "self.val1.charAt(3) == 'k'",
      "self.val1.indexOf('o') == 1",
      "self.val1.indexOf('o', 2) == 2",
      "self.val1.replace(' ', 'x') == 'Rookxtakesx👑'",
      "self.val1.replace(' ', 'x', 1) == 'Rookxtakes 👑'",
      "self.val1.split(' ') == ['Rook', 'takes', '👑']",
      "self.val1.split(' ', 2) == ['Rook', 'takes 👑']",
      "self.val1.substring(5) == 'takes 👑'",
      "self.val1.substring(0, 4) == 'Rook'",
      "self.val1.substring(4, 10).trim() == 'takes'",
      "self.val1.upperAscii() == 'ROOK TAKES 👑'",
      "self.val1.lowerAscii() == 'rook takes 👑'",
      "'%d %s %f %s %s'.format([1, 'abc', 1.0, duration('1m'), timestamp('2000-01-01T00:00:00.000Z')]) == '1 abc 1.000000 60s 2000-01-01T00:00:00Z'",
      "'%o %o %o'.format([7, 8, 9]) == '7 10 11'",
      "'%b %b %b'.format([7, 8, 9]) == '111 1000 1001'",
    ],
  },
  {
    name: 'lists',
    obj: { val1: [1, 2, 3], val2: [1, 2, 3] },
    schema: { val1: list(int), val2: list(int) },
    valid: ['1 in self.val1', 'self.val2[0] in self.val1', '!(0 in self.val1)', 'self.val1 + self.val2 == [1, 2, 3, 1, 2, 3]', 'self.val1 + [4, 5] == [1, 2, 3, 4, 5]'],
    errors: { "[1, 'a', false].filter(x, string(x) == 'a')": "compilation failed: ERROR: <input>:1:5: expected type 'int' but found 'string'" },
  },
  {
    name: 'string lists',
    obj: { val1: ['a', 'b', 'c'] },
    schema: { val1: list(str) },
    valid: ["self.val1.join('-') == 'a-b-c'", "['a', 'b', 'c'].join('-') == 'a-b-c'", "self.val1.join() == 'abc'", "['a', 'b', 'c'].join() == 'abc'"],
  },
  {
    name: 'listSets',
    obj: { val1: ['a', 'b', 'c'], val2: ['a', 'c', 'b'] },
    schema: { val1: list(str, 'set'), val2: list(str, 'set') },
    valid: [
      "self.val1 == ['c', 'b', 'a']",
      'self.val1 == self.val2',
      "'a' in self.val1",
      'self.val2[0] in self.val1',
      "!('x' in self.val1)",
      "self.val1 + self.val2 == ['a', 'b', 'c']",
      "self.val1 + ['c', 'd'] == ['a', 'b', 'c', 'd']",
      "sets.contains(['a', 'b'], [])",
      "sets.contains(['a', 'b'], ['b'])",
      "!sets.contains(['a', 'b'], ['c'])",
      'sets.equivalent([], [])',
      "sets.equivalent(['c', 'b', 'a'], ['b', 'c', 'a'])",
      "!sets.equivalent(['a', 'b'], ['b', 'c'])",
      "sets.intersects(['a', 'b'], ['b', 'c'])",
      '!sets.intersects([], [])',
      "sets.contains([{'a': 1}, {'b': 2}], [{'b': 2}])",
      'sets.contains([[1, 2], [3, 4]], [[3, 4]])',
      "sets.contains([timestamp('2000-01-01T00:00:00.000+01:00'), timestamp('2012-01-01T00:00:00.000+01:00')], [timestamp('2012-01-01T00:00:00.000+01:00')])",
      "sets.contains([duration('1h'), duration('2h')], [duration('2h')])",
      "sets.equivalent([{'a': 1}, {'b': 2}], [{'a': 1}, {'b': 2}])",
      "sets.intersects([duration('1h'), duration('2h')], [duration('2h')])",
    ],
  },
  {
    name: 'listMaps',
    obj: {
      objs: [
        [
          { k: 'a', v: '1' },
          { k: 'b', v: '2' },
        ],
        [
          { k: 'b', v: '2' },
          { k: 'a', v: '1' },
        ],
        [
          { k: 'b', v: '3' },
          { k: 'a', v: '1' },
        ],
        [{ k: 'c', v: '4' }],
      ],
    },
    schema: { objs: list({ type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['k'], items: kv }) },
    valid: [
      'self.objs[0] == self.objs[1]',
      'self.objs[0] + self.objs[2] == self.objs[2]',
      'self.objs[2] + self.objs[0] == self.objs[0]',
      'self.objs[0] == [self.objs[0][0], self.objs[0][1]]',
      'self.objs[0] == [self.objs[0][1], self.objs[0][0]]',
      'self.objs[2] + [self.objs[0][0], self.objs[0][1]] == self.objs[0]',
      'size(self.objs[0] + [self.objs[3][0]]) == 3',
    ],
    errors: { "self.objs[0] == {'k': 'a', 'v': '1'}": "no matching overload for '_==_'" },
  },
  {
    name: 'maps',
    obj: { val1: { k1: 'a', k2: 'b' }, val2: { k2: 'b', k1: 'a' } },
    schema: { val1: { type: 'object', additionalProperties: str }, val2: { type: 'object', additionalProperties: str } },
    valid: ['self.val1 == self.val2', "'k1' in self.val1", "!('k3' in self.val1)", "self.val1 == {'k1': 'a', 'k2': 'b'}"],
    errors: { "{'k1': 'a', 'k2': 1, 'k2': false}": "expected type 'string' but found 'int'" },
  },
  {
    name: 'integers',
    obj: { val1: 9223372036854775807, val5: 9223372036854775807 },
    schema: { val1: int, val5: int },
    valid: ['type(self.val1) == int'],
    errors: { 'self.val1 + 1 == 0': 'integer overflow', '1 / 0 == 1 / 0': 'division by zero' },
  },
];

describe('validation rules on schema-typed values (upstream TestValidationExpressions)', () => {
  for (const g of groups) {
    it(g.name, () => {
      const rules = [...g.valid.map((rule) => ({ rule })), ...Object.keys(g.errors ?? {}).map((rule) => ({ rule }))];
      const schema: Schema = { type: 'object', properties: g.schema, 'x-kubernetes-validations': rules };
      const v = newValidator(schema, false);
      const errs = validateRules(v, g.obj, undefined, []);
      const failed = new Map<string, string>();
      for (const e of errs) {
        const rule = rules.find((r) => e.message.includes(r.rule));
        failed.set(rule?.rule ?? e.message, e.message);
      }
      for (const r of g.valid) assert.equal(failed.get(r), undefined, `${r}: ${failed.get(r)}`);
      for (const [r, want] of Object.entries(g.errors ?? {})) {
        const got = errs.find((e) => e.message.includes(want));
        assert.ok(got, `${r}: no error containing ${JSON.stringify(want)} in ${JSON.stringify(errs.map((e) => e.message))}`);
      }
    });
  }
});
