/**
 * npm run chaos -- --seconds N --seed S [--jobs J] [--short-jobs K] [--concurrency C] [--config F] [--dir D] [--db-faults]
 *
 * Runs a real supervisor on a real database and does damage while jobs run:
 * SIGKILLs children mid-job and in the middle of a burst of short jobs,
 * SIGSTOPs a child until its job has been given to another (a zombie),
 * SIGKILLs the supervisor and starts a new one; some handlers hang,
 * busy-loop or throw. With --db-faults, database faults too: PostgreSQL
 * backends of the queue terminated, or SQLite's write lock held by another
 * process past the busy timeout. Then it checks the guarantees against the
 * queue's data, the handlers' own records, /proc and the supervisors' log,
 * and prints one JSON summary. Exit 0 only when every violation count is 0.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config/load.js';
import { Queue } from '../src/queue/queue.js';
import { dbFaultOf } from '../src/store/faults.js';
import { openStore } from '../src/store/open.js';
import { checkChaosClasses, LONG_CLASS, writeChaosConfig } from './chaos/config.js';
import { Damage } from './chaos/damage.js';
import { DbFaults, observerDatabase } from './chaos/db-faults.js';
import { readEffects } from './chaos/effects-reader.js';
import { killSurvivors, ProcessLedger } from './chaos/process-ledger.js';
import { SeededRandom } from './random.js';
import { summarize } from './chaos/summary.js';
import { signalledChildren } from './chaos/supervisor-log.js';
import { Supervisors } from './chaos/supervisors.js';
import { Workload } from './chaos/workload.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '60' },
    seed: { type: 'string', default: '1' },
    /** Long jobs (20 ms to 1.2 s), the ones damage aims at. */
    jobs: { type: 'string', default: '300' },
    /** Short jobs (under 5 ms) in bursts; default twice --jobs. */
    'short-jobs': { type: 'string' },
    /** The generated config's classes[].concurrency for the long class (ignored with --config). */
    concurrency: { type: 'string', default: '1' },
    config: { type: 'string' },
    dir: { type: 'string' },
    'db-faults': { type: 'boolean', default: false },
  },
});
const SECONDS = Number(values.seconds);
const JOBS = Number(values.jobs);
const SHORT_JOBS = Number(values['short-jobs'] ?? 2 * JOBS);
const SEED = Number(values.seed);
const DB_FAULTS = values['db-faults'];
/** Draining ends when every job is done; the run is stuck (and fails) if no job finishes for this long. */
const DRAIN_STALL_MS = 90_000;
/** Short jobs arrive in bursts this big: enough to keep the short children's slots and prefetch full when a kill lands. */
const SHORT_BURST = 40;
/** Once the last supervisor has stopped, how long everything the run started gets to be gone. */
const ORPHAN_DEADLINE_MS = 10_000;
/** How long the jobs still due after the damage may wait for a database that refuses writes. */
const ENQUEUE_DEADLINE_MS = 30_000;
const HANDLER = fileURLToPath(new URL('./chaos-handler.js', import.meta.url));

const random = new SeededRandom(SEED);
const dir = resolve(values.dir ?? mkdtempSync(join(tmpdir(), 'leasehold-chaos-')));
mkdirSync(dir, { recursive: true });
const configFile =
  values.config === undefined
    ? writeChaosConfig(dir, { handler: HANDLER, concurrency: Number(values.concurrency) })
    : resolve(values.config);
const config = loadConfig(configFile);
checkChaosClasses(config, configFile);
const effectsDir = join(dir, 'effects');
mkdirSync(effectsDir);
const store = await openStore(DB_FAULTS ? observerDatabase(config.database) : config.database);
const queue = new Queue(store, { actor: 'chaos' });
const ledger = new ProcessLedger();
const supervisors = new Supervisors({ configFile, output: join(dir, 'supervisor.out'), store, ledger });
const workload = new Workload(queue, random, effectsDir);
const damage = new Damage(store, random, supervisors, ledger);
let faults: DbFaults | undefined;

/**
 * The program's own writes: false means not now, the jobs stay due for the
 * next round. They never wait on a lock-out the program made itself, and a
 * database fault only defers them: a child SIGSTOPped in the middle of a
 * SQLite write holds the lock until its supervisor kills it.
 */
async function enqueue(work: () => Promise<void>): Promise<boolean> {
  try {
    return faults === undefined ? (await work(), true) : await faults.unlessFaulty(work);
  } catch (error) {
    if (dbFaultOf(error) === undefined) throw error;
    return false;
  }
}

/** `enqueue` until it is written, for at most ENQUEUE_DEADLINE_MS. */
async function enqueueSoon(work: () => Promise<void>): Promise<void> {
  const deadline = Date.now() + ENQUEUE_DEADLINE_MS;
  while (!(await enqueue(work))) {
    if (Date.now() > deadline) throw new Error(`the database refused the last enqueues for ${ENQUEUE_DEADLINE_MS} ms`);
    await sleep(250);
  }
}

/** On the way out early (an error, a signal): end the faults, resume stopped children, SIGKILL the supervisor (its children follow). */
function abandon(): void {
  void faults?.stop().catch(() => undefined);
  damage.resumeStopped();
  supervisors.abandon();
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    abandon();
    process.exit(1);
  });
}

