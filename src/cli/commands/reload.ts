/**
 * `leasehold reload`: check queue.yaml here as start-up would, make this
 * host's supervisor re-read it (SIGHUP), and wait for its verdict, so that
 * the exit code says whether the new config is in force.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { checkConfig } from '../../config/deployment.js';
import { resolveHost } from '../../config/host.js';
import { InvalidInputError } from '../../errors.js';
import { localSupervisor, localSupervisorsOf, type ReloadVerdict } from '../../local-supervisors.js';
import { STALE_SUPERVISOR_MS } from '../../queue/registry.js';
import { redactDatabase } from '../../store/database-url.js';
import { defineCommand, output, resolveTarget, withStore, type GlobalArgs } from '../context.js';
import { numberOption } from '../numeric-options.js';

interface ReloadArgs extends GlobalArgs {
  timeout: number;
}

/** How often the supervisor's record is read while waiting for its verdict. */
const POLL_MS = 100;

export const reloadCommand = defineCommand<ReloadArgs>({
  command: 'reload',
  describe:
    "make this host's supervisor re-read queue.yaml (SIGHUP) and wait for its verdict; a bad config is refused here and there, and the old one keeps running",
  options: {
    timeout: numberOption(
      'timeout',
      { integer: true, min: 1, max: 3600 },
      {
        default: 120,
        describe: "seconds to wait for the supervisor's verdict (a rolling replacement drains each child first)",
      },
    ),
  },
  run: async (args) => {
    // --config is what the supervisor re-reads: checking it here, as start-up does, reports a bad file (exit 2) before anyone is signalled.
    if (args.config === undefined)
      throw new InvalidInputError('USAGE', 'reload needs --config queue.yaml (the file the supervisor re-reads)');
    const timeoutMs = args.timeout * 1000;
    const config = await checkConfig(args.config);
    refuseMovedDatabase(config.file, config.database);
    await withStore(await resolveTarget(args, config), args, { create: false }, async ({ store, clock }) => {
      const host = resolveHost({ configured: config.host });
      const now = clock.now();
      // A fresh registry heartbeat says the pid is still that supervisor's, not a reused one: SIGHUP would end most other processes.
      const alive = (await store.workerListLiveOnHost({ host })).filter(
        (worker) => worker.kind === 'supervisor' && now - worker.heartbeat_at <= STALE_SUPERVISOR_MS,
      );
      const live = supervisorsOfFile(alive, config.file, host);
      const seen = new Map(live.map((worker) => [worker.pid, localSupervisor(worker.pid)?.lastReload?.seq ?? 0]));
      const signalled = live.filter((worker) => signal(worker.pid));
      if (signalled.length === 0) {
        throw new InvalidInputError(
          'NO_SUPERVISOR',
          `no supervisor of host "${host}" is running on this database (leasehold workers shows none alive): nothing to reload`,
        );
      }
      const verdicts = await Promise.all(
        signalled.map((worker) => verdictAfter(worker.pid, seen.get(worker.pid) ?? 0, timeoutMs)),
      );
      const report = signalled.map((worker, index) => ({
        id: worker.id,
        pid: worker.pid,
        verdict: verdicts[index] ?? null,
      }));
      const refused = report.find((entry) => entry.verdict !== null && entry.verdict.event !== 'CONFIG_RELOADED');
      if (refused?.verdict?.event === 'CONFIG_RELOAD_REJECTED')
        throw new InvalidInputError('RELOAD_REJECTED', refused.verdict.message);
      if (refused?.verdict !== undefined && refused.verdict !== null) throw new Error(refused.verdict.message);
      output(args.json, { host, signalled: report }, () =>
        report
          .map(({ id, pid, verdict }) =>
            verdict === null
              ? `sent SIGHUP to supervisor ${id} (pid ${pid}): no verdict recorded here, its log says CONFIG_RELOADED or why not`
              : `supervisor ${id} (pid ${pid}): ${verdict.message}`,
          )
          .join('\n'),
      );
    });
  },
});

/**
 * A supervisor started with this file runs on the database it was started
 * with: a config that now names another one cannot be reloaded, and looking
 * for the supervisor in the new database would only find none.
 */
function refuseMovedDatabase(configFile: string, database: string): void {
  const moved = localSupervisorsOf(configFile).find((record) => record.database !== database);
  if (moved === undefined) return;
  throw new InvalidInputError(
    'DATABASE_CHANGED',
    `${configFile}: database changed from ${redactDatabase(moved.database)} to ${redactDatabase(database)}: a reload cannot move a running supervisor (pid ${moved.pid}) to another database; restart it instead`,
  );
}

/**
 * The supervisors that SIGHUP would make re-read `configFile`: a supervisor
 * re-reads the file it was started with, whatever file the command names.
 * One whose record names another file is left alone; when every one does,
 * the reload is refused naming the file each reads. A supervisor without a
 * local record (another temp folder) cannot say, and is signalled as before.
 */
function supervisorsOfFile<W extends { pid: number }>(alive: W[], configFile: string, host: string): W[] {
  const others: string[] = [];
  const mine = alive.filter((worker) => {
    const runs = localSupervisor(worker.pid)?.configFile;
    if (runs === undefined || runs === configFile) return true;
    others.push(`${runs} (pid ${worker.pid})`);
    return false;
  });
  if (mine.length > 0 || others.length === 0) return mine;
  const one = others.length === 1;
  throw new InvalidInputError(
    'OTHER_CONFIG',
    `the supervisor${one ? '' : 's'} of host "${host}" on this database run${one ? 's' : ''} ${others.join(' and ')}, not ${configFile}: a reload makes a supervisor re-read its own file; edit that one and name it with --config`,
  );
}

/**
 * The verdict of the reload after the `seen`-th, from the supervisor's local
 * record; null when it keeps none (it runs under another temp folder, or
 * predates records). No verdict within the time is a runtime failure.
 */
async function verdictAfter(pid: number, seen: number, timeoutMs: number): Promise<ReloadVerdict | null> {
  if (localSupervisor(pid) === undefined) return null;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const record = localSupervisor(pid);
    if (record === undefined) throw new Error(`supervisor pid ${pid} stopped before it gave a verdict on the reload`);
    if (record.lastReload !== null && record.lastReload.seq > seen) return record.lastReload;
    if (Date.now() >= deadline)
      throw new Error(
        `supervisor pid ${pid} gave no verdict on the reload within ${timeoutMs / 1000}s: its log will say (CONFIG_RELOADED, CONFIG_RELOAD_REJECTED or CONFIG_RELOAD_FAILED)`,
      );
    await sleep(POLL_MS);
  }
}

function signal(pid: number): boolean {
  try {
    process.kill(pid, 'SIGHUP');
    return true;
  } catch {
    return false; // ESRCH: gone since its last heartbeat
  }
}
