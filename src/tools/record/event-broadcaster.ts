/**
 * The event broadcaster and recorders (client-go tools/record/event.go),
 * writing core/v1 Events through a Client.
 *
 * Recording is asynchronous: `event()` puts the event on a bounded queue
 * (1000; beyond that events are dropped with a log line) and returns. One
 * writer correlates each event (aggregation, dedupe, spam filter) and writes
 * it: a create, or a strategic merge PATCH of count/lastTimestamp/message
 * when the event exists already (falling back to create when the PATCH finds
 * nothing). Network failures are retried up to 12 times, 10 s apart (the
 * first wait randomised), on the clock; an API rejection is not retried.
 */
import type { Event, ObjectReference } from 'kubernetes-types/core/v1.js';
import { GVR } from '../../api/gvr.js';
import { isAlreadyExists, isNotFound, isStatusError } from '../../client/errors.js';
import type { Client } from '../../client/interfaces.js';
import { rfc3339, type Clock } from '../../util/clock/clock.js';
import { newLogger, type Logger } from '../../util/log/logger.js';
import { eventNanos, newEventCorrelator, type EventCorrelator } from './event-correlator.js';
import { sprintf } from './format.js';
import type { EventBroadcaster, EventRecorder, EventSource, EventTarget, EventType } from './interfaces.js';
import { deepCopy } from '../../util/json/deep-copy.js';

export const MAX_QUEUED_EVENTS = 1000;
/** Drops of a full queue are reported at most once per this long (see Broadcaster.reportDrops). */
export const DROP_REPORT_INTERVAL_MS = 10_000;
export const MAX_TRIES_PER_EVENT = 12;
export const DEFAULT_SLEEP_DURATION_MS = 10_000;

export interface EventBroadcasterOptions {
  client: Client;
  clock: Clock;
  logger?: Logger;
  /** Queue bound (default 1000). */
  maxQueued?: number;
  /** Attempts per event (default 12). */
  maxTries?: number;
  /** Wait between attempts (default 10 s; the first wait is randomised). */
  retrySleepMs?: number;
  random?: () => number;
  /** Replaces the correlator (tests). */
  correlator?: EventCorrelator;
}

/** An ObjectReference to `obj` (v1.GetReference). */
export function getReference(obj: EventTarget): ObjectReference {
  const o = obj as Record<string, unknown>;
  const meta = o.metadata as { name?: string; namespace?: string; uid?: string; resourceVersion?: string } | undefined;
  if (meta) {
    const ref: ObjectReference = {};
    const r = ref as Record<string, unknown>;
    if (typeof o.kind === 'string') r.kind = o.kind;
    if (meta.namespace) r.namespace = meta.namespace;
    if (meta.name) r.name = meta.name;
    if (meta.uid) r.uid = meta.uid;
    if (typeof o.apiVersion === 'string') r.apiVersion = o.apiVersion;
    if (meta.resourceVersion) r.resourceVersion = meta.resourceVersion;
    return ref;
  }
  return { ...(obj as ObjectReference) };
}

class Broadcaster implements EventBroadcaster {
  private readonly queue: Event[] = [];
  private readonly client: Client;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly maxQueued: number;
  private readonly maxTries: number;
  private readonly sleepMs: number;
  private readonly random: () => number;
  private readonly correlator: EventCorrelator;
  private readonly stop = new AbortController();
  private closed = false;
  private writer: Promise<void> | undefined;
  private lastNanos = 0n;
  private queueFull: Error | undefined;
  /** Events dropped and not yet reported in the log (see reportDrops). */
  private dropped = 0;
  /** When the last drop report was written. */
  private dropReportAt: number | undefined;
  private idleWaiters: Array<() => void> = [];

  constructor(opts: EventBroadcasterOptions) {
    this.client = opts.client;
    this.clock = opts.clock;
    this.log = opts.logger ?? newLogger('events');
    this.maxQueued = opts.maxQueued ?? MAX_QUEUED_EVENTS;
    this.maxTries = opts.maxTries ?? MAX_TRIES_PER_EVENT;
    this.sleepMs = opts.retrySleepMs ?? DEFAULT_SLEEP_DURATION_MS;
    this.random = opts.random ?? Math.random;
    this.correlator = opts.correlator ?? newEventCorrelator({ clock: this.clock, newName: (n) => this.eventName(n) });
  }

  newRecorder(source: EventSource): EventRecorder {
    const generate = (obj: EventTarget, annotations: Record<string, string> | undefined, type: EventType, reason: string, message: string) => {
      try {
        this.generate(source, obj, annotations, type, reason, message);
      } catch (err) {
        this.log.error(err, { reason }, 'could not record event');
      }
    };
    return {
      event: (obj, type, reason, message) => generate(obj, undefined, type, reason, message),
      eventf: (obj, type, reason, format, ...args) => generate(obj, undefined, type, reason, sprintf(format, ...args)),
      annotatedEventf: (obj, annotations, type, reason, format, ...args) => generate(obj, annotations, type, reason, sprintf(format, ...args)),
    };
  }

