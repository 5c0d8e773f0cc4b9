import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { goJsonSyntaxError } from './go-json-syntax.js';

// Expected texts are what Go's json.Unmarshal returns for each input.
describe("Go's JSON syntax errors", () => {
  const cases: [string, string | undefined][] = [
    ['{"a": 1}', undefined],
    ['[1, 2.5e-3, "x\\u00e9", true, false, null]', undefined],
    ['', 'unexpected end of JSON input'],
    ['   ', 'unexpected end of JSON input'],
    ['{"this is": not json', "invalid character 'o' in literal null (expecting 'u')"],
    ['hello', "invalid character 'h' looking for beginning of value"],
    ['{"a" 1}', "invalid character '1' after object key"],
    ['{"a": 1 "b": 2}', `invalid character '"' after object key:value pair`],
    ['{a: 1}', "invalid character 'a' looking for beginning of object key string"],
    ['{"a": 1,}', "invalid character '}' looking for beginning of object key string"],
    ['[1 2]', "invalid character '2' after array element"],
    ['[1,]', "invalid character ']' looking for beginning of value"],
    ['{"a": 1}}', "invalid character '}' after top-level value"],
    ['-x', "invalid character 'x' in numeric literal"],
    ['1.x', "invalid character 'x' after decimal point in numeric literal"],
    ['1ex', "invalid character 'x' in exponent of numeric literal"],
    ['"a\\qb"', "invalid character 'q' in string escape code"],
    ['"\\u12g4"', "invalid character 'g' in \\u hexadecimal character escape"],
    ['"a\nb"', "invalid character '\\n' in string literal"],
    ["'x'", "invalid character '\\'' looking for beginning of value"],
    ['{"a": tru', 'unexpected end of JSON input'],
    ['01', "invalid character '1' after top-level value"],
  ];
  for (const [input, want] of cases) {
    it(JSON.stringify(input), () => assert.equal(goJsonSyntaxError(input), want));
  }
});
