/**
 * A Prometheus histogram that takes observations already counted into its
 * buckets (a child's SuccessTally) as well as one at a time. prom-client's
 * Histogram can only observe values one by one, and its exposition goes
 * through a method of its own (getForPromString) beside the public get(), so
 * it cannot be added to from outside; this is a metric of our own instead,
 * registered like any other: a registry asks a metric only for its name,
 * `get()` (the MetricObjectWithValues that prom-client's types describe) and
 * `reset()`.
 */
import type { Metric, Registry } from 'prom-client';
import { countInto, emptyBuckets, type BucketCounts } from '../src/ipc/buckets.js';

interface Series<L extends string> {
  labels: Record<L, string>;
  buckets: BucketCounts;
}

interface Sample {
  metricName: string;
  labels: Record<string, string | number>;
  value: number;
}

export class BucketHistogram<L extends string> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series = new Map<string, Series<L>>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
    private readonly bounds: readonly number[],
    registers: readonly Registry[],
  ) {
    // prom-client types registerMetric for its own four metric classes only; at run time it takes any metric of this shape.
    for (const registry of registers) registry.registerMetric(this as unknown as Metric);
  }

  observe(labels: Record<L, string>, value: number): void {
    countInto(this.seriesOf(labels).buckets, this.bounds, value);
  }

  /** Add observations counted into the same bounds (counts.length is one more than the bounds). */
  add(labels: Record<L, string>, counted: BucketCounts): void {
    if (counted.counts.length !== this.bounds.length + 1)
      throw new Error(`${this.name}: ${counted.counts.length} bucket counts for ${this.bounds.length} bounds and +Inf`);
    const { buckets } = this.seriesOf(labels);
    counted.counts.forEach((count, index) => (buckets.counts[index] = (buckets.counts[index] ?? 0) + count));
    buckets.sum += counted.sum;
  }

  reset(): void {
    this.series.clear();
  }

  /** Prometheus's histogram samples: per series, its cumulative buckets (`le`, +Inf last), `_sum` and `_count`. */
  async get(): Promise<{ name: string; help: string; type: 'histogram'; aggregator: 'sum'; values: Sample[] }> {
    const values: Sample[] = [];
    for (const { labels, buckets } of this.series.values()) {
      let cumulative = 0;
      buckets.counts.forEach((count, index) => {
        cumulative += count;
        values.push({
          metricName: `${this.name}_bucket`,
          labels: { le: this.bounds[index] ?? '+Inf', ...labels },
          value: cumulative,
        });
      });
      values.push(
        { metricName: `${this.name}_sum`, labels, value: buckets.sum },
        { metricName: `${this.name}_count`, labels, value: cumulative },
      );
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  private seriesOf(labels: Record<L, string>): Series<L> {
    const key = JSON.stringify(this.labelNames.map((name) => labels[name]));
    let series = this.series.get(key);
    if (series === undefined) {
      series = { labels: { ...labels }, buckets: emptyBuckets(this.bounds) };
      this.series.set(key, series);
    }
    return series;
  }
}
