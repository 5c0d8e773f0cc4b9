/**
 * A recorder for tests (client-go record.FakeRecorder): keeps each event as
 * the string `<type> <reason> <message>` instead of writing it.
 */
import { sprintf } from './format.js';
import type { EventRecorder, EventTarget, EventType } from './interfaces.js';

export interface FakeEventRecorder extends EventRecorder {
  /** Recorded events, oldest first, as `<type> <reason> <message>`. */
  readonly events: string[];
  /** The objects the events were about, parallel to `events`. */
  readonly targets: EventTarget[];
  clear(): void;
}

export function newFakeRecorder(): FakeEventRecorder {
  const events: string[] = [];
  const targets: EventTarget[] = [];
  const record = (obj: EventTarget, type: EventType, reason: string, message: string) => {
    events.push(`${type} ${reason} ${message}`);
    targets.push(obj);
  };
  return {
    events,
    targets,
    clear() {
      events.length = 0;
      targets.length = 0;
    },
    event: record,
    eventf: (obj, type, reason, format, ...args) => record(obj, type, reason, sprintf(format, ...args)),
    annotatedEventf: (obj, _annotations, type, reason, format, ...args) => record(obj, type, reason, sprintf(format, ...args)),
  };
}
