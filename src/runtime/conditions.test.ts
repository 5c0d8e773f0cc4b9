import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../util/clock/clock.js';
import {
  InvalidConditionError,
  findStatusCondition,
  isStatusConditionFalse,
  isStatusConditionPresentAndEqual,
  isStatusConditionTrue,
  removeStatusCondition,
  setStatusCondition,
  validateCondition,
  type Condition,
  type ConditionHolder,
  type NewCondition,
} from './conditions.js';

const REASON_MSG =
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' " +
  "(e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";

function ready(status: 'True' | 'False' | 'Unknown', more: Partial<NewCondition> = {}): NewCondition {
  return { type: 'Ready', status, reason: 'Available', message: 'all good', observedGeneration: 1, ...more };
}

describe('setStatusCondition', () => {
  it('adds a new condition with lastTransitionTime from the clock, in RFC 3339 seconds', async () => {
    const clock = new FakeClock();
    await clock.advance(1_500);
    const status: ConditionHolder = {};
    assert.equal(setStatusCondition(status, ready('True'), { clock }), true);
    assert.deepEqual(status.conditions, [
      { type: 'Ready', status: 'True', reason: 'Available', message: 'all good', observedGeneration: 1, lastTransitionTime: '2024-01-01T00:00:01Z' },
    ]);
  });

  it('appends conditions of other types and keeps one per type', () => {
    const clock = new FakeClock();
    const status: ConditionHolder = {};
    setStatusCondition(status, ready('True'), { clock });
    setStatusCondition(status, { type: 'Progressing', status: 'False', reason: 'Done', observedGeneration: 1 }, { clock });
    setStatusCondition(status, ready('False', { reason: 'Unavailable' }), { clock });
    assert.deepEqual(
      status.conditions?.map((c) => [c.type, c.status, c.reason]),
      [
        ['Ready', 'False', 'Unavailable'],
        ['Progressing', 'False', 'Done'],
      ],
    );
  });

  it('sets an absent message to the empty string, as the API server requires a string', () => {
    const status: ConditionHolder = {};
    setStatusCondition(status, { type: 'Ready', status: 'True', reason: 'Available', observedGeneration: 0 }, { clock: new FakeClock() });
    assert.equal(status.conditions?.[0]?.message, '');
  });

  it('moves lastTransitionTime only when the status changes', async () => {
    const clock = new FakeClock('2024-01-01T00:00:00Z');
    const status: ConditionHolder = {};
    setStatusCondition(status, ready('True'), { clock });
    assert.equal(status.conditions![0]!.lastTransitionTime, '2024-01-01T00:00:00Z');

    await clock.advance(60_000);
    const changed = setStatusCondition(status, ready('True', { reason: 'StillAvailable', message: 'fine', observedGeneration: 2 }), { clock });
    assert.equal(changed, true);
    assert.equal(status.conditions![0]!.lastTransitionTime, '2024-01-01T00:00:00Z', 'same status keeps the time');

    await clock.advance(60_000);
    assert.equal(setStatusCondition(status, ready('False', { reason: 'StillAvailable', message: 'fine', observedGeneration: 2 }), { clock }), true);
    assert.equal(status.conditions![0]!.lastTransitionTime, '2024-01-01T00:02:00Z');
    assert.equal(status.conditions![0]!.status, 'False');
  });

  it('updates reason, message and observedGeneration in place, on the same object', () => {
    const clock = new FakeClock();
    const status: ConditionHolder = {};
    setStatusCondition(status, ready('True'), { clock });
    const held = status.conditions![0]!;
    assert.equal(setStatusCondition(status, ready('True', { reason: 'Other' }), { clock }), true);
    assert.equal(held.reason, 'Other');
    assert.equal(setStatusCondition(status, ready('True', { reason: 'Other', message: 'new text' }), { clock }), true);
    assert.equal(held.message, 'new text');
    assert.equal(setStatusCondition(status, ready('True', { reason: 'Other', message: 'new text', observedGeneration: 7 }), { clock }), true);
    assert.equal(held.observedGeneration, 7);
    assert.equal(status.conditions!.length, 1);
    assert.equal(status.conditions![0], held);
  });

  it('reports no change when nothing changed, and leaves the condition alone', async () => {
    const clock = new FakeClock();
    const status: ConditionHolder = {};
    setStatusCondition(status, ready('True'), { clock });
    const before = structuredClone(status.conditions);
    await clock.advance(3_600_000);
    assert.equal(setStatusCondition(status, ready('True'), { clock }), false);
    assert.deepEqual(status.conditions, before);
  });

  it('counts a message going from text to absent as a change', () => {
    const clock = new FakeClock();
    const status: ConditionHolder = {};
    setStatusCondition(status, ready('True'), { clock });
    const { message: _m, ...noMessage } = ready('True');
    assert.equal(setStatusCondition(status, noMessage, { clock }), true);
    assert.equal(status.conditions![0]!.message, '');
    assert.equal(setStatusCondition(status, noMessage, { clock }), false);
  });

  it('uses a given lastTransitionTime instead of the clock, on add and on a status change', () => {
    const clock = new FakeClock();
    const status: ConditionHolder = {};
    setStatusCondition(status, ready('True', { lastTransitionTime: '2023-05-05T05:05:05Z' }), { clock });
    assert.equal(status.conditions![0]!.lastTransitionTime, '2023-05-05T05:05:05Z');
    setStatusCondition(status, ready('False', { lastTransitionTime: '2023-06-06T06:06:06Z' }), { clock });
    assert.equal(status.conditions![0]!.lastTransitionTime, '2023-06-06T06:06:06Z');
  });

  it('throws InvalidConditionError, carrying the field errors, for a condition the API server would refuse, and changes nothing', () => {
    const status: ConditionHolder = { conditions: [] };
    let caught: unknown;
    try {
      setStatusCondition(status, ready('True', { reason: 'bad reason' }), { clock: new FakeClock() });
    } catch (err) {
      caught = err;
    }
    assert.ok(caught instanceof InvalidConditionError);
    assert.equal(caught.name, 'InvalidConditionError');
    assert.deepEqual(
      caught.errors.map((e) => e.field),
      ['status.conditions.reason'],
    );
    assert.equal(caught.message, `invalid condition: status.conditions.reason: Invalid value: "bad reason": ${REASON_MSG}`);
    assert.deepEqual(status.conditions, []);
  });

  it('refuses a condition without an integer observedGeneration', () => {
    const clock = new FakeClock();
    const status: ConditionHolder = {};
    const missing = { type: 'Ready', status: 'True', reason: 'Available' } as unknown as NewCondition;
    assert.throws(
      () => setStatusCondition(status, missing, { clock }),
      (err: unknown) =>
        err instanceof InvalidConditionError &&
        err.errors.length === 1 &&
        err.errors[0]!.field === 'status.conditions.observedGeneration' &&
        err.errors[0]!.type === 'FieldValueRequired',
    );
    assert.throws(() => setStatusCondition(status, ready('True', { observedGeneration: 1.5 }), { clock }), InvalidConditionError);
    assert.throws(() => setStatusCondition(status, ready('True', { observedGeneration: Number.NaN }), { clock }), InvalidConditionError);
    assert.throws(
      () => setStatusCondition(status, ready('True', { observedGeneration: -1 }), { clock }),
      (err: unknown) =>
        err instanceof InvalidConditionError &&
        err.errors.some((e) => e.message === 'status.conditions.observedGeneration: Invalid value: -1: must be greater than or equal to zero'),
    );
    assert.equal(status.conditions, undefined);
  });

  it('accepts observedGeneration 0', () => {
    const status: ConditionHolder = {};
    assert.equal(setStatusCondition(status, ready('True', { observedGeneration: 0 }), { clock: new FakeClock() }), true);
    assert.equal(status.conditions![0]!.observedGeneration, 0);
  });
});

