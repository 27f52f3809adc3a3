import type { MaintenanceStore, ProducerStore } from '../../src/store/types.js';
import { percentiles } from '../stats.js';
import { checkRun } from './checks.js';
import type { Damage } from './damage.js';
import type { EffectsReading } from './effects-reader.js';
import type { Survivor } from './process-ledger.js';
import type { SupervisorExit } from './supervisor-run.js';
import type { Supervisors } from './supervisors.js';
import { judgeChildren } from './supervisor-log.js';
import type { Workload } from './workload.js';
import { gatherZombieEvidence } from './zombie-evidence.js';

const EXAMPLES = 20;

export interface RunFacts {
  store: ProducerStore & MaintenanceStore;
  workload: Workload;
  damage: Damage;
  supervisors: Supervisors;
  lastExit: SupervisorExit;
  effects: EffectsReading;
  /** Processes of the run still running after the deadline (already ended by the caller). */
  survivors: Survivor[];
  watchedProcesses: number;
  logFile: string | null;
  faults: Record<string, number> | null;
  run: {
    seed: number;
    db_faults: boolean;
    concurrency: number | undefined;
    seconds: number;
    started: number;
    dir: string;
  };
}

/**
 * Every check of the run, from four sources: the queue's data (checkRun),
 * the handlers' own records (zombie writes, and whether they are whole),
 * /proc (survivors) and the supervisors' log (crashes, kills of healthy
 * children); and the summary the chaos program prints.
 */
export async function summarize(facts: RunFacts) {
  const { store, workload, damage, supervisors, survivors } = facts;
  const { effects } = facts.effects;
  const report = await checkRun(store, workload.jobIds, effects);
  const zombies = await gatherZombieEvidence(store, damage.zombies, effects);
  const troublePids = new Set(
    effects
      .filter((e) => e.kind === 'start' && e.attempt === 1 && workload.killerJobIds.has(e.job_id))
      .map((e) => e.pid),
  );
  const children = judgeChildren(facts.logFile, facts.run.started, { stoppedPids: damage.everStopped, troublePids });
  const exits = supervisors.unexpectedExits.map(
    (exit) =>
      `supervisor ${exit.pid} exited on its own (code ${String(exit.exitCode)}, signal ${String(exit.signal)}): ${exit.lastOutput}`,
  );
  const orphans = survivors.map(
    (s) => `pid ${s.pid} (${s.origin}: ${s.command}) still running after the last supervisor stopped`,
  );
  const violations = {
    ...report.violations,
    zombie_writes: report.violations.zombie_writes + zombies.violations.length,
    orphans: survivors.length,
    supervisor_exits: supervisors.unexpectedExits.length,
    child_crashes: children.crashes.length,
    healthy_children_killed: children.healthy_kills.length,
    torn_records: facts.effects.torn.length,
  };
  const examples = [
    ...report.examples,
    ...zombies.violations,
    ...exits,
    ...orphans,
    ...children.crashes,
    ...children.healthy_kills,
    ...facts.effects.torn,
  ];
  return {
    seed: facts.run.seed,
    db_faults: facts.run.db_faults,
    concurrency: facts.run.concurrency,
    seconds: facts.run.seconds,
    elapsed_seconds: Math.round((Date.now() - facts.run.started) / 1_000),
    jobs: workload.jobIds.length,
    short_jobs: workload.shortJobIds.size,
    dir: facts.run.dir,
    damage: {
      ...damage.counts,
      zombie_misses: damage.zombieMisses,
      supervisor_kills: supervisors.kills,
      trouble: workload.trouble,
      subprocess_jobs: workload.subprocesses.jobs,
    },
    faults:
      facts.faults === null
        ? null
        : {
            ...facts.faults,
            db_unavailable_logged: children.db_unavailable,
            db_recovered_logged: children.db_recovered,
          },
    outcome: report.outcome,
    attempts_max: report.attempts_max,
    short_jobs_interrupted: [...report.interrupted].filter((id) => workload.shortJobIds.has(id)).length,
    zombie_evidence: zombies.evidence,
    effects_files: facts.effects.files,
    records_cut_by_a_death: facts.effects.cutByDeath,
    processes_watched: facts.watchedProcesses,
    last_supervisor_exit: facts.lastExit,
    requeue_after_kill_ms: damage.requeueMs.length === 0 ? null : percentiles(damage.requeueMs),
    reclaim_after_kill_ms: damage.reclaimMs.length === 0 ? null : percentiles(damage.reclaimMs),
    violations,
    examples: examples.slice(0, EXAMPLES),
  };
}
