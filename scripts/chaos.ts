/**
 * npm run chaos -- --seconds N --seed S [--jobs J] [--concurrency C] [--config F] [--dir D]
 *
 * Runs a real supervisor on a real database, does damage while jobs run
 * (SIGKILLs children mid-job, SIGSTOPs a child until its job has been given
 * to another, SIGKILLs the supervisor and starts a new one; some handlers
 * hang, busy-loop or throw), then checks the guarantees and prints one JSON
 * summary. Exit 0 only when every violation count is 0.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config/load.js';
import { Queue } from '../src/queue/queue.js';
import { openStore } from '../src/store/open.js';
import type { WorkerRow } from '../src/store/types.js';
import { isPidAlive } from '../supervisor/pids.js';
import type { ChaosPayload } from './chaos-handler.js';
import { checkRun } from './chaos/checks.js';
import { EffectsLog } from './chaos/effects.js';
import { SeededRandom } from './chaos/random.js';
import { SupervisorRun } from './chaos/supervisor-run.js';
import { percentiles } from './stats.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    seed: { type: 'string', default: '1' },
    jobs: { type: 'string', default: '300' },
    /** The generated config's classes[].concurrency (ignored with --config). */
    concurrency: { type: 'string', default: '1' },
    config: { type: 'string' },
    dir: { type: 'string' },
  },
});
const SECONDS = Number(values.seconds);
const JOBS = Number(values.jobs);
const random = new SeededRandom(Number(values.seed));
/** Draining ends when every job is done; the run is stuck (and fails) if no job finishes for this long. */
const DRAIN_STALL_MS = 90_000;
/** How long a SIGSTOPped child is held waiting for its job to be given to another. */
const ZOMBIE_WAIT_MS = 20_000;
const CHAOS_CLASS = 'chaos';
const ZOMBIE_BAIT_PRIORITY = 5;
const HANDLER = fileURLToPath(new URL('./chaos-handler.js', import.meta.url));

const dir = resolve(values.dir ?? mkdtempSync(join(tmpdir(), 'leasehold-chaos-')));
mkdirSync(dir, { recursive: true });
const configFile = values.config === undefined ? writeChaosConfig(dir) : resolve(values.config);
const config = loadConfig(configFile);
if (!config.classes.some((c) => c.name === CHAOS_CLASS)) throw new Error(`${configFile} has no class named ${CHAOS_CLASS}`);
const effects = new EffectsLog(join(dir, 'effects.db'));
const store = await openStore(config.database);
const queue = new Queue(store, { actor: 'chaos' });
const output = join(dir, 'supervisor.out');

/** Workers registered from here on are this run's. */
const runStartedAt = Date.now();
const damage = { child_kills: 0, zombies: 0, zombie_attempts: 0, supervisor_kills: 0, trouble: { throw: 0, hang: 0, busy: 0 } };
/** For each child SIGKILL: until its job was back in the queue, and until another child claimed it. */
const requeueMs: number[] = [];
const reclaimMs: number[] = [];
const stopped = new Set<number>();
const pendingWork = new Set<Promise<void>>();
const jobIds: number[] = [];
const everyPid = new Set<number>();

/** The generated config: short leases so that damage shows quickly, many retries so that jobs end SUCCEEDED. */
function writeChaosConfig(folder: string): string {
  const file = join(folder, 'chaos.yaml');
  writeFileSync(
    file,
    `database: ${join(folder, 'queue.db')}
log: { level: info, file: ${join(folder, 'supervisor.log')} }
sweeper: { interval_seconds: 0.5, batch_size: 100 }
shutdown_grace_seconds: 5
classes:
  - name: ${CHAOS_CLASS}
    handler: ${HANDLER}
    processes: 4
    concurrency: ${Number(values.concurrency)}
    lease_seconds: 2
    heartbeat_seconds: 1
    max_runtime_seconds: 4
    kill_grace_seconds: 0.5
    max_retries: 30
    backoff: { base_seconds: 0.05, max_seconds: 0.5, jitter: true }
    restart: { max_restarts: 100000, within_seconds: 60 }
    poll_seconds: 0.1
`,
  );
  return file;
}