/** This run's jobs not finished yet (a reused database may hold an earlier run's too). */
/** Damage (and faults) for SECONDS while the jobs arrive over the first 70% of it. */
async function doDamage(started: number): Promise<void> {
  const runMs = SECONDS * 1_000;
  let enqueuedLong = workload.longJobs;
  let enqueuedShort = 0;
  let lastSupervisorKill = started;
  while (Date.now() - started < runMs) {
    await sleep(random.int(300, 900));
    await supervisors.replaceIfExited();
    supervisors.noteFamily();
    const share = Math.min(1, (Date.now() - started) / (runMs * 0.7));
    const dueLong = Math.min(JOBS, Math.ceil(JOBS / 4 + ((JOBS * 3) / 4) * share));
    if (dueLong > enqueuedLong && (await enqueue(() => workload.enqueueLong(dueLong - enqueuedLong))))
      enqueuedLong = dueLong;
    const shortBurst = Math.floor(SHORT_JOBS * share) - enqueuedShort;
    if (
      (shortBurst >= SHORT_BURST || (share === 1 && shortBurst > 0)) &&
      (await enqueue(() => workload.enqueueShort(shortBurst)))
    ) {
      enqueuedShort += shortBurst;
      // At least one short-class kill a run: with supervisor deaths slowing the loop, a run may see only two or
      // three bursts, and leaving each to the roll missed all of them in a loaded CI run.
      if (damage.counts.short_child_kills === 0 || random.next() < 0.75) {
        await sleep(random.int(5, 60));
        await damage.killShortChild();
      }
    }
    // One zombie in the making at a time, started as soon as a child runs a bait job.
    await damage.makeZombie();
    const roll = random.next();
    const elapsed = Date.now() - started;
    const supervisorDue = Date.now() - lastSupervisorKill > Math.max(10_000, runMs / 4);
    // At least one supervisor death a run, however short: past 60% of it, the first is no longer left to the roll.
    const supervisorOwed = supervisors.kills === 0 && elapsed > runMs * 0.6;
    if (supervisorDue && (roll < 0.1 || supervisorOwed)) {
      await supervisors.killAndReplace(damage.stopped);
      lastSupervisorKill = Date.now();
    } else if (roll < 0.65) {
      await damage.killChild();
    }
  }
}

/** No more damage: wait until every job has ended, or until none has for DRAIN_STALL_MS. */
async function drain(): Promise<void> {
  let left = await workload.unfinished(store);
  let lastProgress = Date.now();
  while (left > 0 && Date.now() - lastProgress < DRAIN_STALL_MS) {
    await sleep(250);
    await supervisors.replaceIfExited();
    const now = await workload.unfinished(store);
    if (now < left) lastProgress = Date.now();
    left = now;
  }
}

async function main(): Promise<boolean> {
  const started = Date.now();
  await enqueueSoon(() => workload.enqueueLong(Math.ceil(JOBS / 4)));
  await supervisors.start();
  if (DB_FAULTS) faults = await DbFaults.start(config.database, new SeededRandom(SEED + 1));
  await doDamage(started);
  // The faults end with the damage: the drain shows that the work resumes once they clear.
  await faults?.stop();
  // Jobs that were due while a lock-out held arrive now.
  await enqueueSoon(() => workload.enqueueLong(JOBS - workload.longJobs));
  await enqueueSoon(() => workload.enqueueShort(SHORT_JOBS - workload.shortJobIds.size));
  await damage.settle();
  await drain();
  const lastExit = await supervisors.stop();

  for (const death of signalledChildren(config.log.file, started)) ledger.noteDeath(death);
  const effects = readEffects(effectsDir, ledger);
  for (const effect of effects.effects) {
    if (effect.proc_start === null || (effect.kind !== 'start' && effect.kind !== 'spawn')) continue;
    ledger.note(
      effect.pid,
      effect.proc_start,
      effect.kind === 'start' ? `child that ran job ${effect.job_id}` : `subprocess of job ${effect.job_id}`,
    );
  }
  // Whatever is left is reported, then ended: the run leaves nothing behind.
  const survivors = await ledger.waitUntilGone(ORPHAN_DEADLINE_MS);
  killSurvivors(survivors);
  const summary = await summarize({
    store,
    workload,
    damage,
    supervisors,
    lastExit,
    effects,
    survivors,
    watchedProcesses: ledger.size,
    logFile: config.log.file,
    faults: faults?.report() ?? null,
    run: {
      seed: SEED,
      db_faults: DB_FAULTS,
      concurrency: config.classes.find((c) => c.name === LONG_CLASS)?.concurrency,
      seconds: SECONDS,
      started,
      dir,
    },
  });
  console.log(JSON.stringify(summary, null, 2));
  return Object.values(summary.violations).every((count) => count === 0);
}

let passed = false;
try {
  passed = await main();
} catch (error) {
  console.error(`chaos: the run broke off: ${(error as Error).stack ?? String(error)}`);
  abandon();
} finally {
  await store.close();
}
process.exit(passed ? 0 : 1);
