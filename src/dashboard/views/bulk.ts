/**
 * The bulk actions' confirmation and result pages. The confirmation says how
 * many jobs the filter matches, and its form carries that count and the
 * newest id it counted: the action touches those jobs and no later ones.
 */
import { html } from 'hono/html';
import type { FailedFilter } from '../../store/types.js';
import type { BulkScope } from '../data.js';
import { filterFields, jobsUrl } from '../params.js';
import { actionForm, layout, type Frame, type Html } from './layout.js';

/** A bulk action over a filter: retry FAILED jobs, or cancel QUEUED ones. */
export interface Bulk {
  kind: 'retry' | 'cancel';
  filter: FailedFilter;
}

const WORDS = {
  retry: {
    title: 'Retry failed jobs',
    url: '/retry-failed',
    status: 'FAILED',
    verb: 'Retry',
    what: 'Each is queued to run once more, now, and the retry is recorded in its timeline.',
    done: 'queued to run again',
  },
  cancel: {
    title: 'Cancel queued jobs',
    url: '/cancel-queued',
    status: 'QUEUED',
    verb: 'Cancel',
    what: 'Each ends CANCELLED without running, recorded in its timeline.',
    done: 'cancelled',
  },
} as const;

/** Which jobs a bulk action takes, in words: "FAILED job(s) of class report with error X:Y". */
function describe(bulk: Bulk): string {
  const parts = [`${WORDS[bulk.kind].status} job(s)`];
  if (bulk.filter.class !== undefined) parts.push(`of class ${bulk.filter.class}`);
  if (bulk.filter.errorCode !== undefined) parts.push(`with error ${bulk.filter.errorCode}`);
  return parts.join(' ');
}

function listUrl(bulk: Bulk): string {
  return jobsUrl({ status: WORDS[bulk.kind].status, class: bulk.filter.class, errorCode: bulk.filter.errorCode });
}

export function confirmBulkPage(frame: Frame, bulk: Bulk, scope: BulkScope): Html {
  const words = WORDS[bulk.kind];
  const body =
    scope.through_id === null || scope.count === 0
      ? html`<p>There are no ${describe(bulk)} to ${words.verb.toLowerCase()}.</p>`
      : html`<p>${words.verb} <strong class="count" data-count="${scope.count}">${scope.count}</strong> ${describe(bulk)}? ${words.what} Jobs that arrive after this count are left alone.</p>${actionForm(
          frame,
          {
            url: words.url,
            label: `${words.verb} ${scope.count} job(s)`,
            fields: { ...filterFields(bulk.filter), through_id: String(scope.through_id), count: String(scope.count) },
            danger: bulk.kind === 'cancel',
          },
        )}`;
  return layout(
    { ...frame, title: words.title },
    html`<article class="confirm"><header><strong>${words.title}</strong></header>${body}<footer><a href="${listUrl(bulk)}">See them first</a> · <a href="/">Back to the overview</a></footer></article>`,
  );
}

export function bulkDonePage(frame: Frame, bulk: Bulk, count: number): Html {
  return layout(
    { ...frame, title: WORDS[bulk.kind].title },
    html`<article class="alert notice" role="status"><p><strong class="count" data-count="${count}">${count}</strong> ${describe(bulk)} ${WORDS[bulk.kind].done}.</p><footer><a href="${jobsUrl({ class: bulk.filter.class })}">See the jobs</a> · <a href="/">Back to the overview</a></footer></article>`,
  );
}
