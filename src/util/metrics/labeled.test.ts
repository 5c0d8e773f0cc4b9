import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { LabeledCounter, LabeledGauge, LabeledHistogram, registeredIn } from './labeled.js';

describe('labeled metrics', () => {
  it("print the same exposition text and JSON as prom-client's metrics after the same updates", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const buckets = [0.005, 0.1, 0.5, 1];
    const c1 = new LabeledCounter({ name: 'reqs_total', help: 'Requests.', labelNames: ['code', 'method'], registers: [ours] });
    const c2 = new Counter({ name: 'reqs_total', help: 'Requests.', labelNames: ['code', 'method'], registers: [theirs] });
    const g1 = new LabeledGauge({ name: 'depth', help: 'Depth "quoted" \\ help.', labelNames: ['name'], registers: [ours] });
    const g2 = new Gauge({ name: 'depth', help: 'Depth "quoted" \\ help.', labelNames: ['name'], registers: [theirs] });
    const h1 = new LabeledHistogram({ name: 'took_seconds', help: 'Took.', labelNames: ['verb', 'host'], buckets, registers: [ours] });
    const h2 = new Histogram({ name: 'took_seconds', help: 'Took.', labelNames: ['verb', 'host'], buckets, registers: [theirs] });
    let seed = 3;
    const rand = (n: number) => Math.floor(((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * n);
    const codes = ['200', '404', '<error>'];
    const names = ['a', 'b "q"', 'c\\d', 'e\nf'];
    for (let i = 0; i < 500; i++) {
      const code = codes[rand(codes.length)]!;
      const method = rand(2) ? 'GET' : 'PATCH';
      c1.with(code, method).inc();
      c2.inc({ code, method });
      const name = names[rand(names.length)]!;
      const k = rand(3);
      if (k === 0) (g1.with(name).inc(), g2.inc({ name }));
      else if (k === 1) (g1.with(name).dec(), g2.dec({ name }));
      else (g1.with(name).set(i / 7), g2.set({ name }, i / 7));
      const v = [0, 0.005, 0.0051, 0.3, 1, 2.5, rand(1000) / 997][rand(7)]!;
      h1.with(method, 'https://h:6443').observe(v);
      h2.observe({ verb: method, host: 'https://h:6443' }, v);
      if (i === 250) {
        assert.equal(await ours.metrics(), await theirs.metrics(), 'halfway');
        ours.resetMetrics();
        theirs.resetMetrics();
      }
    }
    assert.equal(await ours.metrics(), await theirs.metrics());
    const json = async (r: Registry) => JSON.parse(JSON.stringify(await r.getMetricsAsJSON())) as unknown;
    assert.deepEqual(await json(ours), await json(theirs));
    assert.match(await ours.metrics(), /took_seconds_bucket\{le="0.005",verb="GET",host="https:\/\/h:6443"\} \d+/);
  });

  it('makes each child once, checks the number of label values, and finds a registered metric by class', () => {
    const r = new Registry();
    const c = new LabeledCounter({ name: 'x_total', help: 'x', labelNames: ['a', 'b'], registers: [r] });
    assert.equal(c.with('1', '2'), c.with('1', '2'));
    assert.notEqual(c.with('1', '2'), c.with('12', ''));
    assert.throws(() => c.with('1'), /2 label values expected, got 1/);
    assert.equal(registeredIn(r, LabeledCounter, { name: 'x_total', help: 'x', labelNames: ['a', 'b'] }), c);
    const made = registeredIn(r, LabeledCounter, { name: 'y_total', help: 'y', labelNames: [] });
    assert.equal(r.getSingleMetric('y_total'), made as unknown);
    assert.throws(() => new LabeledGauge({ name: 'x_total', help: 'x', labelNames: [], registers: [r] }), /already been registered/);
  });

  it('rejects observations that are not finite numbers, as prom-client does', () => {
    const h = new LabeledHistogram({ name: 'h', help: 'h', labelNames: ['a'], buckets: [1] });
    assert.throws(() => h.with('x').observe(Number.NaN), TypeError);
  });
});
