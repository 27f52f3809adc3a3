/**
 * The dashboard's pages over HTTP (plain fetch, a real server on a real
 * SQLite file): what each page shows, values escaped, keyset pages, the
 * lookup, and the clear pages for bad input (404, 400 naming the parameter)
 * and for an internal error (500, logged, no stack trace). Needs `npm run
 * build` (the job page is compared with `leasehold show`).
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JOBS_PAGE_SIZE } from '../../src/dashboard/params.js';
import { openStore } from '../../src/store/open.js';
import { leasehold } from '../cli/helpers.js';
import { TestClock } from '../helpers/clock.js';
import { tempDir } from '../helpers/temp.js';
import { claimJobs } from '../helpers/fenced-writes.js';
import { waitFor } from '../helpers/wait.js';
import { logLines, MARKUP, seed, serve, Session, textOf } from './helpers.js';

const newDir = tempDir('leasehold-dashboard-');

async function seededDashboard() {
  const dir = newDir();
  const database = path.join(dir, 'queue.db');
  const served = await serve(database, dir);
  const ids = await seed(served.queue);
  return { ...served, database, ids, session: new Session(served.base) };
}

/** No stack trace, no exception name: a page a person can read. */
function expectNoTrace(body: string): void {
  expect(body).not.toMatch(/\n\s+at |Error:|node_modules/);
}

