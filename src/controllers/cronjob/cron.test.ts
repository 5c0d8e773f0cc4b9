import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CronParseError, formatInZone, parseSchedule, validateTimeZone } from './cron.js';

const iso = (t: number | undefined) => (t === undefined ? 'none' : new Date(t).toISOString());
const at = (s: string) => Date.parse(s);

describe('cron schedules', () => {
  it('finds the next minute, hour and day matches in UTC', () => {
    assert.equal(iso(parseSchedule('*/15 * * * *').next(at('2024-01-01T00:07:30Z'))), '2024-01-01T00:15:00.000Z');
    assert.equal(iso(parseSchedule('0 3 * * *').next(at('2024-01-01T03:00:00Z'))), '2024-01-02T03:00:00.000Z');
    assert.equal(iso(parseSchedule('5 4 1-10/3 * *').next(at('2024-01-02T00:00:00Z'))), '2024-01-04T04:05:00.000Z');
    assert.equal(iso(parseSchedule('0 0 29 2 *').next(at('2024-03-01T00:00:00Z'))), '2028-02-29T00:00:00.000Z');
  });

  it('accepts month and weekday names, ? and weekday 7 as Sunday', () => {
    // 2024-01-01 is a Monday.
    assert.equal(iso(parseSchedule('0 12 ? JAN-MAR SAT').next(at('2024-01-01T00:00:00Z'))), '2024-01-06T12:00:00.000Z');
    assert.equal(iso(parseSchedule('0 0 * * 7').next(at('2024-01-01T00:00:00Z'))), '2024-01-07T00:00:00.000Z');
    assert.equal(iso(parseSchedule('0 0 1 feb *').next(at('2024-01-01T00:00:00Z'))), '2024-02-01T00:00:00.000Z');
  });

  it('matches either day of month or day of week when both are restricted', () => {
    // The 15th, or any Friday (2024-01-05).
    assert.equal(iso(parseSchedule('0 0 15 * FRI').next(at('2024-01-01T00:00:00Z'))), '2024-01-05T00:00:00.000Z');
    // With a star day of week only the 15th counts.
    assert.equal(iso(parseSchedule('0 0 15 * *').next(at('2024-01-01T00:00:00Z'))), '2024-01-15T00:00:00.000Z');
  });

  it('expands the descriptors', () => {
    const from = at('2024-05-15T10:30:00Z');
    assert.equal(iso(parseSchedule('@hourly').next(from)), '2024-05-15T11:00:00.000Z');
    assert.equal(iso(parseSchedule('@daily').next(from)), '2024-05-16T00:00:00.000Z');
    assert.equal(iso(parseSchedule('@weekly').next(from)), '2024-05-19T00:00:00.000Z');
    assert.equal(iso(parseSchedule('@monthly').next(from)), '2024-06-01T00:00:00.000Z');
    assert.equal(iso(parseSchedule('@yearly').next(from)), '2025-01-01T00:00:00.000Z');
  });

  it('rejects malformed schedules with an error naming the problem', () => {
    assert.throws(() => parseSchedule('* * * *'), CronParseError);
    assert.throws(() => parseSchedule('60 * * * *'), /above maximum/);
    assert.throws(() => parseSchedule('5-1 * * * *'), /beyond end of range/);
    assert.throws(() => parseSchedule('@fortnightly'), /unrecognized descriptor/);
    assert.throws(() => parseSchedule('*/0 * * * *'), /positive/);
  });

  it('follows the wall clock of a time zone', () => {
    const s = parseSchedule('0 9 * * *', 'America/New_York');
    assert.equal(iso(s.next(at('2024-01-10T00:00:00Z'))), '2024-01-10T14:00:00.000Z'); // EST
    assert.equal(iso(s.next(at('2024-07-10T00:00:00Z'))), '2024-07-10T13:00:00.000Z'); // EDT
    assert.equal(iso(parseSchedule('TZ=Asia/Tokyo 0 9 * * *').next(at('2024-01-10T00:00:00Z'))), '2024-01-11T00:00:00.000Z');
  });

  it('runs a wall time skipped by spring-forward at the shifted instant, once', () => {
    // 2024-03-10 02:00 EST -> 03:00 EDT in New York: 02:30 does not exist.
    const s = parseSchedule('30 2 * * *', 'America/New_York');
    const first = s.next(at('2024-03-10T05:00:00Z'));
    assert.equal(iso(first), '2024-03-10T07:30:00.000Z'); // 03:30 EDT
    assert.equal(iso(s.next(first!)), '2024-03-11T06:30:00.000Z'); // 02:30 EDT the next day
    // Hourly schedules never fire twice across the gap.
    const h = parseSchedule('0 * * * *', 'America/New_York');
    assert.equal(iso(h.next(at('2024-03-10T06:00:00Z'))), '2024-03-10T07:00:00.000Z'); // 03:00 EDT directly after 01:00 EST
  });

  it('matches both instants of a wall time repeated by fall-back', () => {
    // 2024-11-03 02:00 EDT -> 01:00 EST: 01:30 happens twice.
    const s = parseSchedule('30 1 * * *', 'America/New_York');
    const first = s.next(at('2024-11-03T04:00:00Z'));
    assert.equal(iso(first), '2024-11-03T05:30:00.000Z'); // 01:30 EDT
    assert.equal(iso(s.next(first!)), '2024-11-03T06:30:00.000Z'); // 01:30 EST
    assert.equal(iso(s.next(at('2024-11-03T06:30:00Z'))), '2024-11-04T06:30:00.000Z');
  });

  it('validates IANA zone names and formats times with their offset', () => {
    assert.equal(validateTimeZone('Europe/Berlin'), undefined);
    assert.match(validateTimeZone('Mars/Olympus') ?? '', /unknown time zone/);
    assert.throws(() => parseSchedule('0 * * * *', 'Mars/Olympus'), /unknown time zone/);
    assert.equal(formatInZone(at('2024-03-10T07:30:00Z'), 'America/New_York'), '2024-03-10T03:30:00-04:00');
    assert.equal(formatInZone(at('2024-03-10T07:30:00Z'), 'UTC'), '2024-03-10T07:30:00Z');
  });
});
