import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bucketQuantile, parsePrometheusText, queuesFromMetrics } from './controllers-source.js';

const metrics = `# HELP workqueue_depth Current depth of workqueue
# TYPE workqueue_depth gauge
workqueue_depth{name="deployment"} 3
workqueue_depth{name="replicaset"} 0
workqueue_adds_total{name="deployment"} 120
workqueue_retries_total{name="deployment"} 4
workqueue_longest_running_processor_seconds{name="deployment"} 0.25
workqueue_work_duration_seconds_bucket{name="deployment",le="0.001"} 10
workqueue_work_duration_seconds_bucket{name="deployment",le="0.01"} 90
workqueue_work_duration_seconds_bucket{name="deployment",le="0.1"} 100
workqueue_work_duration_seconds_bucket{name="deployment",le="+Inf"} 100
workqueue_work_duration_seconds_count{name="deployment"} 100
rest_client_requests_total{code="200",host="x",method="GET"} 5
`;

describe('controllers view from /metrics', () => {
  it('parses the Prometheus text format with labels', () => {
    const s = parsePrometheusText(metrics);
    assert.deepEqual(s[0], { name: 'workqueue_depth', labels: { name: 'deployment' }, value: 3 });
    assert.equal(s.length, 11);
  });

  it('interpolates quantiles within histogram buckets', () => {
    const b = [
      { le: 0.001, count: 10 },
      { le: 0.01, count: 90 },
      { le: 0.1, count: 100 },
      { le: Infinity, count: 100 },
    ];
    assert.ok(Math.abs(bucketQuantile(0.5, b)! - (0.001 + (0.009 * 40) / 80)) < 1e-12);
    assert.ok(Math.abs(bucketQuantile(0.99, b)! - (0.01 + (0.09 * 9) / 10)) < 1e-12);
    assert.equal(bucketQuantile(0.5, [{ le: Infinity, count: 0 }]), null);
  });

  it('makes queue states, with adds per second from the previous reading', () => {
    const [dep, rs] = queuesFromMetrics(parsePrometheusText(metrics), new Map([['deployment', { adds: 100, at: 0 }]]), 10_000);
    assert.equal(dep!.name, 'deployment');
    assert.equal(dep!.depth, 3);
    assert.equal(dep!.retries, 4);
    assert.equal(dep!.addsPerSecond, 2);
    assert.equal(dep!.longestRunningSeconds, 0.25);
    assert.equal(dep!.duration.count, 100);
    assert.equal(rs!.name, 'replicaset');
    assert.equal(rs!.duration.p50, null);
  });
});