async function enqueueWave(count: number): Promise<void> {
  const requests = Array.from({ length: count }, () => {
    const roll = random.next();
    const trouble: ChaosPayload['trouble'] = roll < 0.03 ? 'throw' : roll < 0.05 ? 'hang' : roll < 0.06 ? 'busy' : 'none';
    if (trouble !== 'none') damage.trouble[trouble] += 1;
    // Some jobs run long and ahead of the rest: they make good zombies, whose jobs are given to another child at once.
    const bait = trouble === 'none' && random.next() < 0.25;
    const payload: ChaosPayload = { ms: bait ? random.int(600, 1_200) : random.int(20, 500), trouble, effects: effects.path };
    return { class: CHAOS_CLASS, payload, maxRetries: 30, priority: bait ? ZOMBIE_BAIT_PRIORITY : 0 };
  });
  for (const job of await queue.enqueueMany(requests)) jobIds.push(job.id);
}

async function liveWorkers(supervisor: SupervisorRun): Promise<{ supervisorId: string | undefined; children: WorkerRow[] }> {
  const workers = await store.workerList({ includeExited: false, limit: 1_000 });
  // Only this run's: a reused database (a PostgreSQL schema) may still list workers of an earlier run, whose pids may be anyone's now.
  for (const worker of workers) if (worker.started_at >= runStartedAt) everyPid.add(worker.pid);
  const supervisorId = workers.find((w) => w.kind === 'supervisor' && w.pid === supervisor.pid)?.id;
  return { supervisorId, children: workers.filter((w) => w.kind === 'child' && w.supervisor_id === supervisorId && isPidAlive(w.pid)) };
}

async function startSupervisor(): Promise<SupervisorRun> {
  const supervisor = new SupervisorRun(configFile, output);
  everyPid.add(supervisor.pid);
  const deadline = Date.now() + 30_000;
  while ((await liveWorkers(supervisor)).children.filter((c) => c.state !== 'starting').length === 0) {
    if (Date.now() > deadline) throw new Error(`supervisor ${supervisor.pid} has no ready child after 30 s; see ${output}`);
    await sleep(50);
  }
  return supervisor;
}

/** Children of the live supervisor that are running a job right now, and the job. */
async function busyChildren(supervisor: SupervisorRun): Promise<{ child: WorkerRow; jobId: number; attempt: number; priority: number }[]> {
  const { children } = await liveWorkers(supervisor);
  const byId = new Map(children.map((c) => [c.id, c]));
  const running = await store.jobList({ status: 'RUNNING', limit: 100 });
  return running.flatMap((job) => {
    const child = job.owner_id === null ? undefined : byId.get(job.owner_id);
    return child === undefined || stopped.has(child.pid) ? [] : [{ child, jobId: job.id, attempt: job.attempts, priority: job.priority }];
  });
}

/** SIGKILL a child mid-job; time until its job is claimed again. */
async function killChild(supervisor: SupervisorRun): Promise<void> {
  const target = random.pick(await busyChildren(supervisor));
  if (target === undefined) return;
  const killedAt = Date.now();
  try {
    process.kill(target.child.pid, 'SIGKILL');
  } catch {
    return;
  }
  damage.child_kills += 1;
  track(
    (async () => {
      const deadline = killedAt + 30_000;
      while (Date.now() < deadline) {
        const job = await store.jobGet({ id: target.jobId });
        if (job !== undefined && job.attempts > target.attempt && job.claimed_at !== null) {
          const killedAttempt = (await store.attemptList({ jobId: target.jobId })).find((a) => a.attempt === target.attempt);
          if (killedAttempt?.finished_at != null) requeueMs.push(killedAttempt.finished_at - killedAt);
          reclaimMs.push(job.claimed_at - killedAt);
          return;
        }
        if (job !== undefined && (job.status === 'SUCCEEDED' || job.status === 'FAILED')) return;
        await sleep(20);
      }
    })(),
  );
}

/** SIGSTOP a child mid-job until its job has been given to another, then SIGCONT it: a zombie. */
async function makeZombie(supervisor: SupervisorRun): Promise<void> {
  const target = random.pick((await busyChildren(supervisor)).filter((busy) => busy.priority === ZOMBIE_BAIT_PRIORITY));
  if (target === undefined) return;
  const { pid } = target.child;
  try {
    process.kill(pid, 'SIGSTOP');
  } catch {
    return;
  }
  stopped.add(pid);
  damage.zombie_attempts += 1;
  track(
    (async () => {
      const deadline = Date.now() + ZOMBIE_WAIT_MS;
      try {
        while (Date.now() < deadline && isPidAlive(pid)) {
          const job = await store.jobGet({ id: target.jobId });
          if (job !== undefined && job.attempts > target.attempt && job.owner_id !== target.child.id) {
            damage.zombies += 1;
            return;
          }
          await sleep(20);
        }
      } finally {
        try {
          process.kill(pid, 'SIGCONT');
        } catch {
          // already gone (the supervisor killed it)
        }
        stopped.delete(pid);
      }
    })(),
  );
}

