import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  everything,
  labelSelectorAsMap,
  labelSelectorAsString,
  matchesNothing,
  newRequirement,
  nothing,
  parseSelector,
  SelectorParseError,
  selectorFromLabelSelector,
  selectorFromSet,
  validatedSelectorFromSet,
} from './labels.js';

const keyRegexMsg =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

function parseError(s: string): string {
  try {
    parseSelector(s);
  } catch (err) {
    assert.ok(err instanceof SelectorParseError, `expected SelectorParseError for ${s}`);
    return err.message;
  }
  assert.fail(`expected ${JSON.stringify(s)} to be rejected`);
}

describe('parseSelector', () => {
  it('accepts every operator of the Kubernetes syntax', () => {
    const s = parseSelector('a=b,c==d,e!=f,g in (x,y),h notin (z),i,!j,k>1,l<9');
    assert.equal(s.toString(), 'a=b,c==d,e!=f,g in (x,y),h notin (z),i,!j,k>1,l<9');
    assert.deepEqual(
      s.requirements()!.map((r) => r.operator),
      ['=', '==', '!=', 'in', 'notin', 'exists', '!', 'gt', 'lt'],
    );
  });

  it('sorts requirements by key and values within a set for the canonical string', () => {
    assert.equal(parseSelector('z=1, a in (y,x) ,!b').toString(), 'a in (x,y),!b,z=1');
  });

  it('treats whitespace around tokens as insignificant', () => {
    assert.equal(parseSelector('  x  =  a ,\ty\nin ( b , c )  ').toString(), 'x=a,y in (b,c)');
  });

  it('selects everything for the empty string', () => {
    const s = parseSelector('');
    assert.equal(s.empty(), true);
    assert.equal(s.matches({ any: 'thing' }), true);
  });

  it('reads empty values in exact matches and value sets', () => {
    assert.equal(parseSelector('x=,z= ').toString(), 'x=,z=');
    assert.equal(parseSelector('x in ()').toString(), 'x in ()');
    assert.equal(parseSelector('x in (,a)').toString(), 'x in (,a)');
    assert.equal(parseSelector('x in (a,,b)').requirements()![0]!.values.length, 3);
  });

  it('reads in and notin as plain values inside a value context', () => {
    assert.equal(parseSelector('x in (in,notin)').toString(), 'x in (in,notin)');
    assert.equal(parseSelector('x=in').matches({ x: 'in' }), true);
  });

  it('reports unexpected tokens with apimachinery wording', () => {
    assert.equal(parseError('x=a b'), "found 'b', expected: ',' or 'end of string'");
    assert.equal(parseError('x=a,'), "found '', expected: identifier after ','");
    assert.equal(parseError(',x'), "found ',', expected: !, identifier, or 'end of string'");
    assert.equal(parseError('x in a'), "unable to parse requirement: found 'a' expected: '('");
    assert.equal(parseError('x=(a)'), "unable to parse requirement: found '(', expected: identifier");
    assert.equal(parseError('x in (a'), "unable to parse requirement: found '', expected: ',' or ')'");
    assert.equal(parseError('x y'), "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt");
    assert.match(parseError('x=a||y=b'), /^unable to parse requirement: values\[0\]\[x\]: Invalid value: "a\|\|y": /);
    assert.equal(parseError('x=!'), "unable to parse requirement: found '!', expected: identifier");
  });

  it('rejects an invalid key with the parser nil path Kubernetes prints', () => {
    assert.equal(parseError('-x=a'), `unable to parse requirement: <nil>: Invalid value: "-x": ${keyRegexMsg}`);
  });

  it('rejects an invalid value naming the value path and key', () => {
    assert.match(parseError('x=a$b'), /^unable to parse requirement: values\[0\]\[x\]: Invalid value: "a\$b": a valid label must be an empty string/);
  });

  it('rejects a non-integer operand of gt and lt', () => {
    assert.equal(
      parseError('x>a'),
      `unable to parse requirement: values[0]: Invalid value: "a": for 'Gt', 'Lt' operators, the value must be an integer`,
    );
  });
});

describe('selector matching', () => {
  it('matches equality, inequality and sets with Kubernetes semantics for missing keys', () => {
    const labels = { app: 'web', tier: 'front' };
    assert.equal(parseSelector('app=web').matches(labels), true);
    assert.equal(parseSelector('app=db').matches(labels), false);
    assert.equal(parseSelector('app!=db').matches(labels), true);
    assert.equal(parseSelector('missing!=x').matches(labels), true, 'a missing key satisfies !=');
    assert.equal(parseSelector('missing notin (x)').matches(labels), true, 'a missing key satisfies notin');
    assert.equal(parseSelector('missing in (x)').matches(labels), false);
    assert.equal(parseSelector('tier in (front,back)').matches(labels), true);
    assert.equal(parseSelector('tier notin (front)').matches(labels), false);
    assert.equal(parseSelector('app').matches(labels), true);
    assert.equal(parseSelector('!app').matches(labels), false);
    assert.equal(parseSelector('app,!missing').matches(labels), true);
    assert.equal(parseSelector('app=web').matches(undefined), false);
  });

  it('compares gt and lt numerically and fails on non-numeric labels', () => {
    assert.equal(parseSelector('n>5').matches({ n: '10' }), true);
    assert.equal(parseSelector('n>5').matches({ n: '5' }), false);
    assert.equal(parseSelector('n<5').matches({ n: '-3' }), true);
    assert.equal(parseSelector('n>5').matches({ n: 'ten' }), false);
    assert.equal(parseSelector('n>5').matches({}), false);
  });

  it('does not treat inherited object properties as labels', () => {
    assert.equal(parseSelector('toString').matches({}), false);
  });

  it('reports the exact value a selector requires', () => {
    const s = parseSelector('a=1,b in (2),c in (3,4),d!=5');
    assert.equal(s.requiresExactMatch('a'), '1');
    assert.equal(s.requiresExactMatch('b'), '2');
    assert.equal(s.requiresExactMatch('c'), undefined);
    assert.equal(s.requiresExactMatch('d'), undefined);
  });
});

