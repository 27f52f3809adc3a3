/**
 * BucketHistogram against prom-client's own Histogram: the same jobs,
 * observed one by one by prom-client and counted into a tally (as a child
 * does) then added in bulk, render the same /metrics lines.
 */
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { countInto, DURATION_BUCKETS, emptyBuckets } from '../../src/ipc/buckets.js';
import { BucketHistogram } from '../../supervisor/bucket-histogram.js';

const NAME = 'test_duration_seconds';
const HELP = 'durations';

/** Values on, below and above the bounds, past the last bound too. */
const VALUES = [0, 0.001, 0.005, 0.0051, 0.01, 0.3, 1, 2.5, 2.6, 899.999, 900, 900.001, 5_000];

describe('bucket histogram', () => {
  it('renders a bulk add and single observations exactly as prom-client renders the same observations', async () => {
    const reference = new Registry();
    const histogram = new Histogram({
      name: NAME,
      help: HELP,
      labelNames: ['class', 'outcome'] as const,
      buckets: [...DURATION_BUCKETS],
      registers: [reference],
    });
    const ours = new Registry();
    const bulk = new BucketHistogram(NAME, HELP, ['class', 'outcome'] as const, DURATION_BUCKETS, [ours]);

    const tally = emptyBuckets(DURATION_BUCKETS);
    for (const value of VALUES) {
      histogram.observe({ class: 'a', outcome: 'SUCCEEDED' }, value);
      countInto(tally, DURATION_BUCKETS, value);
    }
    bulk.add({ class: 'a', outcome: 'SUCCEEDED' }, tally);
    for (const value of [0.2, 30]) {
      histogram.observe({ class: 'a', outcome: 'FAILED' }, value);
      bulk.observe({ class: 'a', outcome: 'FAILED' }, value);
    }
    // prom-client puts `le` first, as we do. Sums of the same values in another order may differ in the last bit; the sums are compared as numbers below.
    const lines = async (registry: Registry) =>
      (await registry.metrics()).split('\n').filter((line) => !line.includes('_sum'));
    expect(await lines(ours)).toEqual(await lines(reference));
    const sums = async (registry: Registry) =>
      (await registry.getMetricsAsJSON())[0]!.values
        .filter((v) => (v as { metricName?: string }).metricName === `${NAME}_sum`)
        .map((v) => v.value);
    const [ourSums, referenceSums] = [await sums(ours), await sums(reference)];
    expect(ourSums).toHaveLength(2);
    ourSums.forEach((sum, i) => expect(sum).toBeCloseTo(referenceSums[i]!, 9));
  });

  it('adds a second tally to the first, and refuses counts for other bounds', () => {
    const bulk = new BucketHistogram(NAME, HELP, ['class'] as const, [1, 2], []);
    bulk.add({ class: 'a' }, { counts: [1, 0, 2], sum: 7 });
    bulk.add({ class: 'a' }, { counts: [0, 1, 0], sum: 1.5 });
    return expect(bulk.get())
      .resolves.toMatchObject({
        values: [
          { metricName: `${NAME}_bucket`, labels: { class: 'a', le: 1 }, value: 1 },
          { metricName: `${NAME}_bucket`, labels: { class: 'a', le: 2 }, value: 2 },
          { metricName: `${NAME}_bucket`, labels: { class: 'a', le: '+Inf' }, value: 4 },
          { metricName: `${NAME}_sum`, labels: { class: 'a' }, value: 8.5 },
          { metricName: `${NAME}_count`, labels: { class: 'a' }, value: 4 },
        ],
      })
      .then(() =>
        expect(() => bulk.add({ class: 'a' }, { counts: [1], sum: 0 })).toThrow(/1 bucket counts for 2 bounds/),
      );
  });
});