describe('dashboard pages', () => {
  it('overview: counts by class and status, the job in flight, the top error codes', async () => {
    const { session, ids } = await seededDashboard();
    const { status, body } = await session.get('/');
    expect(status).toBe(200);
    const count = (what: string) => new RegExp(`data-status="${what}">(\\d+)<`).exec(body)?.[1];
    expect([count('QUEUED'), count('CLAIMED'), count('SUCCEEDED'), count('FAILED'), count('total')]).toEqual([
      '1',
      '1',
      '1',
      '3',
      '6',
    ]);
    const reportRow = /<tr data-class="report">[\s\S]*?<\/tr>/.exec(body)?.[0] ?? '';
    // WAITING first, then QUEUED … CANCELLED, and the total
    expect(textOf(reportRow)).toContain('report 0 0 0 0 0 2 0 2');
    // email's job is due and no worker of it lives anywhere: flagged, with how long it has waited
    const emailRow = /<tr data-class="email">[\s\S]*?<\/tr>/.exec(body)?.[0] ?? '';
    expect(emailRow).toContain(
      '<span class="badge trouble" title="jobs are due and no live worker of the class runs on any host">unserved</span>',
    );
    expect(emailRow).toMatch(/<td class="num( muted)?" data-oldest-age="[\d.]+">/);
    expect(reportRow).not.toContain('unserved');
    expect(reportRow).toContain('<td class="num muted" data-oldest-age="0">-</td>');
    const text = textOf(body);
    expect(text).toMatch(/Oldest in flight .*#\d+ email CLAIMED host\/child-1/);
    expect(body).toContain(`href="/jobs/${ids.claimed}"`);
    expect(text).toMatch(/UPSTREAM:DOWN 2 .*SMTP:REJECTED 1/);
    expect(body).toContain('href="/jobs?status=FAILED&amp;error_code=UPSTREAM%3ADOWN"');
  });

  it('overview and job: what the attempts cost, classes ranked by CPU, the slowest and hungriest attempts', async () => {
    const { session, queue } = await seededDashboard();
    const { store } = queue;
    const ran: Record<string, number> = {};
    for (const [cls, cpuMs, rssMb] of [
      ['resize', 1500, 90],
      ['resize', 900, 80],
      ['export', 40, 700],
    ] as const) {
      const { id } = await queue.enqueue({ class: cls, payload: {} });
      const [job] = await claimJobs(store, { classes: [cls], ownerId: 'host/child-2', limit: 1, leaseMs: 60_000 });
      await store.jobsSettle({
        settlements: [
          {
            id,
            leaseToken: job!.leaseToken,
            startedAt: null,
            verdict: { type: 'complete', result: null },
            cost: { cpuMs, peakRssBytes: rssMb * 1048576 },
          },
        ],
      });
      ran[`${cls}-${cpuMs}`] = id;
    }
    const text = textOf((await session.get('/')).body);
    const section = text.slice(text.indexOf('What jobs cost'));
    // classes by CPU: resize (2.4 s over 2 attempts) before export; each with its highest peak
    expect(section).toMatch(/resize 2 2\.40s 1\.20s 90\.0 MiB export 1 40ms 40ms 700\.0 MiB/);
    expect(section).toMatch(new RegExp(`Slowest \\(CPU\\).*?#${ran['resize-1500']} #1 resize 1\\.50s`));
    expect(section).toMatch(new RegExp(`Hungriest \\(memory\\).*?#${ran['export-40']} #1 export 40ms 700\\.0 MiB`));
    const job = textOf((await session.get(`/jobs/${ran['export-40']}`)).body);
    expect(job).toMatch(/Attempts .*1 SUCCEEDED host\/child-2 .* 40ms 700\.0 MiB/);
  });

  it('jobs: newest first, filtered by class, status and error code', async () => {
    const { session, ids } = await seededDashboard();
    const listed = async (query: string) => {
      const { status, body } = await session.get(`/jobs${query}`);
      expect(status, body).toBe(200);
      return [...body.matchAll(/<tr data-job="(\d+)">/g)].map((m) => Number(m[1]));
    };
    expect(await listed('')).toEqual([
      ids.queued,
      ids.claimed,
      ids.failedEmail,
      ...[...ids.failed].reverse(),
      ids.succeeded,
    ]);
    expect(await listed('?class=report')).toEqual([...ids.failed].reverse());
    expect(await listed('?status=failed&class=email')).toEqual([ids.failedEmail]);
    expect(await listed('?status=FAILED&error_code=UPSTREAM:DOWN')).toEqual([...ids.failed].reverse());
    expect(await listed('?class=&status=&error_code=')).toHaveLength(6);
  });

  it('jobs: keyset pages, each with the link to the next, every job once', async () => {
    const { session, queue } = await seededDashboard();
    await queue.enqueueMany(Array.from({ length: 2 * JOBS_PAGE_SIZE }, (_, i) => ({ class: 'bulk', payload: { i } })));
    const seen: number[] = [];
    let next: string | undefined = '/jobs?class=bulk';
    while (next !== undefined) {
      const { body } = await session.get(next);
      seen.push(...[...body.matchAll(/<tr data-job="(\d+)">/g)].map((m) => Number(m[1])));
      next = /<a href="([^"]+)" role="button" class="outline" rel="next">/.exec(body)?.[1]?.replace(/&amp;/g, '&');
      if (next !== undefined) expect(next).toMatch(/^\/jobs\?class=bulk&before=\d+$/);
      expect(seen.length).toBeLessThanOrEqual(2 * JOBS_PAGE_SIZE);
    }
    expect(seen).toHaveLength(2 * JOBS_PAGE_SIZE);
    expect(seen).toEqual([...seen].sort((a, b) => b - a));
  });

  it('job: every field, payload and result as formatted JSON, attempts, the timeline; markup escaped', async () => {
    const { session, ids, database } = await seededDashboard();
    const { status, body } = await session.get(`/jobs/${ids.succeeded}`);
    expect(status).toBe(200);
    expect(body).not.toContain(MARKUP);
    expect(body).toContain('&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt;');
    const text = textOf(body);
    for (const label of [
      'class email',
      'status SUCCEEDED',
      'attempts 1 of at most',
      'lease token',
      'runtime',
      'owner host/child-1',
    ])
      expect(text).toContain(label);
    expect(body).toMatch(
      /<pre class="json"><code>\{\n {2}&quot;sent&quot;: true,\n {2}&quot;id&quot;: &quot;m-1&quot;\n\}<\/code><\/pre>/,
    );
    expect(text).toMatch(/Attempts # status owner started took CPU peak RSS error 1 SUCCEEDED host\/child-1/);
    // The timeline as `leasehold show` prints it (the claim comes out of the event that carries it): the same story, actors and details.
    const shown = await leasehold(['--db', database, 'show', String(ids.succeeded)]);
    const showLines = shown.stdout.split('\n').slice(shown.stdout.split('\n').indexOf('timeline') + 2);
    const fromShow = showLines.map((line) => line.split(/\s+/).slice(4, 6).join(' '));
    const fromPage = [
      ...body.matchAll(/<strong class="event-[a-z_]+">([A-Z_]+)<\/strong><\/td><td><small>([^<]*)<\/small>/g),
    ].map((m) => `${m[1]} ${m[2]}`);
    expect(fromPage).toEqual(['ENQUEUED test', 'CLAIMED host/child-1', 'SUCCEEDED worker']);
    expect(fromPage).toEqual(fromShow);
  });

  it("job: the timeline's details show times as times (the page's format), not epoch milliseconds", async () => {
    const { session, ids, queue } = await seededDashboard();
    const { body } = await session.get(`/jobs/${ids.queued}`);
    const [enqueued] = (await queue.get(ids.queued))!.events;
    const runAt = (JSON.parse(enqueued!.detail!) as { run_at: number }).run_at;
    const details = [...body.matchAll(/<code class="detail">([^<]*)<\/code>/g)].map((m) => m[1]!);
    expect(details[0]).toContain(
      `&quot;run_at&quot;:&quot;${new Date(runAt).toISOString().slice(0, 19).replace('T', ' ')}Z&quot;`,
    );
    for (const detail of details) expect(detail).not.toMatch(/\d{13}/);
  });

  it('workers: each supervisor with its children; one that stopped refreshing the registry is flagged STALE, with its children', async () => {
    const { session, queue, database } = await seededDashboard();
    await queue.store.workerRegister({
      id: 'h:1:aa',
      kind: 'supervisor',
      host: 'h',
      supervisorId: null,
      pid: 4242,
      class: null,
      state: 'ready',
      restarts: 0,
    });
    await queue.store.workerRegister({
      id: 'h:1:aa/email/1',
      kind: 'child',
      host: 'h',
      supervisorId: 'h:1:aa',
      pid: 4343,
      class: 'email',
      state: 'busy',
      restarts: 2,
    });
    // A supervisor last heard of a minute ago, written with that minute's clock.
    const past = await openStore(database, { clock: new TestClock(Date.now() - 60_000) });
    await past.workerRegister({
      id: 'g:2:bb',
      kind: 'supervisor',
      host: 'g',
      supervisorId: null,
      pid: 5252,
      class: null,
      state: 'ready',
      restarts: 0,
    });
    await past.workerRegister({
      id: 'g:2:bb/report/1',
      kind: 'child',
      host: 'g',
      supervisorId: 'g:2:bb',
      pid: 5353,
      class: 'report',
      state: 'ready',
      restarts: 0,
    });
    await past.close();
    const { status, body } = await session.get('/workers');
    expect(status).toBe(200);
    const text = textOf(body);
    expect(text).toMatch(/2 worker\(s\) STALE: their supervisor has not refreshed the registry/);
    expect(text).toMatch(/supervisor h:1:aa 4242 ready .* child h:1:aa\/email\/1 4343 email busy .* 2 /);
    expect(text).toMatch(/supervisor g:2:bb 5252 STALE ready .* child g:2:bb\/report\/1 5353 report STALE ready/);
    expect(body).toMatch(/<tr class="supervisor stale" data-worker="g:2:bb">/);
    expect(body).toMatch(/<tr class="supervisor" data-worker="h:1:aa">/);
  });

  it('workers: how each child ended, in words: stopped, killed, crashed, failed to start, or found gone', async () => {
    const { session, queue } = await seededDashboard();
    const { store } = queue;
    await store.workerRegister({
      id: 'h:1:aa',
      kind: 'supervisor',
      host: 'h',
      supervisorId: null,
      pid: 4242,
      class: null,
      state: 'ready',
      restarts: 0,
    });
    const endings = [
      ['drained', 'exited', 0, null, 'stopped', 'exit code 0'],
      ['oom', 'exited', null, 'SIGKILL', 'killed', 'SIGKILL'],
      ['termed', 'exited', null, 'SIGTERM', 'killed', 'SIGTERM'],
      ['segv', 'exited', null, 'SIGSEGV', 'crashed', 'SIGSEGV'],
      ['threw', 'exited', 1, null, 'crashed', 'exit code 1'],
      ['typo', 'failed', 78, null, 'failed to start', 'exit code 78'],
      ['vanished', 'exited', null, null, 'gone', 'exit not seen'],
    ] as const;
    for (const [name, state, exitCode, exitSignal] of endings) {
      const id = `h:1:aa/${name}.0.1`;
      await store.workerRegister({
        id,
        kind: 'child',
        host: 'h',
        supervisorId: 'h:1:aa',
        pid: 5000 + name.length,
        class: 'email',
        state: 'ready',
        restarts: 0,
      });
      await store.workerExit({ id, state, exitCode, exitSignal });
    }
    const { body } = await session.get('/workers');
    for (const [name, , , , word, how] of endings) {
      const row = body.split('</tr>').find((r) => r.includes(`data-worker="h:1:aa/${name}.0.1"`)) ?? '';
      expect(row, name).toContain(`<span class="badge ended-${word.replace(/ /g, '-')}"`);
      expect(textOf(row), name).toContain(`${word} ${how}`);
    }
  });

  it('lookup by id or idempotency key goes to the job; an unknown one is a 404 page', async () => {
    const { session, ids } = await seededDashboard();
    for (const q of [String(ids.failedEmail), 'welcome-42']) {
      const { status, response } = await session.get(`/jobs/lookup?q=${encodeURIComponent(q)}`);
      expect(status, q).toBe(303);
      expect(response.headers.get('location')).toBe(`/jobs/${q === 'welcome-42' ? ids.queued : ids.failedEmail}`);
    }
    const missing = await session.get('/jobs/lookup?q=no-such-key');
    expect(missing.status).toBe(404);
    expect(textOf(missing.body)).toContain('no job has the id or idempotency key "no-such-key"');
  });

  it('an unknown job or page is a 404 page', async () => {
    const { session } = await seededDashboard();
    for (const [url, says] of [
      ['/jobs/999999', 'job 999999 not found'],
      ['/nope', 'no page at /nope'],
    ] as const) {
      const { status, body } = await session.get(url);
      expect(status, url).toBe(404);
      expect(body).toContain('<!doctype html>');
      expect(textOf(body)).toContain(says);
      expectNoTrace(body);
    }
  });

  it('a malformed filter, cursor or id is a 400 page that names the parameter', async () => {
    const { session } = await seededDashboard();
    const cases = [
      [
        '/jobs?status=DONE',
        'status must be one of WAITING, QUEUED, CLAIMED, RUNNING, SUCCEEDED, FAILED, CANCELLED, got "DONE"',
      ],
      ['/jobs?before=abc', 'before must be a positive integer, got "abc"'],
      ['/jobs?before=-5', 'before must be a positive integer, got "-5"'],
      ['/jobs?class=a%20b%3C', 'class must be a class name (letters, digits, "_", "." or "-"), got "a b<"'],
      ['/jobs?error_code=oops', 'error_code must be an error code such as WORKER:CRASHED, got "oops"'],
      ['/jobs/12x', 'job id must be a positive integer, got "12x"'],
      ['/retry-failed?class=%2F', 'class must be a class name'],
    ] as const;
    for (const [url, says] of cases) {
      const { status, body } = await session.get(url);
      expect(status, url).toBe(400);
      expect(textOf(body)).toContain(says);
      expect(body).not.toContain('a b<"');
      expectNoTrace(body);
    }
  });

  it('an internal error is logged and answered with a plain 500 page', async () => {
    const { session, queue, logFile } = await seededDashboard();
    await queue.close(); // every read now fails inside the store
    const { status, body } = await session.get('/');
    expect(status).toBe(500);
    expect(textOf(body)).toContain('Something went wrong on the server');
    expectNoTrace(body);
    const logged = await waitFor('the DASHBOARD_ERROR line', () =>
      logLines(logFile).find((line) => line.event === 'DASHBOARD_ERROR'),
    );
    expect(logged).toMatchObject({ level: 'error', method: 'GET', path: '/' });
    expect(JSON.stringify(logged.err)).toMatch(/not open|closed/i);
  });
});