describe('everything, nothing and sets', () => {
  it('distinguishes everything from nothing', () => {
    assert.equal(everything().empty(), true);
    assert.equal(everything().matches({}), true);
    assert.equal(nothing().empty(), false);
    assert.equal(nothing().matches({ a: 'b' }), false);
    assert.equal(matchesNothing(nothing()), true);
    assert.equal(matchesNothing(everything()), false);
    assert.equal(nothing().add(newRequirement('a', '=', ['b'])), nothing());
  });

  it('builds an exact-match selector from a label set', () => {
    const s = selectorFromSet({ b: '2', a: '1' });
    assert.equal(s.toString(), 'a=1,b=2');
    assert.equal(s.matches({ a: '1', b: '2', c: '3' }), true);
    assert.equal(s.matches({ a: '1' }), false);
    assert.equal(selectorFromSet({}).empty(), true);
    assert.equal(selectorFromSet(undefined).matches({ x: 'y' }), true);
  });

  it('validates label sets on request', () => {
    assert.throws(() => validatedSelectorFromSet({ 'bad key!': 'x' }), SelectorParseError);
    assert.equal(validatedSelectorFromSet({ a: 'b' }).toString(), 'a=b');
  });

  it('adds requirements without changing the original selector', () => {
    const a = parseSelector('z=1');
    const b = a.add(newRequirement('a', 'exists', []));
    assert.equal(a.toString(), 'z=1');
    assert.equal(b.toString(), 'a,z=1');
  });
});

describe('selectorFromLabelSelector', () => {
  it('selects nothing for null and undefined, everything for an empty selector', () => {
    assert.equal(selectorFromLabelSelector(null).matches({}), false);
    assert.equal(selectorFromLabelSelector(undefined).matches({ a: 'b' }), false);
    assert.equal(selectorFromLabelSelector({}).matches({ a: 'b' }), true);
    assert.equal(selectorFromLabelSelector({ matchLabels: {}, matchExpressions: [] }).empty(), true);
  });

  it('combines matchLabels and all four expression operators', () => {
    const s = selectorFromLabelSelector({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'tier', operator: 'In', values: ['b', 'a'] },
        { key: 'env', operator: 'NotIn', values: ['prod'] },
        { key: 'team', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    });
    assert.equal(s.toString(), 'app=web,env notin (prod),!legacy,team,tier in (a,b)');
    assert.equal(s.matches({ app: 'web', tier: 'a', team: 'x' }), true);
    assert.equal(s.matches({ app: 'web', tier: 'a', team: 'x', legacy: '1' }), false);
    assert.equal(s.matches({ app: 'web', tier: 'a', team: 'x', env: 'prod' }), false);
  });

  it('rejects an unknown operator as metav1 does', () => {
    assert.throws(
      () => selectorFromLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Foo' }] }),
      (err: Error) => err instanceof SelectorParseError && err.message === '"Foo" is not a valid label selector operator',
    );
  });

  it('rejects In without values and Exists with values', () => {
    assert.throws(
      () => selectorFromLabelSelector({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }),
      { message: "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty" },
    );
    assert.throws(
      () => selectorFromLabelSelector({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }),
      { message: 'values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist' },
    );
  });

  it('aggregates several errors in brackets', () => {
    assert.throws(
      () => selectorFromLabelSelector({ matchExpressions: [{ key: '-a', operator: 'In', values: [] }] }),
      (err: Error) => err instanceof SelectorParseError && err.message.startsWith('[key: Invalid value: "-a": ') && err.fieldErrors.length === 2,
    );
  });

  it('renders metav1 selectors as canonical strings', () => {
    assert.equal(labelSelectorAsString(null), '');
    assert.equal(
      labelSelectorAsString({ matchLabels: { b: '2', a: '1' }, matchExpressions: [{ key: 'c', operator: 'NotIn', values: ['y', 'x'] }] }),
      'a=1,b=2,c notin (x,y)',
    );
  });

  it('converts single-valued In expressions back into a label map', () => {
    assert.deepEqual(labelSelectorAsMap({ matchLabels: { a: '1' }, matchExpressions: [{ key: 'b', operator: 'In', values: ['2'] }] }), { a: '1', b: '2' });
    assert.throws(() => labelSelectorAsMap({ matchExpressions: [{ key: 'b', operator: 'Exists' }] }), SelectorParseError);
  });
});