  whenIdle(): Promise<void> {
    if (!this.writer && this.queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  async shutdown(): Promise<void> {
    this.closed = true;
    this.stop.abort();
    await this.writer;
  }

  /** `<name>.<hex unix nanos>`, strictly increasing so two events never share a name. */
  private eventName(objectName: string): string {
    let nanos = eventNanos(this.clock);
    if (nanos <= this.lastNanos) nanos = this.lastNanos + 1n;
    this.lastNanos = nanos;
    return `${objectName}.${nanos.toString(16)}`;
  }

  private generate(
    source: EventSource,
    obj: EventTarget,
    annotations: Record<string, string> | undefined,
    type: EventType,
    reason: string,
    message: string,
  ): void {
    if (type !== 'Normal' && type !== 'Warning') {
      this.log.error({ type }, 'unsupported event type');
      return;
    }
    const ref = getReference(obj);
    const ts = rfc3339(this.clock.now());
    const metadata: Event['metadata'] = { name: this.eventName(ref.name ?? ''), namespace: ref.namespace || 'default' };
    if (annotations) (metadata as { annotations?: Record<string, string> }).annotations = { ...annotations };
    const source_: Event['source'] = source.host ? { component: source.component, host: source.host } : { component: source.component };
    const event: Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata,
      involvedObject: ref,
      reason,
      message,
      firstTimestamp: ts,
      lastTimestamp: ts,
      count: 1,
      type,
      source: source_,
      reportingComponent: source.component,
      reportingInstance: source.host ?? '',
    };
    this.log.v(4).info({ object: `${ref.namespace ?? ''}/${ref.name ?? ''}`, kind: ref.kind, type, reason }, message);
    if (this.closed) {
      this.log.v(2).info({ reason }, 'event broadcaster is shut down, dropping event');
      return;
    }
    if (this.queue.length >= this.maxQueued) {
      // At most one error line per DROP_REPORT_INTERVAL_MS: the first drop with its event, later ones as a count.
      // A scheduler binding faster than its events are written drops thousands, and an error line for each
      // (the controller side's stderr, a terminal under kcm up) cost more CPU than the events themselves.
      this.dropped++;
      this.queueFull ??= new Error(`too many queued events (${this.maxQueued})`);
      this.reportDrops({ object: `${ref.namespace ?? ''}/${ref.name ?? ''}`, reason });
      return;
    }
    if (this.dropped > 0) this.reportDrops();
    this.queue.push(event);
    this.writer ??= this.drain();
  }

  /** Logs the drops not yet reported, unless a report was written less than DROP_REPORT_INTERVAL_MS ago. */
  private reportDrops(dropping?: { object: string; reason: string }): void {
    const now = this.clock.now();
    if (this.dropReportAt !== undefined && now - this.dropReportAt < DROP_REPORT_INTERVAL_MS) return;
    if (dropping && this.dropped === 1) this.log.error(this.queueFull, dropping, 'unable to record event, dropped it (further drops are counted)');
    else this.log.error(this.queueFull, { dropped: this.dropped }, 'dropped events: the queue was full');
    this.dropReportAt = now;
    this.dropped = 0;
  }

  private async drain(): Promise<void> {
    try {
      for (;;) {
        const event = this.queue.shift();
        if (!event) break;
        try {
          await this.recordToSink(event);
        } catch (err) {
          this.log.error(err, { reason: event.reason }, 'unexpected error while writing event');
        }
      }
    } finally {
      this.writer = undefined;
      if (this.queue.length > 0) this.writer = this.drain();
      else {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const w of waiters) w();
      }
    }
  }

  private async recordToSink(event: Event): Promise<void> {
    const result = this.correlator.correlate(event);
    if (result.skip) {
      this.log.v(4).info({ reason: event.reason, object: event.involvedObject.name }, 'event dropped by the spam filter');
      return;
    }
    for (let tries = 1; ; tries++) {
      if (await this.recordEvent(result.event, result.patch)) return;
      if (tries >= this.maxTries) {
        this.log.error({ reason: event.reason, object: event.involvedObject.name, tries }, 'unable to write event, giving up');
        return;
      }
      if (this.stop.signal.aborted) {
        this.log.error({ reason: event.reason, object: event.involvedObject.name }, 'event broadcaster shut down, dropping unwritten event');
        return;
      }
      const wait = tries === 1 ? this.sleepMs * this.random() : this.sleepMs;
      try {
        await this.clock.sleep(wait, this.stop.signal);
      } catch {
        // shut down while waiting: one last attempt happens on the next loop turn
      }
    }
  }

  /** True when done with the event (written, or rejected for good); false to retry. */
  private async recordEvent(event: Event, patch: { count: number; lastTimestamp: string; message: string } | undefined): Promise<boolean> {
    const ns = event.metadata?.namespace || 'default';
    const events = this.client.resource<Event & Record<string, unknown>>(GVR.events).namespace(ns);
    let written: Event | undefined;
    let error: unknown;
    let create = patch === undefined;
    if (patch) {
      try {
        written = await events.patch(event.metadata?.name ?? '', 'strategic', patch);
      } catch (err) {
        error = err;
        create = isNotFound(err);
      }
    }
    if (create) {
      const body = deepCopy(event) as Event & Record<string, unknown>;
      delete (body.metadata as { resourceVersion?: string }).resourceVersion;
      try {
        written = await events.create(body);
        error = undefined;
      } catch (err) {
        error = err;
      }
    }
    if (written) {
      this.correlator.updateState(written);
      return true;
    }
    if (isStatusError(error)) {
      if (isAlreadyExists(error)) this.log.v(5).info({ name: event.metadata?.name }, 'server rejected event: already exists (will not retry)');
      else this.log.error(error, { name: event.metadata?.name, reason: event.reason }, 'server rejected event (will not retry)');
      return true;
    }
    this.log.error(error, { name: event.metadata?.name, reason: event.reason }, 'unable to write event (may retry after sleeping)');
    return false;
  }
}

/** Starts an event broadcaster writing through `client`. Call shutdown() when done. */
export function newEventBroadcaster(opts: EventBroadcasterOptions): EventBroadcaster {
  return new Broadcaster(opts);
}
