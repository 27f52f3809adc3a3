/** Supervisors and their children: pid, class, state, current job, CPU, memory, restarts, uptime; stale supervisors flagged; how the exited ones ended. */
import { html } from 'hono/html';
import { STALE_SUPERVISOR_MS } from '../../queue/registry.js';
import { formatBytes, formatDuration, formatPercent } from '../../reports/format.js';
import { workerEnding, type WorkerEnding, type WorkerView } from '../../reports/workers.js';
import { ago, jobLink, layout, live, table, type Frame, type Heading, type Html } from './layout.js';

const HEADERS: Heading[] = [
  'kind',
  'id',
  { numeric: 'pid' },
  'class',
  'state',
  'job',
  { numeric: 'cpu' },
  { numeric: 'memory' },
  { numeric: 'restarts' },
  { numeric: 'uptime' },
  'heartbeat',
];

export function workersPage(frame: Frame, workers: readonly WorkerView[], now: number): Html {
  const running = workers.filter((w) => w.exited_at === null);
  const exited = workers.filter((w) => w.exited_at !== null);
  const stale = running.filter((w) => w.stale).length;
  // Each supervisor, then its children; children whose supervisor is not listed come last.
  const supervisors = running.filter((w) => w.kind === 'supervisor');
  const ordered = [
    ...supervisors.flatMap((s) => [s, ...running.filter((w) => w.kind === 'child' && w.supervisor_id === s.id)]),
    ...running.filter((w) => w.kind === 'child' && !supervisors.some((s) => s.id === w.supervisor_id)),
  ];
  const warning =
    stale === 0
      ? ''
      : html`<article class="alert trouble">${stale} worker(s) STALE: their supervisor has not refreshed the registry for over ${formatDuration(STALE_SUPERVISOR_MS)} (gone or stuck).</article>`;
  return layout(
    frame,
    live(
      '/workers',
      now,
      html`${warning}<h2>Running <small class="muted">${supervisors.length} supervisor(s), ${running.length - supervisors.length} child(ren)</small></h2>
${table(
  HEADERS,
  ordered.map((w) => row(w, now)),
  'No supervisor is running.',
)}
<details id="exited"><summary>Exited recently (${exited.length})</summary>${table(
        HEADERS,
        exited.map((w) => row(w, now)),
        'None.',
      )}</details>`,
    ),
  );
}

function row(w: WorkerView, now: number): Html {
  return html`<tr class="${w.kind}${w.stale ? ' stale' : ''}" data-worker="${w.id}"><td>${w.kind}</td><td><small>${w.id}</small></td><td class="num">${w.pid}</td><td>${w.class ?? ''}</td><td>${state(w)}</td><td>${w.job_id === null ? '' : jobLink(w.job_id)}</td><td class="num">${formatPercent(w.cpu_percent)}</td><td class="num">${formatBytes(w.memory_bytes)}</td><td class="num">${w.restarts}</td><td class="num">${formatDuration(w.uptime_ms)}</td><td>${ago(w.heartbeat_at, now)}</td></tr>`;
}

/** What each ending means, on hover. */
const ENDINGS: Record<WorkerEnding, string> = {
  stopped:
    'exited with code 0: drained or stopped (a child its supervisor killed that wound down within the kill grace also exits 0)',
  killed: 'ended by a signal from outside: its supervisor after the kill grace, an operator, or the kernel OOM killer',
  crashed: 'died of its own fault: a fatal signal (a native crash, an abort) or a non-zero exit code',
  'failed to start': 'could not load its handler or open the store',
  gone: 'found dead by a later supervisor: how it ended was not seen',
};

function state(w: WorkerView): Html {
  if (w.stale) return html`<span class="badge stale">STALE</span> <small>${w.state}</small>`;
  const ending = workerEnding(w);
  if (ending === null) return html`<span class="badge state-${w.state}">${w.state}</span>`;
  const how = w.exit_signal ?? (w.exit_code === null ? 'exit not seen' : `exit code ${w.exit_code}`);
  return html`<span class="badge ended-${ending.replace(/ /g, '-')}" title="${ENDINGS[ending]}">${ending}</span> <small>${how}</small>`;
}
