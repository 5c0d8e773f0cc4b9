/**
 * kcm/record: client-go's tools/record. Controllers report what they did as
 * core/v1 Events on the objects they acted on; similar events are
 * aggregated and counted and floods are rate limited, as kube-controller-manager's are.
 *
 *   const broadcaster = newEventBroadcaster({ client, clock: realClock });
 *   const recorder = broadcaster.newRecorder({ component: 'widget-controller' });
 *   recorder.eventf(widget, 'Normal', 'Created', 'Created deployment %s', name);
 */
export type { EventBroadcaster, EventRecorder, EventSource, EventTarget, EventType } from '../tools/record/interfaces.js';
export { newEventBroadcaster, getReference, type EventBroadcasterOptions } from '../tools/record/event-broadcaster.js';
export { newFakeRecorder, type FakeEventRecorder } from '../tools/record/fake-recorder.js';
