/**
 * Structured logging with klog-like verbosity.
 *
 *   const log = newLogger('replicaset');
 *   log.info({ key, duration }, 'synced');        // always shown (level 0)
 *   log.v(4).info({ key }, 'enqueued');          // shown with -v=4 or more
 *   log.error(err, { key }, 'sync failed');
 *
 * Text format mirrors klog: `I1121 10:56:42.123456 replicaset] "synced" key="ns/a" duration=3`.
 * JSON format (`--logging-format=json`) prints one object per line.
 */

export type LogFields = Record<string, unknown>;
export type LogFormat = 'text' | 'json';

export interface Logger {
  readonly name: string;
  info(msg: string): void;
  info(fields: LogFields, msg: string): void;
  warn(msg: string): void;
  warn(fields: LogFields, msg: string): void;
  error(msg: string): void;
  error(err: unknown, msg: string): void;
  error(err: unknown, fields: LogFields, msg: string): void;
  /** A logger that writes only when the global verbosity is at least `level`. */
  v(level: number): Logger;
  /** True when messages at `level` are written. */
  enabled(level: number): boolean;
  /** A logger whose lines carry `fields` too (and the name `name/sub` when given). */
  child(fields: LogFields, sub?: string): Logger;
}

interface Settings {
  verbosity: number;
  format: LogFormat;
  write: (line: string) => void;
}

const settings: Settings = {
  verbosity: 0,
  format: 'text',
  write: (line) => process.stderr.write(line + '\n'),
};

/** Sets the global verbosity (`-v`). */
export function setVerbosity(v: number): void {
  settings.verbosity = v;
}
export function getVerbosity(): number {
  return settings.verbosity;
}
export function setLogFormat(f: LogFormat): void {
  settings.format = f;
}
/** Redirects output (tests capture lines with this). Returns the previous writer. */
export function setLogOutput(write: (line: string) => void): (line: string) => void {
  const prev = settings.write;
  settings.write = write;
  return prev;
}

function pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

function klogHeader(sev: string, d: Date): string {
  return (
    sev +
    pad(d.getUTCMonth() + 1) +
    pad(d.getUTCDate()) +
    ' ' +
    pad(d.getUTCHours()) +
    ':' +
    pad(d.getUTCMinutes()) +
    ':' +
    pad(d.getUTCSeconds()) +
    '.' +
    pad(d.getUTCMilliseconds(), 3) +
    '000'
  );
}

function formatValue(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (v instanceof Error) return JSON.stringify(v.message);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null || v === undefined) return String(v);
  try {
    return JSON.stringify(v);
  } catch {
    return String(v);
  }
}

function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

class KLogger implements Logger {
  constructor(
    readonly name: string,
    private readonly fields: LogFields,
    private readonly level: number,
  ) {}

  enabled(level: number): boolean {
    return settings.verbosity >= level;
  }

  v(level: number): Logger {
    return new KLogger(this.name, this.fields, level);
  }

  child(fields: LogFields, sub?: string): Logger {
    return new KLogger(sub ? `${this.name}/${sub}` : this.name, { ...this.fields, ...fields }, this.level);
  }

  info(a: LogFields | string, b?: string): void {
    if (typeof a === 'string') this.emit('I', undefined, {}, a);
    else this.emit('I', undefined, a, b ?? '');
  }

  warn(a: LogFields | string, b?: string): void {
    if (typeof a === 'string') this.emit('W', undefined, {}, a);
    else this.emit('W', undefined, a, b ?? '');
  }

  error(a: unknown, b?: LogFields | string, c?: string): void {
    if (b === undefined && typeof a === 'string') this.emit('E', undefined, {}, a);
    else if (typeof b === 'string') this.emit('E', a, {}, b);
    else this.emit('E', a, b ?? {}, c ?? '');
  }

  private emit(sev: 'I' | 'W' | 'E', err: unknown, fields: LogFields, msg: string): void {
    // Errors and warnings are always written; info respects the verbosity.
    if (sev === 'I' && settings.verbosity < this.level) return;
    const all: LogFields = { ...this.fields, ...fields };
    if (err !== undefined) all.err = errorMessage(err);
    const now = new Date();
    if (settings.format === 'json') {
      const obj: LogFields = { ts: now.getTime() / 1000, logger: this.name, v: this.level, msg };
      if (sev === 'E') obj.severity = 'error';
      else if (sev === 'W') obj.severity = 'warning';
      for (const [k, v] of Object.entries(all)) obj[k] = v instanceof Error ? v.message : v;
      let line: string;
      try {
        line = JSON.stringify(obj);
      } catch {
        line = JSON.stringify({ ts: obj.ts, logger: this.name, msg, unserialisable: true });
      }
      settings.write(line);
      return;
    }
    let line = `${klogHeader(sev, now)} ${this.name}] ${JSON.stringify(msg)}`;
    for (const [k, v] of Object.entries(all)) line += ` ${k}=${formatValue(v)}`;
    settings.write(line);
  }
}

/** A logger for one component or controller; its lines carry `name`. */
export function newLogger(name: string, fields: LogFields = {}): Logger {
  return new KLogger(name, fields, 0);
}
