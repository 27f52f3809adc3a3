/** Percentiles of a sample, in the sample's unit, to three decimals. */
export function percentiles(samples: number[]): { p50: number; p95: number; p99: number; max: number; n: number } {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  const fixed = (n: number) => Number(n.toFixed(3));
  return {
    p50: fixed(at(0.5)),
    p95: fixed(at(0.95)),
    p99: fixed(at(0.99)),
    max: fixed(sorted[sorted.length - 1] ?? Number.NaN),
    n: sorted.length,
  };
}
