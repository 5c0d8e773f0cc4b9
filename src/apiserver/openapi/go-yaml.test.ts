import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { goStringCompare, goYamlJsonString, goYamlMarshal, resolvesAsNonString } from './go-yaml.js';

describe('goYamlMarshal', () => {
  // Each expectation was checked byte for byte against gnostic-models v0.6.8's
  // compiler.Marshal with go-yaml v3.0.1 (what kube-apiserver 1.32 links).
  const cases: [unknown, string][] = [
    [[{"group":"","kind":"Pod","version":"v1"}], "- group: \"\"\n  kind: Pod\n  version: v1\n"],
    [{"version":"v1","kind":"Deployment","group":"apps"}, "group: apps\nkind: Deployment\nversion: v1\n"],
    ["merge", "merge\n"],
    ["", "\"\"\n"],
    ["true", "\"true\"\n"],
    ["yes", "yes\n"],
    ["<<", "<<\n"],
    ["0777", "\"0777\"\n"],
    ["1_000", "\"1_000\"\n"],
    ["2024-01-01", "\"2024-01-01\"\n"],
    ["2024-02-30", "2024-02-30\n"],
    [".5", "\".5\"\n"],
    ["1e400", "1e400\n"],
    [[], "[]\n"],
    [{}, "{}\n"],
    [[[]], "- []\n"],
    [[{}], "- {}\n"],
    [[{"discriminator":"type","fields-to-discriminateBy":{"localhostProfile":"LocalhostProfile"}}], "- discriminator: type\n  fields-to-discriminateBy:\n    localhostProfile: LocalhostProfile\n"],
    [["name"], "- name\n"],
    ["a: b", "'a: b'\n"],
    ["a:b", "a:b\n"],
    ["- a", "'- a'\n"],
    ["#a", "'#a'\n"],
    ["a #b", "'a #b'\n"],
    ["it's", "it's\n"],
    ["'q", "'''q'\n"],
    ["say \"hi\"", "say \"hi\"\n"],
    ["\ttab", "\"\\ttab\"\n"],
    [" lead", "' lead'\n"],
    ["line1\nline2", "|-\n    line1\n    line2\n"],
    ["x\n", "|\n    x\n"],
    ["x\n\n", "|+\n    x\n\n"],
    ["\n lead", "|4-\n     lead\n"],
    ["trail \nx", "\"trail \\nx\"\n"],
    ["日本語", "日本語\n"],
    ["😀", "\"\\U0001F600\"\n"],
    ["nel\u0085x", "nel x\n"],
    ["ls \u2028 x", "'ls\u2028    x'\n"],
    [5, "5\n"],
    [-1.5, "-1.5\n"],
    [1e+21, "1e+21\n"],
    [true, "true\n"],
    [null, "null\n"],
    [{"1":"x","a":[1,2],"b":{"c":[]}}, "\"1\": x\na:\n    - 1\n    - 2\nb:\n    c: []\n"],
    [[{"a":1,"b":[{"c":2}]}], "- a: 1\n  b:\n    - c: 2\n"],
    [[[1,2],[3]], "- - 1\n  - 2\n- - 3\n"],
    [{"kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk":1}, "? kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk\n: 1\n"],
    [{"a":"line1\nline2","b":["m\nn"]}, "a: |-\n    line1\n    line2\nb:\n    - |-\n      m\n      n\n"],
  ];
  for (const [value, yaml] of cases) {
    it(`writes ${JSON.stringify(value).slice(0, 60)} as go-yaml does`, () => {
      assert.equal(goYamlMarshal(value), yaml);
    });
  }
});

describe('resolvesAsNonString', () => {
  it('quotes what go-yaml would read back as null, bool, number or timestamp, and nothing else', () => {
    for (const s of ['', '~', 'null', 'True', 'FALSE', '1', '-1', '+1', '0x1F', '0o17', '0b1', '017', '08', '1.5', '1e3', '.5', '-.5', '.inf', '-.Inf', '.NaN', '2024-01-01', '2024-1-2T3:04:05Z', '2024-01-01 10:20:30.5', '9223372036854775808']) {
      assert.equal(resolvesAsNonString(s), true, s);
    }
    for (const s of ['yes', 'no', 'on', 'y', '<<', 'a', '-', '.', '1e400', '0x', '2024-02-30', '2024-01-01T10:20:30', '_1', '1.2.3', '99999999999999999999999x']) {
      assert.equal(resolvesAsNonString(s), false, s);
    }
  });
});

describe('goYamlJsonString', () => {
  it('folds the raw NEL, LS and PS that go-yaml reads as line breaks in a JSON string', () => {
    assert.equal(goYamlJsonString('plain text'), 'plain text');
    assert.equal(goYamlJsonString('a \u0085 b'), 'a b');
    assert.equal(goYamlJsonString('a\u0085\u0085 b'), 'a\nb');
    assert.equal(goYamlJsonString('a \u2028 b'), 'a\u2028b');
  });
});

describe('goStringCompare', () => {
  it('orders by code point as Go orders UTF-8 strings', () => {
    assert.deepEqual(['b', 'a', 'B', '_', 'aa'].sort(goStringCompare), ['B', '_', 'a', 'aa', 'b']);
    // U+FF5E sorts before U+1F600 in Go, though its UTF-16 unit is larger than the surrogate's.
    assert.ok(goStringCompare('\uff5e', '\u{1f600}') < 0);
  });
});
