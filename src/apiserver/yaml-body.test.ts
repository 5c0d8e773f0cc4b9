import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { YamlDecodeError, yamlToJson } from './yaml-body.js';

function refused(text: string, max?: number): YamlDecodeError {
  try {
    yamlToJson(text, max);
  } catch (err) {
    if (err instanceof YamlDecodeError) return err;
    throw err;
  }
  assert.fail(`accepted: ${text.slice(0, 80)}`);
}

describe('YAML bodies', () => {
  it('reads the first document into plain JSON values', () => {
    assert.deepEqual(yamlToJson('a: 1\nb: [x, {c: true}]\nd: ~\n---\nother: doc\n'), { a: 1, b: ['x', { c: true }], d: null });
    assert.equal(yamlToJson('# nothing\n'), null);
  });

  it('keeps the last of duplicate keys and writes scalar keys as text, as YAMLToJSON does', () => {
    assert.deepEqual(yamlToJson('a: 1\na: 2\n1: x\ntrue: y\n'), { a: 2, '1': 'x', true: 'y' });
    assert.match(refused('? [a, b]\n: c\n').message, /^Unsupported map key of type: \[\]interface \{\}/);
  });

  it('expands aliases into copies, so changing one leaves the other', () => {
    const v = yamlToJson('base: &b {x: [1]}\ncopy: *b\n') as { base: { x: number[] }; copy: { x: number[] } };
    assert.deepEqual(v.copy, { x: [1] });
    v.copy.x.push(2);
    assert.deepEqual(v.base.x, [1]);
  });

  it('refuses unknown and self-containing anchors', () => {
    assert.match(refused('a: *nope\n').message, /nope/);
    assert.match(refused('a: &x [1, *x]\n').message, /x/);
  });

  it('stops alias expansion at go-yaml\'s ratio (a billion laughs is "excessive aliasing")', () => {
    let doc = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
    for (let i = 1; i < 9; i++) doc += `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]\n`;
    const err = refused(doc);
    assert.equal(err.message, 'yaml: document contains excessive aliasing');
  });

  it('counts nesting while reading, before composing: block and flow, with the line', () => {
    const block = Array.from({ length: 6 }, (_, i) => `${' '.repeat(i)}k${i}:`).join('\n') + ' 1\n';
    assert.deepEqual(yamlToJson(block, 6), { k0: { k1: { k2: { k3: { k4: { k5: 1 } } } } } });
    assert.equal(refused(block, 5).message, 'yaml: line 6: exceeded max depth of 5');
    assert.equal(refused(`${'['.repeat(6)}${']'.repeat(6)}`, 5).message, 'yaml: exceeded max depth of 5');
    assert.equal(refused(`a: 1\nb: ${'{"c":'.repeat(6)}1${'}'.repeat(6)}\n`, 5).message, 'yaml: line 2: exceeded max depth of 5');
    // A million brackets are refused after reading the first few, whatever the stack.
    assert.equal(refused('['.repeat(1_000_000)).stage, 'yaml');
  });

  it('refuses aliases that expand deeper than the bound as the JSON decoder would', () => {
    const err = refused('a: &a [[[1]]]\nb: [[[*a]]]\n', 5);
    assert.equal(err.message, 'exceeded max depth');
    assert.equal(err.stage, 'json');
  });

  it('refuses values JSON cannot hold', () => {
    assert.equal(refused('a: .inf\n').message, 'json: unsupported value: +Inf');
    assert.equal(refused('a: .nan\n').message, 'json: unsupported value: NaN');
  });

  it('words syntax errors as yaml: line N', () => {
    assert.match(refused('a: b\n  c: d: e\n').message, /^yaml: line \d+: /);
  });
});
