/**
 * The test context of the batch controllers' unit tests (job, cronjob,
 * ttl-after-finished): pods, jobs and cron jobs informers.
 */
import { newControllerTestContext, type ControllerTestContext } from '../testing/test-context.js';

export type BatchTestContext = ControllerTestContext;

export function newBatchTestContext(start = '2024-01-01T00:00:00Z'): BatchTestContext {
  return newControllerTestContext({ start, informers: ['pods', 'jobs', 'cronJobs'] });
}
