export type { EventBroadcaster, EventRecorder, EventSource, EventTarget, EventType } from './interfaces.js';
export {
  newEventBroadcaster,
  getReference,
  MAX_QUEUED_EVENTS,
  MAX_TRIES_PER_EVENT,
  DEFAULT_SLEEP_DURATION_MS,
  type EventBroadcasterOptions,
} from './event-broadcaster.js';
export {
  newEventCorrelator,
  eventKey,
  aggregateKey,
  spamKey,
  AGGREGATE_MESSAGE_PREFIX,
  DEFAULT_AGGREGATE_MAX_EVENTS,
  DEFAULT_AGGREGATE_INTERVAL_SECONDS,
  DEFAULT_SPAM_BURST,
  DEFAULT_SPAM_QPS,
  type EventCorrelator,
  type EventCorrelatorOptions,
  type CorrelateResult,
} from './event-correlator.js';
export { newFakeRecorder, type FakeEventRecorder } from './fake-recorder.js';
export { sprintf } from './format.js';
