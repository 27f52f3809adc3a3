/**
 * Histogram buckets, shared by the child that counts its successes into
 * them (SuccessTally) and the supervisor whose histograms take those counts
 * in bulk: both sides must put a value in the same bucket.
 */

/** leasehold_job_duration_seconds's bucket bounds, in seconds. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900] as const;

const MIB = 1024 * 1024;
/** leasehold_job_peak_rss_bytes's bucket bounds: a Node child starts at about 50-80 MiB resident; max_memory_mb defaults to 512. */
export const PEAK_RSS_BUCKETS: readonly number[] = [64, 96, 128, 192, 256, 384, 512, 768, 1024, 2048, 4096].map(
  (mib) => mib * MIB,
);

/** Observations in a histogram's buckets: how many fell in each (not cumulative; one more than the bounds, the last being +Inf), and their sum. */
export interface BucketCounts {
  counts: number[];
  sum: number;
}

export function emptyBuckets(bounds: readonly number[]): BucketCounts {
  return { counts: new Array<number>(bounds.length + 1).fill(0), sum: 0 };
}

/** Count `value` in: the first bucket whose bound it does not exceed (Prometheus's `le`, as prom-client places it), else +Inf. */
export function countInto(buckets: BucketCounts, bounds: readonly number[], value: number): void {
  let index = bounds.findIndex((bound) => value <= bound);
  if (index === -1) index = bounds.length;
  buckets.counts[index] = (buckets.counts[index] ?? 0) + 1;
  buckets.sum += value;
}
