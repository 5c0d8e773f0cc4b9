/**
 * Standard 5-field cron schedules as the CronJob controller parses them
 * (robfig/cron ParseStandard): minute hour day-of-month month day-of-week,
 * with `*`, `?`, lists, ranges, steps (`*\/5`, `1-10/2`, `3/4`), month and
 * weekday names (JAN..DEC, SUN..SAT; weekday 7 = Sunday), the descriptors
 * @yearly @annually @monthly @weekly @daily @midnight @hourly, and a
 * `TZ=Zone ` / `CRON_TZ=Zone ` prefix.
 *
 * Times are matched on the wall clock of an IANA time zone (via
 * Intl.DateTimeFormat; UTC by default). Day of month and day of week: when
 * both are restricted either may match, otherwise both must.
 * Across DST changes: a wall time skipped by a spring-forward runs at the
 * same offset as before the change (02:30 becomes 03:30, as Go's time.Date
 * normalises); a wall time repeated by a fall-back matches both instants.
 */

export interface Schedule {
  /** The first activation strictly after `after` (epoch ms, whole minutes), or undefined within 5 years. */
  next(after: number): number | undefined;
  readonly timeZone: string;
}

export class CronParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CronParseError';
  }
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}
const minuteB: Bounds = { min: 0, max: 59 };
const hourB: Bounds = { min: 0, max: 23 };
const domB: Bounds = { min: 1, max: 31 };
const monthB: Bounds = { min: 1, max: 12, names: Object.fromEntries(MONTHS.map((m, i) => [m, i + 1])) };
const dowB: Bounds = { min: 0, max: 7, names: Object.fromEntries(DAYS.map((d, i) => [d, i])) };

interface Field {
  values: Set<number>;
  /** `*` or `?` (no step): matches everything and does not restrict day matching. */
  star: boolean;
}

function parseValue(s: string, b: Bounds, field: string): number {
  const named = b.names?.[s.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^\d+$/.test(s)) throw new CronParseError(`failed to parse int from ${s}: invalid syntax in ${field}`);
  return Number(s);
}

function parseField(expr: string, b: Bounds, field: string): Field {
  const values = new Set<number>();
  let star = false;
  for (const part of expr.split(',')) {
    const [rangePart, stepPart, extra] = part.split('/');
    if (extra !== undefined || rangePart === undefined || rangePart === '') throw new CronParseError(`too many slashes or empty range: ${part}`);
    let start: number;
    let end: number;
    let partStar = false;
    if (rangePart === '*' || rangePart === '?') {
      start = b.min;
      end = b.max;
      partStar = true;
    } else {
      const bounds = rangePart.split('-');
      if (bounds.length > 2) throw new CronParseError(`too many hyphens: ${rangePart}`);
      start = parseValue(bounds[0]!, b, field);
      end = bounds.length === 2 ? parseValue(bounds[1]!, b, field) : start;
      if (bounds.length === 1 && stepPart !== undefined) end = b.max; // "N/step" means N-max/step
    }
    let step = 1;
    if (stepPart !== undefined) {
      if (!/^\d+$/.test(stepPart)) throw new CronParseError(`failed to parse int from ${stepPart}: invalid syntax`);
      step = Number(stepPart);
      if (step === 0) throw new CronParseError(`step of range should be a positive number: ${part}`);
      if (step > 1) partStar = false;
    }
    if (start < b.min) throw new CronParseError(`beginning of range (${start}) below minimum (${b.min}): ${part}`);
    if (end > b.max) throw new CronParseError(`end of range (${end}) above maximum (${b.max}): ${part}`);
    if (start > end) throw new CronParseError(`beginning of range (${start}) beyond end of range (${end}): ${part}`);
    for (let v = start; v <= end; v += step) values.add(v);
    if (partStar) star = true;
  }
  return { values, star };
}

const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Throws RangeError for a name Intl does not know. */
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Whether `timeZone` is a known IANA zone name (or UTC / Local). */
export function validateTimeZone(timeZone: string): string | undefined {
  if (timeZone === '' || timeZone === 'Local') return undefined;
  try {
    formatterFor(timeZone);
    return undefined;
  } catch (err) {
    return `unknown time zone ${timeZone}${err instanceof Error ? '' : ''}`;
  }
}

/** The zone's offset from UTC at instant `t` (ms, wall = t + offset). */
export function zoneOffset(timeZone: string, t: number): number {
  if (timeZone === 'UTC' || timeZone === '') return 0;
  const parts = formatterFor(timeZone).formatToParts(new Date(t));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour') % 24, get('minute'), get('second'));
  return wall - Math.floor(t / 1000) * 1000;
}

