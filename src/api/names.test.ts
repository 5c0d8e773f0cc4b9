import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { generateName, MAX_GENERATED_NAME_LENGTH, NAME_ALPHABET, randomString } from './names.js';

describe('generateName', () => {
  it('appends five characters from the Kubernetes alphabet', () => {
    const name = generateName('web-');
    assert.match(name, /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('uses the injected random source', () => {
    let i = 0;
    const seq = [0, 1, 2, 25, 26];
    assert.equal(generateName('x-', () => seq[i++]!), 'x-bcd89');
  });

  it('truncates the base to 58 characters so the name fits in 63', () => {
    const name = generateName('a'.repeat(70), () => 0);
    assert.equal(name, 'a'.repeat(MAX_GENERATED_NAME_LENGTH) + 'bbbbb');
    assert.equal(name.length, 63);
  });

  it('draws from the whole alphabet', () => {
    const seen = new Set(randomString(2000));
    assert.equal(seen.size, NAME_ALPHABET.length);
  });
});