describe('findStatusCondition and removeStatusCondition', () => {
  const conditions = (): Condition[] => [
    { type: 'Ready', status: 'True', reason: 'A', message: '', lastTransitionTime: '2024-01-01T00:00:00Z' },
    { type: 'Degraded', status: 'False', reason: 'B', message: '', lastTransitionTime: '2024-01-01T00:00:00Z' },
  ];

  it('finds a condition by type, and nothing in an absent or empty list', () => {
    const list = conditions();
    assert.equal(findStatusCondition(list, 'Degraded'), list[1]);
    assert.equal(findStatusCondition(list, 'Missing'), undefined);
    assert.equal(findStatusCondition(undefined, 'Ready'), undefined);
    assert.equal(findStatusCondition([], 'Ready'), undefined);
  });

  it('removes the condition of a type and says whether there was one', () => {
    const holder: ConditionHolder = { conditions: conditions() };
    assert.equal(removeStatusCondition(holder, 'Ready'), true);
    assert.deepEqual(
      holder.conditions!.map((c) => c.type),
      ['Degraded'],
    );
    assert.equal(removeStatusCondition(holder, 'Ready'), false);
    assert.equal(holder.conditions!.length, 1);
    assert.equal(removeStatusCondition({}, 'Ready'), false);
  });
});

describe('isStatusConditionTrue / False / PresentAndEqual', () => {
  const list: Condition[] = [
    { type: 'Ready', status: 'True', reason: 'A', message: '', lastTransitionTime: '2024-01-01T00:00:00Z' },
    { type: 'Degraded', status: 'False', reason: 'B', message: '', lastTransitionTime: '2024-01-01T00:00:00Z' },
    { type: 'Synced', status: 'Unknown', reason: 'C', message: '', lastTransitionTime: '2024-01-01T00:00:00Z' },
  ];

  it('answers by the status of the condition of that type', () => {
    assert.equal(isStatusConditionTrue(list, 'Ready'), true);
    assert.equal(isStatusConditionTrue(list, 'Degraded'), false);
    assert.equal(isStatusConditionTrue(list, 'Synced'), false);
    assert.equal(isStatusConditionFalse(list, 'Degraded'), true);
    assert.equal(isStatusConditionFalse(list, 'Ready'), false);
    assert.equal(isStatusConditionFalse(list, 'Synced'), false);
    assert.equal(isStatusConditionPresentAndEqual(list, 'Synced', 'Unknown'), true);
    assert.equal(isStatusConditionPresentAndEqual(list, 'Synced', 'True'), false);
    assert.equal(isStatusConditionPresentAndEqual(list, 'Ready', 'True'), true);
  });

  it('answers false for a condition that is not there', () => {
    assert.equal(isStatusConditionTrue(list, 'Missing'), false);
    assert.equal(isStatusConditionFalse(list, 'Missing'), false);
    assert.equal(isStatusConditionPresentAndEqual(list, 'Missing', 'Unknown'), false);
    assert.equal(isStatusConditionTrue(undefined, 'Ready'), false);
    assert.equal(isStatusConditionFalse(undefined, 'Ready'), false);
  });
});

