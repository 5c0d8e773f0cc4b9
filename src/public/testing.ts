/**
 * kcm/testing: test your controllers without a cluster. `startTestEnv`
 * runs kcm's embedded API server in the test process (no binaries, no
 * etcd), optionally with kcm's own controllers (garbage collector,
 * namespace, ...), a scheduler and simulated nodes, fault injection
 * (dropped watches, 410, 429, 409, slow resources) and a fake clock that
 * drives the managers it makes; the fake client tests a reconciler fully
 * in memory. `validateResource` checks an object against a resource's
 * schema as the API server does.
 */
export { startTestEnv, type TestEnv, type TestEnvOptions } from '../testing/test-env.js';
export type { TestWebhookOptions, TestWebhooks } from '../testing/webhooks.js';
export { validateResource, type ValidationResult, type SchemaSource } from '../testing/validate.js';
export { eventually, type EventuallyOptions } from '../testing/eventually.js';
export type { Faults, FaultMatch } from '../testing/faults.js';
export { FakeClock, flushMicrotasks, realClock, type Clock, type Timer } from '../util/clock/clock.js';
export { newFakeClient, type FakeClient, type FakeClientOptions, type FakeAction, type FakeVerb, type Reactor } from '../controller/testing/fake-client.js';
export { newFakeRecorder, type FakeEventRecorder } from '../tools/record/fake-recorder.js';
