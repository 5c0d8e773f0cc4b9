/**
 * Counters, gauges and histograms whose label values are bound once
 * (client-go's `WithLabelValues`), for metrics updated on every request and
 * every work queue item. prom-client turns each update's label object into a
 * hash key (validate, sort, join) before it counts: about 5 % of a
 * controller manager's CPU. A bound child here is a field update. They
 * register in a prom-client Registry like its own metrics and print the
 * same exposition text (labeled.test.ts compares them with prom-client's).
 */
import type { Metric, Registry } from 'prom-client';

/** One sample as a prom-client Registry formats it (metricName: a histogram's _bucket, _sum and _count). */
export interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
  /** prom-client's histogram buckets carry one (null without exemplars). */
  exemplar?: null;
}

export interface LabeledMetricOptions {
  name: string;
  help: string;
  labelNames: readonly string[];
  /** Registries to register in (none by default). */
  registers?: Registry[];
}

type Labels = Record<string, string>;

/** What a child shares: its labels, and whether it is listed (updated since the last reset). */
abstract class Child {
  listed = false;
  constructor(
    readonly labels: Labels,
    private readonly owner: LabeledMetric<Child>,
  ) {}
  /** Lists the child on its first update: a series shows once updated, as prom-client's do. */
  protected touch(): void {
    if (!this.listed) this.owner.list(this);
  }
  abstract zero(): void;
}

abstract class LabeledMetric<C extends Child> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  readonly aggregator = 'sum' as const;
  abstract readonly type: 'counter' | 'gauge' | 'histogram';
  /** Children updated since the last reset, in the order of their first update. */
  protected listed: C[] = [];
  private readonly bound = new Map<string, C>();

  constructor(opts: LabeledMetricOptions) {
    this.name = opts.name;
    this.help = opts.help;
    this.labelNames = opts.labelNames;
    for (const r of opts.registers ?? []) r.registerMetric(this as unknown as Metric);
  }

  /** The child for these label values (in labelNames' order), made once. */
  with(...values: string[]): C {
    const key = values.length === 1 ? values[0]! : values.join('\u0000');
    let c = this.bound.get(key);
    if (!c) {
      if (values.length !== this.labelNames.length) throw new Error(`${this.name}: ${this.labelNames.length} label values expected, got ${values.length}`);
      const labels: Labels = {};
      this.labelNames.forEach((n, i) => (labels[n] = values[i]!));
      c = this.newChild(labels);
      this.bound.set(key, c);
    }
    return c;
  }

  list(c: Child): void {
    c.listed = true;
    this.listed.push(c as C);
  }

  reset(): void {
    for (const c of this.listed) {
      c.zero();
      c.listed = false;
    }
    this.listed = [];
  }

  protected abstract newChild(labels: Labels): C;

  /** What prom-client's Registry reads of a metric. */
  async get(): Promise<{ name: string; help: string; type: string; aggregator: 'sum'; values: Sample[] }> {
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values: this.values() };
  }

  protected abstract values(): Sample[];
}

export class CounterChild extends Child {
  value = 0;
  inc(n = 1): void {
    this.touch();
    this.value += n;
  }
  zero(): void {
    this.value = 0;
  }
}

export class GaugeChild extends CounterChild {
  dec(n = 1): void {
    this.touch();
    this.value -= n;
  }
  set(v: number): void {
    this.touch();
    this.value = v;
  }
}

export class HistogramChild extends Child {
  sum = 0;
  count = 0;
  /** Observations per bucket (not cumulative), by index of the first upper bound at or above them. */
  readonly counts: Float64Array;
  constructor(
    labels: Labels,
    owner: LabeledMetric<Child>,
    private readonly bounds: readonly number[],
  ) {
    super(labels, owner);
    this.counts = new Float64Array(bounds.length);
  }
  observe(v: number): void {
    if (!Number.isFinite(v)) throw new TypeError(`Value is not a valid number: ${v}`);
    this.touch();
    const b = this.bounds;
    for (let i = 0; i < b.length; i++) {
      if (v <= b[i]!) {
        this.counts[i]!++;
        break;
      }
    }
    this.sum += v;
    this.count++;
  }
  zero(): void {
    this.sum = 0;
    this.count = 0;
    this.counts.fill(0);
  }
}

/** A metric of one value per series: counters and gauges. */
abstract class ValueMetric<C extends CounterChild> extends LabeledMetric<C> {
  protected values(): Sample[] {
    return this.listed.map((c) => ({ labels: { ...c.labels }, value: c.value }));
  }
}

export class LabeledCounter extends ValueMetric<CounterChild> {
  readonly type = 'counter' as const;
  protected newChild(labels: Labels): CounterChild {
    return new CounterChild(labels, this);
  }
}

export class LabeledGauge extends ValueMetric<GaugeChild> {
  readonly type = 'gauge' as const;
  protected newChild(labels: Labels): GaugeChild {
    return new GaugeChild(labels, this);
  }
}

export class LabeledHistogram extends LabeledMetric<HistogramChild> {
  readonly type = 'histogram' as const;
  readonly buckets: readonly number[];
  constructor(opts: LabeledMetricOptions & { buckets: readonly number[] }) {
    super(opts);
    this.buckets = [...opts.buckets].sort((a, b) => a - b);
  }
  protected newChild(labels: Labels): HistogramChild {
    return new HistogramChild(labels, this, this.buckets);
  }
  /** As prom-client's: each bucket cumulative with its `le` first, then +Inf, _sum and _count. */
  protected values(): Sample[] {
    const out: Sample[] = [];
    const bucket = `${this.name}_bucket`;
    for (const c of this.listed) {
      let acc = 0;
      this.buckets.forEach((le, i) => {
        acc += c.counts[i]!;
        out.push({ labels: { le, ...c.labels }, value: acc, metricName: bucket, exemplar: null });
      });
      out.push({ labels: { le: '+Inf', ...c.labels }, value: c.count, metricName: bucket, exemplar: null });
      out.push({ labels: { ...c.labels }, value: c.sum, metricName: `${this.name}_sum` });
      out.push({ labels: { ...c.labels }, value: c.count, metricName: `${this.name}_count` });
    }
    return out;
  }
}

/** The metric of this class registered under `opts.name` in `registry`, else a new one registered there. */
export function registeredIn<O extends LabeledMetricOptions, M>(registry: Registry, cls: new (opts: O) => M, opts: O): M {
  const existing = registry.getSingleMetric(opts.name) as unknown;
  return existing instanceof cls ? existing : new cls({ ...opts, registers: [registry] });
}
