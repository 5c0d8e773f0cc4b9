/**
 * The EventCorrelator of client-go tools/record/events_cache.go: it keeps
 * a controller from flooding the API server with events.
 *
 * 1. Aggregation: events alike except for the message (same source,
 *    object, type, reason, reporting component and instance) are counted per
 *    distinct message; from the 10th distinct message within 10 minutes on,
 *    they are replaced by one event "(combined from similar events): <msg>".
 * 2. Dedupe: an event identical to one already written (same key, message
 *    included) becomes a PATCH of count, lastTimestamp and message on that
 *    event instead of a new object.
 * 3. Spam filter: a token bucket per source + object (burst 25, one token
 *    per 5 minutes) drops what exceeds it.
 */
import type { Event } from 'kubernetes-types/core/v1.js';
import type { Clock } from '../../util/clock/clock.js';
import { rfc3339 } from '../../util/clock/clock.js';
import { TokenBucket } from '../../util/workqueue/token-bucket.js';
import { deepCopy } from '../../util/json/deep-copy.js';

/**
 * An event name's time, in Unix nanoseconds: the clock's milliseconds and the
 * sub-millisecond part of the process's high-resolution timer (client-go names
 * events by time.Now().UnixNano(); with milliseconds alone, two components
 * recording about one object in the same millisecond chose the same name and
 * the second event was refused as AlreadyExists).
 */
export function eventNanos(clock: Clock): bigint {
  return BigInt(clock.now()) * 1000000n + (process.hrtime.bigint() % 1000000n);
}

export const MAX_LRU_CACHE_ENTRIES = 4096;
/** Distinct messages of similar events before aggregation starts. */
export const DEFAULT_AGGREGATE_MAX_EVENTS = 10;
export const DEFAULT_AGGREGATE_INTERVAL_SECONDS = 600;
export const DEFAULT_SPAM_BURST = 25;
/** One event per 5 minutes. */
export const DEFAULT_SPAM_QPS = 1 / 300;
export const AGGREGATE_MESSAGE_PREFIX = '(combined from similar events): ';

/** A tiny LRU map (Map keeps insertion order: re-insert on use). */
class Lru<V> {
  private readonly m = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(k: string): V | undefined {
    const v = this.m.get(k);
    if (v !== undefined) {
      this.m.delete(k);
      this.m.set(k, v);
    }
    return v;
  }
  set(k: string, v: V): void {
    this.m.delete(k);
    this.m.set(k, v);
    if (this.m.size > this.max) this.m.delete(this.m.keys().next().value as string);
  }
  get size(): number {
    return this.m.size;
  }
}

const SEP = '\u0000';

function objectKeyParts(e: Event): string[] {
  const o = e.involvedObject;
  return [e.source?.component ?? '', e.source?.host ?? '', o.kind ?? '', o.namespace ?? '', o.name ?? '', o.uid ?? '', o.apiVersion ?? ''];
}

/** Identity of an event for dedupe: everything but the timestamps and count. */
export function eventKey(e: Event): string {
  const o = e.involvedObject;
  return [
    e.source?.component ?? '',
    e.source?.host ?? '',
    o.kind ?? '',
    o.namespace ?? '',
    o.name ?? '',
    o.fieldPath ?? '',
    o.uid ?? '',
    o.apiVersion ?? '',
    e.type ?? '',
    e.reason ?? '',
    e.message ?? '',
  ].join(SEP);
}

/** Events alike except for their message share this key. */
export function aggregateKey(e: Event): string {
  return [...objectKeyParts(e), e.type ?? '', e.reason ?? '', e.reportingComponent ?? '', e.reportingInstance ?? ''].join(SEP);
}

/** Source + object: what the spam filter limits. */
export function spamKey(e: Event): string {
  return objectKeyParts(e).join(SEP);
}

export interface CorrelateResult {
  /** The event to write (possibly aggregated, possibly with count > 1). */
  event: Event;
  /** Set when the event exists already: send this strategic merge patch instead of creating. */
  patch?: { count: number; lastTimestamp: string; message: string };
  /** Dropped by the spam filter. */
  skip: boolean;
}

export interface EventCorrelator {
  correlate(event: Event): CorrelateResult;
  /** Records what the server returned (name, resourceVersion, count) for later dedupe. */
  updateState(event: Event): void;
}

export interface EventCorrelatorOptions {
  clock: Clock;
  /** Allocates the name of a new aggregate event; defaults to `<object>.<hex ms*1e6>`. */
  newName?: (objectName: string) => string;
  maxEvents?: number;
  maxIntervalSeconds?: number;
  spamBurst?: number;
  spamQps?: number;
}

interface AggregateRecord {
  localKeys: Set<string>;
  lastTimestamp: number;
}

