/**
 * The test context of this folder's and the deployment folder's unit tests:
 * pods, replica sets, replication controllers and deployments informers.
 */
import { newControllerTestContext, type ControllerTestContext } from '../testing/test-context.js';

export type TestContext = ControllerTestContext;

export function newTestContext(start = '2024-01-01T00:00:00Z'): TestContext {
  return newControllerTestContext({ start, informers: ['pods', 'replicaSets', 'replicationControllers', 'deployments'], failUnsynced: true });
}
