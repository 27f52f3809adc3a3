import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';

const CHAOS = fileURLToPath(new URL('../../dist/scripts/chaos.js', import.meta.url));

/** The parts of the chaos program's summary the suites hold it to. */
export interface ChaosSummary {
  jobs: number;
  short_jobs: number;
  damage: { child_kills: number; short_child_kills: number; zombies: number; supervisor_kills: number };
  faults: Record<string, number> | null;
  outcome: { succeeded: number; failed: number; other: number };
  short_jobs_interrupted: number;
  zombie_evidence: { refused_by_store: number; with_rejected_event: number; accepted: number };
  violations: Record<string, number>;
  examples: string[];
}

/** The least damage a run must have done for its zero violations to mean something. */
export interface ChaosMinimums {
  jobs: number;
  childKills: number;
  /** Resumed zombies whose handler saw its write refused by the store, and zombies with a ZOMBIE_WRITE_REJECTED event: each at least this. */
  zombieRefusals: number;
  supervisorKills: number;
  /** Short-class children killed, and short jobs with an attempt that did not succeed (the batch path under damage). */
  shortHits: number;
  /** Counts of the --db-faults report that must reach a least value (backend_kills, lockouts, ...). */
  faults?: Record<string, number>;
}

/**
 * A 30 s run (what CI runs; `npm run chaos -- --seconds 60` and more by hand): every kind of damage,
 * several times. The program owes one supervisor death a run however short (scripts/chaos.ts).
 */
export const HALF_MINUTE_RUN: ChaosMinimums = {
  jobs: 100,
  childKills: 8,
  zombieRefusals: 2,
  supervisorKills: 1,
  shortHits: 1,
};

/** For runs whose point is another kind of damage (--db-faults): the usual kinds are mixed in, not required. */
export const NO_MINIMUM_DAMAGE: Omit<ChaosMinimums, 'jobs'> = {
  childKills: 0,
  zombieRefusals: 0,
  supervisorKills: 0,
  shortHits: 0,
};

const NO_VIOLATIONS = {
  lost: 0,
  not_succeeded: 0,
  double_commit: 0,
  zombie_writes: 0,
  database: 0,
  orphans: 0,
  supervisor_exits: 0,
  child_crashes: 0,
  healthy_children_killed: 0,
  torn_records: 0,
};

/**
 * Run the chaos program (`args` say how) and hold it to the bar:
 * zero violations, every job SUCCEEDED, and at least `minimums` of each
 * kind of damage. The program is SIGTERMed (it then ends its supervisor)
 * if it outlives `timeoutMs`.
 */
export async function expectChaosHolds(
  args: string[],
  minimums: ChaosMinimums,
  timeoutMs: number,
): Promise<ChaosSummary> {
  const run = await execa(process.execPath, [CHAOS, ...args], {
    reject: false,
    timeout: timeoutMs,
    killSignal: 'SIGTERM',
    forceKillAfterDelay: 15_000,
  });
  console.log(run.stdout);
  if (run.stderr) console.error(run.stderr);
  let summary: ChaosSummary;
  try {
    summary = JSON.parse(run.stdout) as ChaosSummary;
  } catch {
    throw new Error(
      `the chaos program printed no summary (exit ${String(run.exitCode)}, signal ${String(run.signal)}); stderr: ${run.stderr}`,
    );
  }
  expect(summary.violations, summary.examples.join('\n')).toEqual(NO_VIOLATIONS);
  expect(summary.outcome).toEqual({ succeeded: summary.jobs, failed: 0, other: 0 });
  expect(summary.jobs).toBeGreaterThanOrEqual(minimums.jobs);
  expect(summary.damage.child_kills).toBeGreaterThanOrEqual(minimums.childKills);
  expect(summary.zombie_evidence.refused_by_store).toBeGreaterThanOrEqual(minimums.zombieRefusals);
  expect(summary.zombie_evidence.with_rejected_event).toBeGreaterThanOrEqual(minimums.zombieRefusals);
  expect(summary.damage.supervisor_kills).toBeGreaterThanOrEqual(minimums.supervisorKills);
  expect(summary.damage.short_child_kills).toBeGreaterThanOrEqual(minimums.shortHits);
  expect(summary.short_jobs_interrupted).toBeGreaterThanOrEqual(minimums.shortHits);
  for (const [count, least] of Object.entries(minimums.faults ?? {}))
    expect(summary.faults?.[count], `faults.${count}`).toBeGreaterThanOrEqual(least);
  expect(run.exitCode).toBe(0);
  return summary;
}
