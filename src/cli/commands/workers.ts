/** `leasehold workers`: supervisors and children from the registry. */
import { STALE_SUPERVISOR_MS } from '../../queue/registry.js';
import { describeWorkers, type WorkerView } from '../../reports/workers.js';
import { defineCommand, output, withExistingStore, type GlobalArgs } from '../context.js';
import { numberOption } from '../numeric-options.js';
import { pausedClasses } from '../../queue/class-controls.js';
import type { ClassPause, DisabledClass } from '../../store/types.js';
import { formatAgo, formatBytes, formatDuration, formatPercent, formatWhen, table } from '../format.js';

interface WorkersArgs extends GlobalArgs {
  all: boolean;
  limit: number;
}

export const workersCommand = defineCommand<WorkersArgs>({
  command: 'workers',
  describe: 'supervisors and children: pid, class, state, current job, CPU, memory, restarts, uptime, last heartbeat',
  options: {
    all: { type: 'boolean', default: false, describe: 'include workers that exited' },
    limit: numberOption(
      'limit',
      { integer: true, min: 1, max: 10_000 },
      { default: 100, describe: 'at most this many, newest first' },
    ),
  },
  run: async (args) => {
    await withExistingStore(args, async ({ store, clock }) => {
      const now = clock.now();
      const workers = describeWorkers(await store.workerList({ includeExited: args.all, limit: args.limit }), now);
      const paused = await pausedClasses(store);
      const disabled = await store.classDisabledList({ liveSince: now - STALE_SUPERVISOR_MS });
      output(args.json, { now, stale_after_ms: STALE_SUPERVISOR_MS, workers, paused, disabled }, () =>
        workersText(workers, paused, disabled, now),
      );
    });
  },
});

function workersText(workers: WorkerView[], paused: ClassPause[], disabled: DisabledClass[], now: number): string {
  const stale = workers.filter((w) => w.stale).length;
  const pausedClasses = new Set(paused.map((row) => row.class));
  return [
    table(
      ['kind', 'id', 'pid', 'class', 'state', 'job', 'cpu', 'memory', 'restarts', 'uptime', 'heartbeat'],
      workers.map((w) => [
        w.kind,
        w.id,
        w.pid,
        w.class,
        stateText(w, pausedClasses),
        w.job_id,
        formatPercent(w.cpu_percent),
        formatBytes(w.memory_bytes),
        w.restarts,
        formatDuration(w.uptime_ms),
        formatAgo(w.heartbeat_at, now),
      ]),
    ),
    ...(paused.length + disabled.length > 0 ? [''] : []),
    ...paused.map(
      (row) =>
        `class ${row.class} paused since ${formatWhen(row.paused_at, now)} by ${row.paused_by ?? '-'}: its workers claim nothing until resumed`,
    ),
    ...disabled.map(
      (row) =>
        `class ${row.class} disabled since ${formatWhen(row.disabled_at, now)} on ${row.supervisor_id}: ${row.reason}`,
    ),
    ...(stale > 0
      ? [
          '',
          `${stale} worker(s) STALE: their supervisor has not refreshed the registry for over ${formatDuration(STALE_SUPERVISOR_MS)} (gone or stuck)`,
        ]
      : []),
  ].join('\n');
}

function stateText(w: WorkerView, pausedClasses: ReadonlySet<string>): string {
  if (w.stale) return `STALE (${w.state})`;
  if (w.exited_at !== null) return `${w.state} ${exitText(w)}`;
  return w.class !== null && pausedClasses.has(w.class) ? `${w.state} (class paused)` : w.state;
}

function exitText(w: WorkerView): string {
  if (w.exit_signal !== null) return `(${w.exit_signal})`;
  if (w.exit_code !== null) return `(code ${w.exit_code})`;
  return '';
}