describe('validateCondition', () => {
  const valid: NewCondition = { type: 'example.com/Ready', status: 'True', reason: 'Reason_A,B:C', message: 'x', observedGeneration: 3 };

  it('accepts a valid condition', () => {
    assert.deepEqual(validateCondition(valid), []);
    assert.deepEqual(validateCondition({ ...valid, reason: 'R' }), []);
    assert.deepEqual(validateCondition({ ...valid, reason: 'Ends_' }), []);
  });

  it("words a bad reason as apimachinery does", () => {
    const errs = validateCondition({ ...valid, reason: 'bad reason' });
    assert.deepEqual(
      errs.map((e) => e.message),
      [`status.conditions.reason: Invalid value: "bad reason": ${REASON_MSG}`],
    );
  });

  it('refuses reasons that start with a digit or end with a comma or colon', () => {
    for (const reason of ['1Reason', 'Reason,', 'Reason:', 'Re-ason', '_Reason']) {
      assert.equal(validateCondition({ ...valid, reason }).length, 1, reason);
    }
  });

  it('requires a reason', () => {
    assert.deepEqual(
      validateCondition({ ...valid, reason: '' }).map((e) => e.message),
      ['status.conditions.reason: Required value: must be set'],
    );
  });

  it('limits the reason to 1024 bytes', () => {
    assert.deepEqual(validateCondition({ ...valid, reason: 'R'.repeat(1024) }), []);
    const errs = validateCondition({ ...valid, reason: 'R'.repeat(1025) });
    assert.deepEqual(
      errs.map((e) => [e.field, e.type]),
      [['status.conditions.reason', 'FieldValueTooLong']],
    );
    assert.match(errs[0]!.message, /1024/);
  });

  it('refuses a status other than True, False and Unknown, listing the supported values', () => {
    const errs = validateCondition({ ...valid, status: 'Maybe' as 'True' });
    assert.deepEqual(
      errs.map((e) => e.message),
      ['status.conditions.status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"'],
    );
  });

  it('refuses a type that is not a qualified name', () => {
    const errs = validateCondition({ ...valid, type: 'not valid' });
    assert.equal(errs.length, 1);
    assert.equal(errs[0]!.field, 'status.conditions.type');
    assert.equal(errs[0]!.type, 'FieldValueInvalid');
    assert.match(errs[0]!.message, /^status\.conditions\.type: Invalid value: "not valid": name part must consist of alphanumeric characters/);
    assert.equal(validateCondition({ ...valid, type: '' }).length > 0, true);
  });

  it('limits the message to 32768 bytes, counting UTF-8 bytes', () => {
    assert.deepEqual(validateCondition({ ...valid, message: 'm'.repeat(32768) }), []);
    const errs = validateCondition({ ...valid, message: 'm'.repeat(32769) });
    assert.deepEqual(
      errs.map((e) => [e.field, e.type]),
      [['status.conditions.message', 'FieldValueTooLong']],
    );
    assert.match(errs[0]!.message, /^status\.conditions\.message: Too long: .*32768/);
    // 11000 three-byte characters: 33000 bytes, though only 11000 UTF-16 units.
    assert.equal(validateCondition({ ...valid, message: '€'.repeat(11000) }).length, 1);
  });

  it('refuses a negative observedGeneration', () => {
    assert.deepEqual(
      validateCondition({ ...valid, observedGeneration: -2 }).map((e) => e.message),
      ['status.conditions.observedGeneration: Invalid value: -2: must be greater than or equal to zero'],
    );
  });

  it('refuses a lastTransitionTime that is not a time', () => {
    const errs = validateCondition({ ...valid, lastTransitionTime: 'yesterday' });
    assert.deepEqual(
      errs.map((e) => e.field),
      ['status.conditions.lastTransitionTime'],
    );
    assert.deepEqual(validateCondition({ ...valid, lastTransitionTime: '2024-01-01T00:00:00Z' }), []);
  });

  it('reports every problem at once, under the given path', () => {
    const errs = validateCondition({ type: 'a b', status: 'Nope' as 'True', reason: '', observedGeneration: 1 }, 'status.conditions[2]');
    assert.deepEqual(
      errs.map((e) => e.field),
      ['status.conditions[2].type', 'status.conditions[2].status', 'status.conditions[2].reason'],
    );
  });
});