function track(work: Promise<void>): void {
  pendingWork.add(work);
  void work.finally(() => pendingWork.delete(work));
}

/** SIGKILL the supervisor, check that its children go, start another. */
async function killSupervisor(supervisor: SupervisorRun): Promise<SupervisorRun> {
  const { children } = await liveWorkers(supervisor);
  supervisor.kill('SIGKILL');
  await supervisor.exited;
  damage.supervisor_kills += 1;
  // Stopped children cannot notice their parent died until they run again.
  for (const pid of stopped) process.kill(pid, 'SIGCONT');
  const deadline = Date.now() + 10_000;
  while (children.some((c) => isPidAlive(c.pid)) && Date.now() < deadline) await sleep(50);
  return startSupervisor();
}

/** This run's jobs not finished yet (a reused database may hold an earlier run's too). */
async function unfinished(): Promise<number> {
  const ours = new Set(jobIds);
  let count = 0;
  for (const status of ['QUEUED', 'CLAIMED', 'RUNNING'] as const) count += (await store.jobList({ status, limit: 1_000_000 })).filter((job) => ours.has(job.id)).length;
  return count;
}

const started = Date.now();
const runMs = SECONDS * 1_000;
await enqueueWave(Math.ceil(JOBS / 4));
let supervisor = await startSupervisor();
let enqueued = jobIds.length;
let lastSupervisorKill = started;
while (Date.now() - started < runMs) {
  await sleep(random.int(300, 900));
  const elapsed = Date.now() - started;
  // the rest of the jobs arrive over the first 70% of the run
  const due = Math.min(JOBS, Math.ceil(JOBS / 4 + ((JOBS * 3) / 4) * Math.min(1, elapsed / (runMs * 0.7))));
  if (due > enqueued) {
    await enqueueWave(due - enqueued);
    enqueued = due;
  }
  // One zombie in the making at a time, started as soon as a child runs a bait job.
  if (stopped.size === 0) await makeZombie(supervisor);
  const roll = random.next();
  const supervisorDue = Date.now() - lastSupervisorKill > Math.max(15_000, runMs / 4);
  if (supervisorDue && roll < 0.1) {
    supervisor = await killSupervisor(supervisor);
    lastSupervisorKill = Date.now();
  } else if (roll < 0.5) {
    await killChild(supervisor);
  }
}

// Drain: no more damage; every job must end.
await Promise.all([...pendingWork]);
let left = await unfinished();
let lastProgress = Date.now();
while (left > 0 && Date.now() - lastProgress < DRAIN_STALL_MS) {
  await sleep(250);
  const now = await unfinished();
  if (now < left) lastProgress = Date.now();
  left = now;
}
await liveWorkers(supervisor);
supervisor.kill('SIGTERM');
await supervisor.exited;
await sleep(1_000);
const orphans = [...everyPid].filter((pid) => isPidAlive(pid));
for (const pid of orphans) process.kill(pid, 'SIGKILL');

const report = await checkRun(store, jobIds, effects.all());
const violations = { ...report.violations, orphans: orphans.length };
const summary = {
  seed: Number(values.seed),
  concurrency: config.classes.find((c) => c.name === CHAOS_CLASS)?.concurrency,
  seconds: SECONDS,
  elapsed_seconds: Math.round((Date.now() - started) / 1_000),
  jobs: jobIds.length,
  dir,
  damage,
  outcome: report.outcome,
  zombie_writes_rejected: report.zombie_writes_rejected,
  requeue_after_kill_ms: requeueMs.length === 0 ? null : percentiles(requeueMs),
  reclaim_after_kill_ms: reclaimMs.length === 0 ? null : percentiles(reclaimMs),
  violations,
  examples: report.examples,
};
console.log(JSON.stringify(summary, null, 2));
effects.close();
await store.close();
process.exit(Object.values(violations).every((count) => count === 0) ? 0 : 1);