/** RFC 3339 of `t` in `timeZone`, with its offset (`2024-03-10T03:30:00-04:00`), as Go formats time.RFC3339. */
export function formatInZone(t: number, timeZone: string): string {
  const off = zoneOffset(timeZone, t);
  const wall = new Date(Math.floor(t / 1000) * 1000 + off).toISOString().replace('.000Z', '');
  if (off === 0) return `${wall}Z`;
  const sign = off < 0 ? '-' : '+';
  const abs = Math.abs(off) / 60_000;
  return `${wall}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** Instants whose wall clock in `tz` reads `wall` (0, 1 or 2 of them), ascending. */
function instantsForWall(tz: string, wall: number): number[] {
  const out = new Set<number>();
  for (const probe of [wall - 86_400_000, wall, wall + 86_400_000]) {
    const off = zoneOffset(tz, probe);
    const i = wall - off;
    if (zoneOffset(tz, i) === off) out.add(i);
  }
  return [...out].sort((a, b) => a - b);
}

class CronSchedule implements Schedule {
  constructor(
    private readonly minute: Field,
    private readonly hour: Field,
    private readonly dom: Field,
    private readonly month: Field,
    private readonly dow: Field,
    readonly timeZone: string,
  ) {}

  private dayMatches(d: Date): boolean {
    const domOk = this.dom.values.has(d.getUTCDate());
    const wd = d.getUTCDay();
    const dowOk = this.dow.values.has(wd) || (wd === 0 && this.dow.values.has(7));
    return this.dom.star || this.dow.star ? domOk && dowOk : domOk || dowOk;
  }

  /** Matching wall times (as UTC-based ms) from `from` on, ascending; stops after 5 years. */
  private *walls(from: number): Generator<number> {
    const limit = from + 5 * 366 * 86_400_000;
    const d = new Date(Math.ceil(from / 60_000) * 60_000);
    while (d.getTime() <= limit) {
      if (!this.month.values.has(d.getUTCMonth() + 1)) {
        d.setUTCMonth(d.getUTCMonth() + 1, 1);
        d.setUTCHours(0, 0, 0, 0);
        continue;
      }
      if (!this.dayMatches(d)) {
        d.setUTCDate(d.getUTCDate() + 1);
        d.setUTCHours(0, 0, 0, 0);
        continue;
      }
      if (!this.hour.values.has(d.getUTCHours())) {
        d.setUTCHours(d.getUTCHours() + 1, 0, 0, 0);
        continue;
      }
      if (!this.minute.values.has(d.getUTCMinutes())) {
        d.setUTCMinutes(d.getUTCMinutes() + 1, 0, 0);
        continue;
      }
      yield d.getTime();
      d.setUTCMinutes(d.getUTCMinutes() + 1, 0, 0);
    }
  }

  next(after: number): number | undefined {
    const tz = this.timeZone;
    // Start a few hours back on the wall clock: a fall-back repeats wall times.
    const startWall = after + zoneOffset(tz, after) - 3 * 3_600_000;
    let best: number | undefined;
    let bestWall: number | undefined;
    for (const wall of this.walls(startWall)) {
      if (bestWall !== undefined && wall > bestWall + 4 * 3_600_000) break;
      let instants = instantsForWall(tz, wall);
      // Skipped by a spring-forward: keep the offset from before the change.
      if (instants.length === 0) instants = [wall - zoneOffset(tz, wall - 86_400_000 - zoneOffset(tz, wall))];
      for (const i of instants) {
        if (i > after && (best === undefined || i < best)) {
          best = i;
          bestWall ??= wall;
        }
      }
    }
    return best;
  }
}

/** Parses a schedule (ParseStandard). `defaultTimeZone` applies unless the spec has a TZ= prefix. */
export function parseSchedule(spec: string, defaultTimeZone = 'UTC'): Schedule {
  let s = spec.trim();
  let tz = defaultTimeZone || 'UTC';
  const m = /^(?:CRON_TZ|TZ)=(\S+)\s+(.*)$/.exec(s);
  if (m) {
    tz = m[1]!;
    s = m[2]!.trim();
  }
  if (tz === 'Local') tz = 'UTC';
  try {
    formatterFor(tz);
  } catch (err) {
    throw new CronParseError(`provided bad location ${tz}: unknown time zone ${tz}${err instanceof Error ? '' : ''}`);
  }
  if (s.startsWith('@')) {
    const d = DESCRIPTORS[s.toLowerCase()];
    if (!d) throw new CronParseError(`unrecognized descriptor: ${s}`);
    s = d;
  }
  const fields = s.split(/\s+/).filter((x) => x !== '');
  if (fields.length !== 5) throw new CronParseError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  return new CronSchedule(
    parseField(fields[0]!, minuteB, 'minute'),
    parseField(fields[1]!, hourB, 'hour'),
    parseField(fields[2]!, domB, 'day of month'),
    parseField(fields[3]!, monthB, 'month'),
    parseField(fields[4]!, dowB, 'day of week'),
    tz,
  );
}
