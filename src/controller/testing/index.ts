export { newFakeClient, type FakeClient, type FakeClientOptions, type FakeAction, type FakeVerb, type Reactor } from './fake-client.js';
export { applyMergePatch, applyJsonPatch, applyStrategicMergePatch } from './patch.js';
export { parseLabelSelector, parseFieldSelector, type ObjectPredicate } from './selectors.js';
export { kindForResource } from './kinds.js';
