import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../api/types.js';
import { strategyFor } from './strategy.js';
import { cronScheduleError } from './batch.js';

const jobs = strategyFor('batch', 'jobs');
const cronJobs = strategyFor('batch', 'cronjobs');

function job(spec: Record<string, unknown> = {}): KubeObject {
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'pi', namespace: 'default', uid: 'b89bbfc4' },
    spec: { template: { spec: { containers: [{ name: 'pi', image: 'perl' }], restartPolicy: 'OnFailure' } }, ...spec },
  };
}

function createJob(obj: KubeObject): KubeObject {
  jobs.defaults(obj);
  jobs.prepareForCreate(obj);
  return obj;
}

describe('job strategy', () => {
  it('defaults and labels a job as a real cluster prints it', () => {
    const j = createJob(job({ completions: 5, parallelism: 2 }));
    const s = j.spec as any;
    assert.equal(s.backoffLimit, 6);
    assert.equal(s.completionMode, 'NonIndexed');
    assert.equal(s.suspend, false);
    assert.equal(s.podReplacementPolicy, 'TerminatingOrFailed');
    assert.equal(s.completions, 5);
    assert.equal(s.parallelism, 2);
    assert.deepEqual(s.selector, { matchLabels: { 'batch.kubernetes.io/controller-uid': 'b89bbfc4' } });
    const expected = {
      'batch.kubernetes.io/controller-uid': 'b89bbfc4',
      'batch.kubernetes.io/job-name': 'pi',
      'controller-uid': 'b89bbfc4',
      'job-name': 'pi',
    };
    assert.deepEqual(s.template.metadata.labels, expected);
    assert.deepEqual(j.metadata?.labels, expected);
    assert.equal(s.template.spec.dnsPolicy, 'ClusterFirst');
    assert.equal(j.metadata?.generation, 1);
    assert.deepEqual(jobs.validate(j), []);
  });

  it('sets completions and parallelism to 1 only when both are unset', () => {
    const a = createJob(job());
    assert.equal((a.spec as any).completions, 1);
    assert.equal((a.spec as any).parallelism, 1);
    const b = createJob(job({ parallelism: 3 }));
    assert.equal((b.spec as any).completions, undefined);
  });

  it('rejects restartPolicy Always in job templates', () => {
    const j = createJob(job());
    (j.spec as any).template.spec.restartPolicy = 'Always';
    const msgs = jobs.validate(j).map((e) => e.message);
    assert.ok(msgs.includes('spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"'), msgs.join('\n'));
  });

  it('keeps template and selector immutable', () => {
    const old = createJob(job());
    const next = structuredClone(old);
    (next.spec as any).template.spec.containers[0].image = 'perl:2';
    (next.spec as any).parallelism = 4;
    const msgs = jobs.validateUpdate(next, old).map((e) => e.message);
    assert.ok(msgs.some((m) => m.startsWith('spec.template: Invalid value:') && m.endsWith('field is immutable')), msgs.join('\n'));
    assert.ok(!msgs.some((m) => m.startsWith('spec.parallelism')), 'parallelism is mutable');
  });

  it('orphans pods by default and exposes status.successful', () => {
    const j = createJob(job());
    assert.equal(jobs.defaultDeletePropagation, 'Orphan');
    j.status = { succeeded: 3 };
    assert.equal(jobs.fields(j)['status.successful'], '3');
  });
});

describe('cronjob strategy', () => {
  it('defaults a cronjob', () => {
    const cj: KubeObject = {
      metadata: { name: 'hello', namespace: 'default' },
      spec: { schedule: '*/1 * * * *', jobTemplate: { spec: { template: { spec: { containers: [{ name: 'c', image: 'busybox' }], restartPolicy: 'OnFailure' } } } } },
    };
    cronJobs.defaults(cj);
    cronJobs.prepareForCreate(cj);
    const s = cj.spec as any;
    assert.equal(s.concurrencyPolicy, 'Allow');
    assert.equal(s.suspend, false);
    assert.equal(s.successfulJobsHistoryLimit, 3);
    assert.equal(s.failedJobsHistoryLimit, 1);
    assert.equal(s.jobTemplate.spec.backoffLimit, undefined, 'job template specs are not defaulted');
    assert.equal(s.jobTemplate.spec.template.spec.schedulerName, 'default-scheduler');
    assert.deepEqual(cronJobs.validate(cj), []);
    s.schedule = 'every minute';
    assert.ok(cronJobs.validate(cj).some((e) => e.field === 'spec.schedule'));
    assert.equal(cronJobs.defaultDeletePropagation, 'Background');
  });

  it('parses cron schedules', () => {
    assert.equal(cronScheduleError('0 0 * * *'), undefined);
    assert.equal(cronScheduleError('@hourly'), undefined);
    assert.equal(cronScheduleError('*/5 1-3 * jan mon-fri'), undefined);
    assert.ok(cronScheduleError('61 * * * *'));
    assert.ok(cronScheduleError('* * *'));
    assert.ok(cronScheduleError('TZ=UTC 0 * * * *'));
  });
});
