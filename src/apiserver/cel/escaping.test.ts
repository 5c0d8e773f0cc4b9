import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { escapeName, unescapeName } from './escaping.js';

// k8s.io/apiserver/pkg/cel/escaping_test.go TestEscaping
const cases: { unescaped: string; escaped?: string; unescapable?: boolean }[] = [
  { unescaped: 'a.a', escaped: 'a__dot__a' },
  { unescaped: 'a-a', escaped: 'a__dash__a' },
  { unescaped: 'a__a', escaped: 'a__underscores__a' },
  { unescaped: 'a.-/__a', escaped: 'a__dot____dash____slash____underscores__a' },
  { unescaped: 'a._a', escaped: 'a__dot___a' },
  { unescaped: 'a__.__a', escaped: 'a__underscores____dot____underscores__a' },
  { unescaped: 'a___a', escaped: 'a__underscores___a' },
  { unescaped: 'a____a', escaped: 'a__underscores____underscores__a' },
  { unescaped: 'a__dot__a', escaped: 'a__underscores__dot__underscores__a' },
  { unescaped: 'a__underscores__a', escaped: 'a__underscores__underscores__underscores__a' },
  ...['true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function', 'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while'].map((k) => ({
    unescaped: k,
    escaped: `__${k}__`,
  })),
  { unescaped: '@', unescapable: true },
  { unescaped: '1up', unescapable: true },
  { unescaped: '👑', unescapable: true },
  ...['has', 'all', 'exists', 'exists_one', 'filter', 'size', 'contains', 'startsWith', 'endsWith', 'matches', 'duration', 'timestamp', 'getDate', 'getDayOfMonth', 'getDayOfWeek', 'getFullYear', 'getHours', 'getMilliseconds', 'getMinutes', 'getMonth', 'getSeconds', '_if', '_has', '_int', '_anything'].map((k) => ({
    unescaped: k,
    escaped: k,
  })),
];

describe('CEL property name escaping', () => {
  for (const tc of cases) {
    it(`escapes ${JSON.stringify(tc.unescaped)} as upstream does`, () => {
      const e = escapeName(tc.unescaped);
      if (tc.unescapable) {
        assert.equal(e, undefined);
        return;
      }
      assert.equal(e, tc.escaped);
      assert.match(e!, /^[a-zA-Z_][a-zA-Z0-9_]*$/);
      assert.equal(unescapeName(tc.escaped!), tc.unescaped);
    });
  }

  it('refuses malformed escapes', () => {
    assert.equal(unescapeName('__int__extra'), undefined);
    assert.equal(unescapeName('__illegal__'), undefined);
  });
});
