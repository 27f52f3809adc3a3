/**
 * The child's success tally, on its own with fake timers: what goes in it,
 * into which buckets, and when it is sent (at most once a second, at once
 * when idle, when a retried job succeeds, and on flush). That the
 * supervisor renders a tally as prom-client would render the same jobs
 * observed one by one is bucket-histogram.test.ts.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SUCCESS_REPORT_MS, SuccessReport } from '../../child/success-report.js';
import { DURATION_BUCKETS, PEAK_RSS_BUCKETS } from '../../src/ipc/buckets.js';
import type { FinishedJob, SuccessTally } from '../../src/ipc/protocol.js';

const success = (jobId: number, fields: Partial<FinishedJob> = {}): FinishedJob => ({
  jobId,
  attempt: 1,
  outcome: 'SUCCEEDED',
  durationMs: 3,
  ...fields,
});

function setup(lines = false) {
  const sent: SuccessTally[] = [];
  const report = new SuccessReport((tally) => sent.push(tally), lines);
  return { sent, report };
}

/** Bucket counts (bounds.length + 1 of them, +Inf last) with one value in each bucket `indexes` names. */
function counts(bounds: readonly number[], indexes: number[]): number[] {
  return Array.from({ length: bounds.length + 1 }, (_, i) => indexes.filter((index) => index === i).length);
}

describe('success report', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('counts durations and costs into the supervisor’s buckets: a value on a bound goes in that bound’s bucket, past the last in +Inf', async () => {
    const { sent, report } = setup();
    report.add(success(1, { durationMs: 5, cpuMs: 2, peakRssBytes: PEAK_RSS_BUCKETS[0]! }));
    report.add(success(2, { durationMs: 900_001, cpuMs: 3.5, peakRssBytes: PEAK_RSS_BUCKETS.at(-1)! + 1 }));
    report.add(success(3, { durationMs: 7 }));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toHaveLength(1);
    const [tally] = sent;
    expect(tally!.count).toBe(3);
    // 0.005 s on the first bound, 900.001 s past the last, 0.007 s in the second.
    expect(tally!.durationSeconds.counts).toEqual(counts(DURATION_BUCKETS, [0, DURATION_BUCKETS.length, 1]));
    expect(tally!.durationSeconds.sum).toBeCloseTo(0.005 + 900.001 + 0.007, 9);
    // The job without a measured cost is in the duration buckets only.
    expect(tally!.cpuMs).toBe(5.5);
    expect(tally!.peakRssBytes.counts).toEqual(counts(PEAK_RSS_BUCKETS, [0, PEAK_RSS_BUCKETS.length]));
    expect(tally!.retriedJobIds).toEqual([]);
    expect(tally!.jobs).toBeUndefined();
  });

  it('sends at most once every SUCCESS_REPORT_MS: what comes meanwhile waits and goes as one tally', async () => {
    const { sent, report } = setup();
    report.add(success(1));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((tally) => tally.count)).toEqual([1]);
    for (let id = 2; id <= 50; id++) {
      report.add(success(id));
      await vi.advanceTimersByTimeAsync(10);
    }
    // 490 ms after the first send: nothing more yet.
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(SUCCESS_REPORT_MS - 491);
    expect(sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(sent.map((tally) => tally.count)).toEqual([1, 49]);
    await vi.advanceTimersByTimeAsync(5 * SUCCESS_REPORT_MS);
    expect(sent).toHaveLength(2);
  });

  it('sends a retried job’s success at the next turn, within the interval too: its id clears a crash count', async () => {
    const { sent, report } = setup();
    report.add(success(1));
    await vi.advanceTimersByTimeAsync(0);
    report.add(success(2));
    report.add(success(3, { attempt: 2 }));
    await vi.advanceTimersByTimeAsync(0);
    expect(sent.map((tally) => tally.count)).toEqual([1, 2]);
    expect(sent[1]!.retriedJobIds).toEqual([3]);
  });

  it('flush sends what is counted at once, and nothing when nothing is', () => {
    const { sent, report } = setup();
    report.flush();
    expect(sent).toHaveLength(0);
    report.add(success(1));
    report.add(success(2));
    report.flush();
    expect(sent.map((tally) => tally.count)).toEqual([2]);
    report.flush();
    expect(sent).toHaveLength(1);
  });

  it('carries each job in full only while lines are on', async () => {
    const { sent, report } = setup(true);
    report.add(success(1));
    await vi.advanceTimersByTimeAsync(SUCCESS_REPORT_MS);
    report.setLines(false);
    report.add(success(2));
    await vi.advanceTimersByTimeAsync(SUCCESS_REPORT_MS);
    expect(sent.map((tally) => tally.jobs)).toEqual([[success(1)], undefined]);
  });
});