interface EventLog {
  count: number;
  firstTimestamp: string | undefined;
  name: string | undefined;
  resourceVersion: string | undefined;
}

class Correlator implements EventCorrelator {
  private readonly aggregates = new Lru<AggregateRecord>(MAX_LRU_CACHE_ENTRIES);
  private readonly observed = new Lru<EventLog>(MAX_LRU_CACHE_ENTRIES);
  private readonly spam = new Lru<TokenBucket>(MAX_LRU_CACHE_ENTRIES);
  private readonly clock: Clock;
  private readonly maxEvents: number;
  private readonly maxIntervalMs: number;
  private readonly burst: number;
  private readonly qps: number;
  private readonly newName: (objectName: string) => string;

  constructor(opts: EventCorrelatorOptions) {
    this.clock = opts.clock;
    this.maxEvents = opts.maxEvents ?? DEFAULT_AGGREGATE_MAX_EVENTS;
    this.maxIntervalMs = (opts.maxIntervalSeconds ?? DEFAULT_AGGREGATE_INTERVAL_SECONDS) * 1000;
    this.burst = opts.spamBurst ?? DEFAULT_SPAM_BURST;
    this.qps = opts.spamQps ?? DEFAULT_SPAM_QPS;
    this.newName = opts.newName ?? ((n) => `${n}.${eventNanos(this.clock).toString(16)}`);
  }

  correlate(newEvent: Event): CorrelateResult {
    const { event: aggregated, key } = this.aggregate(newEvent);
    const { event, patch } = this.observe(aggregated, key);
    if (this.filtered(event)) return { event, skip: true };
    return patch ? { event, patch, skip: false } : { event, skip: false };
  }

  updateState(event: Event): void {
    this.observed.set(eventKey(event), {
      count: event.count ?? 1,
      firstTimestamp: event.firstTimestamp,
      name: event.metadata?.name,
      resourceVersion: event.metadata?.resourceVersion,
    });
  }

  private aggregate(newEvent: Event): { event: Event; key: string } {
    const now = this.clock.now();
    const aggKey = aggregateKey(newEvent);
    let record = this.aggregates.get(aggKey);
    if (!record || now - record.lastTimestamp > this.maxIntervalMs) record = { localKeys: new Set(), lastTimestamp: now };
    record.localKeys.add(newEvent.message ?? '');
    record.lastTimestamp = now;
    this.aggregates.set(aggKey, record);
    if (record.localKeys.size < this.maxEvents) return { event: newEvent, key: eventKey(newEvent) };
    // Keep the set from growing without bound: forget one message.
    record.localKeys.delete(record.localKeys.values().next().value as string);
    const ts = rfc3339(now);
    const combined: Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: this.newName(newEvent.involvedObject.name ?? ''), namespace: newEvent.metadata?.namespace },
      involvedObject: newEvent.involvedObject,
      count: 1,
      firstTimestamp: ts,
      lastTimestamp: ts,
      message: AGGREGATE_MESSAGE_PREFIX + (newEvent.message ?? ''),
      type: newEvent.type,
      reason: newEvent.reason,
      source: newEvent.source,
      reportingComponent: newEvent.reportingComponent,
      reportingInstance: newEvent.reportingInstance,
    };
    return { event: combined, key: aggKey };
  }

  private observe(newEvent: Event, key: string): { event: Event; patch?: CorrelateResult['patch'] } {
    const last = this.observed.get(key);
    let event = newEvent;
    let patch: CorrelateResult['patch'];
    if (last && last.count > 0) {
      event = deepCopy(newEvent);
      const meta = { ...(event.metadata ?? {}) } as { name?: string; resourceVersion?: string; namespace?: string };
      meta.name = last.name;
      meta.resourceVersion = last.resourceVersion;
      event = { ...event, metadata: meta, count: last.count + 1, firstTimestamp: last.firstTimestamp };
      patch = { count: event.count!, lastTimestamp: event.lastTimestamp ?? '', message: event.message ?? '' };
    }
    this.observed.set(key, {
      count: event.count ?? 1,
      firstTimestamp: event.firstTimestamp,
      name: event.metadata?.name,
      resourceVersion: event.metadata?.resourceVersion,
    });
    return patch ? { event, patch } : { event };
  }

  private filtered(event: Event): boolean {
    const k = spamKey(event);
    let bucket = this.spam.get(k);
    if (!bucket) {
      bucket = new TokenBucket(this.qps, this.burst, this.clock);
      this.spam.set(k, bucket);
    }
    return !bucket.tryAccept();
  }
}

export function newEventCorrelator(opts: EventCorrelatorOptions): EventCorrelator {
  return new Correlator(opts);
}
