/**
 * kcm/testing: test your controllers without a cluster. `startTestEnv`
 * runs kcm's embedded API server in the test process (no binaries, no
 * etcd); the fake client and fake clock test a reconciler in memory with
 * time under the test's control.
 */
export { startTestEnv, type TestEnv, type TestEnvOptions } from '../testing/test-env.js';
export { validateResource, type ValidationResult, type SchemaSource } from '../testing/validate.js';
export { FakeClock, flushMicrotasks, realClock, type Clock, type Timer } from '../util/clock/clock.js';
export { newFakeClient, type FakeClient, type FakeClientOptions, type FakeAction, type FakeVerb, type Reactor } from '../controller/testing/fake-client.js';
export { newFakeRecorder, type FakeEventRecorder } from '../tools/record/fake-recorder.js';
