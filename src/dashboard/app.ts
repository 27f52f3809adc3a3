/**
 * The dashboard as one Hono app: its pages, its actions, and the checks in
 * front of them (security.ts). The page data comes only from DashboardData;
 * the actions are the store's operator writes, recorded with an actor that
 * says the dashboard did it. Mounted by `leasehold dashboard` and by the
 * supervisor's HTTP server (server.ts).
 */
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono, type Context } from 'hono';
import { secureHeaders } from 'hono/secure-headers';
import { JobStateError, NotFoundError } from '../errors.js';
import type { Logger } from '../log.js';
import { cancelJob, pauseClass, resumeClass, retryFailed, retryJob } from '../queue/controls.js';
import { runScheduleNow, type Schedule } from '../queue/schedules.js';
import type { OperatorStore, ProducerStore } from '../store/types.js';
import { loadAssets } from './assets.js';
import type { DashboardData } from './data.js';
import {
  BadParameter,
  parseBulkBounds,
  parseClass,
  parseClassName,
  parseJobId,
  parseJobsQuery,
  parseRetryFilter,
} from './params.js';
import { Guard, localPath, type Access, type DashboardEnv } from './security.js';
import { DONE_NOTICES, jobPage, type DoneNotice } from './views/job.js';
import { jobsPage } from './views/jobs.js';
import type { Frame, Html } from './views/layout.js';
import { bulkDonePage, confirmBulkPage } from './views/bulk.js';
import { loginPage, messagePage } from './views/messages.js';
import { overviewPage } from './views/overview.js';
import { schedulesPage } from './views/schedules.js';
import { workersPage } from './views/workers.js';

/** The store's operator writes the actions make, and the reads that say what came of them. */
export type DashboardActions = Pick<
  OperatorStore,
  | 'jobRetry'
  | 'jobCancel'
  | 'jobRetryFailed'
  | 'jobCancelQueued'
  | 'classPause'
  | 'classResume'
  | 'classControlList'
  | 'jobInsert'
  | 'jobGet'
> &
  Pick<ProducerStore, 'workerClassServed' | 'workerServedClasses'>;

export interface DashboardOptions extends Access {
  data: DashboardData;
  actions: DashboardActions;
  /** The config's schedules ("run now" enqueues one of their jobs), and its payload limit. */
  schedules: readonly Schedule[];
  /** The config's class names: a pause or resume takes them as known. */
  classes: readonly string[];
  payloadLimitBytes: number;
  /** The database as the pages name it (its password hidden). */
  database: string;
  logger: Logger;
  now: () => number;
}

/** Recorded as the actor of every action (with the address it came from). */
export const DASHBOARD_ACTOR = 'dashboard';

type Ctx = Context<DashboardEnv>;

const CSP = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", 'data:'],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
  baseUri: ["'none'"],
};

export function dashboardApp(options: DashboardOptions): Hono<DashboardEnv> {
  const { data, actions, logger } = options;
  const assets = loadAssets();
  const app = new Hono<DashboardEnv>();

  const frame = (c: Ctx, title: string, nav?: Frame['nav']): Frame => ({
    title,
    nav,
    database: options.database,
    readOnly: options.readOnly,
    csrf: c.get('csrf') ?? '',
  });
  const render = (c: Ctx, page: Html, status: 200 | 400 | 401 | 403 | 404 | 409 | 500 = 200) => c.html(page, status);
  const refuse = (c: Ctx, status: 400 | 401 | 403 | 404 | 409, message: string) =>
    render(c, messagePage(frame(c, ''), status, message), status);
  const guard = new Guard(options, refuse);
  const actor = (c: Ctx) => {
    const address = getConnInfo(c).remote.address;
    return address === undefined ? DASHBOARD_ACTOR : `${DASHBOARD_ACTOR}@${address}`;
  };
  const login = (c: Ctx, problem?: string) => {
    const url = new URL(c.req.url);
    url.searchParams.delete('token');
    return render(
      c,
      loginPage(
        frame(c, 'Log in'),
        c.req.path === '/login' ? localPath(c.req.query('next')) : `${url.pathname}${url.search}`,
        problem,
      ),
      401,
    );
  };

  // Plain HTTP (a tunnel or a proxy adds TLS): no HSTS. No referrer to other sites; not `no-referrer`, with which a browser sends its forms' Origin as "null".
  app.use(secureHeaders({ contentSecurityPolicy: CSP, referrerPolicy: 'same-origin', strictTransportSecurity: false }));

  app.get('/assets/:name', (c) => {
    const asset = assets.get(c.req.param('name'));
    if (asset === undefined) return c.notFound();
    return c.body(asset.body, 200, { 'content-type': asset.type, 'cache-control': 'public, max-age=300' });
  });

  app.get('/login', (c) => (guard.tokenRequired ? login(c) : c.redirect('/', 303)));
  app.post('/login', async (c) => {
    const crossSite = guard.sameOrigin(c);
    if (crossSite !== undefined) return refuse(c, 403, crossSite);
    const form = await c.req.parseBody();
    const next = localPath(typeof form.next === 'string' ? form.next : undefined);
    if (!guard.logIn(c, typeof form.token === 'string' ? form.token : ''))
      return render(c, loginPage(frame(c, 'Log in'), next, 'wrong token'), 401);
    return c.redirect(next, 303);
  });

  app.use(guard.admit(login));
  app.use(guard.csrf());
  app.use(guard.actions());

  app.get('/', async (c) => render(c, overviewPage(frame(c, 'Overview', 'overview'), await data.overview())));

  app.get('/jobs', async (c) => {
    const query = parseJobsQuery((name) => c.req.query(name));
    const page = await data.jobs(query);
    return render(c, jobsPage(frame(c, 'Jobs', 'jobs'), query, page, options.now()));
  });

  app.get('/jobs/lookup', async (c) => {
    const wanted = (c.req.query('q') ?? '').trim();
    if (wanted === '') throw new BadParameter('q', 'a job id or an idempotency key', wanted);
    const byId = /^[0-9]+$/.test(wanted) ? await data.job(parseJobId(wanted, 'q')) : undefined;
    const id = byId?.job.id ?? (await data.jobByKey(wanted))?.id;
    if (id === undefined) return refuse(c, 404, `no job has the id or idempotency key ${JSON.stringify(wanted)}`);
    return c.redirect(`/jobs/${id}`, 303);
  });

  app.get('/jobs/:id', async (c) => {
    const id = parseJobId(c.req.param('id'));
    const detail = await data.job(id);
    if (detail === undefined) return refuse(c, 404, `job ${id} not found`);
    const done = c.req.query('done');
    const notice = done !== undefined && Object.hasOwn(DONE_NOTICES, done) ? (done as DoneNotice) : undefined;
    return render(c, jobPage(frame(c, `Job ${id}`, 'jobs'), detail, options.now(), notice));
  });

  app.post('/jobs/:id/retry', async (c) => {
    const id = parseJobId(c.req.param('id'));
    await retryJob(actions, id, actor(c));
    return c.redirect(`/jobs/${id}?done=retried`, 303);
  });

  app.post('/jobs/:id/cancel', async (c) => {
    const id = parseJobId(c.req.param('id'));
    const { outcome } = await cancelJob(actions, id, actor(c));
    return c.redirect(`/jobs/${id}?done=${outcome}`, 303);
  });

  // Bulk actions: a confirmation that counts, then a POST bounded by what it counted.
  const readOnly = (c: Ctx) => refuse(c, 403, 'this dashboard is read-only: it takes no actions');
  const formField = async (c: Ctx) => {
    const form = await c.req.parseBody();
    return (name: string) => (typeof form[name] === 'string' ? form[name] : undefined);
  };

  app.get('/retry-failed', async (c) => {
    if (options.readOnly) return readOnly(c);
    const filter = parseRetryFilter((name) => c.req.query(name));
    return render(
      c,
      confirmBulkPage(frame(c, 'Retry failed jobs', 'jobs'), { kind: 'retry', filter }, await data.failedScope(filter)),
    );
  });

  app.post('/retry-failed', async (c) => {
    const field = await formField(c);
    const filter = parseRetryFilter(field);
    const { count } = await retryFailed(actions, { status: 'FAILED', ...filter, ...parseBulkBounds(field) }, actor(c));
    return render(c, bulkDonePage(frame(c, 'Retried', 'jobs'), { kind: 'retry', filter }, count));
  });

  app.get('/cancel-queued', async (c) => {
    if (options.readOnly) return readOnly(c);
    const jobClass = parseClass((name) => c.req.query(name));
    return render(
      c,
      confirmBulkPage(
        frame(c, 'Cancel queued jobs', 'jobs'),
        { kind: 'cancel', filter: { class: jobClass } },
        await data.queuedScope(jobClass),
      ),
    );
  });

  app.post('/cancel-queued', async (c) => {
    const field = await formField(c);
    const jobClass = parseClass(field);
    const count = await actions.jobCancelQueued({ class: jobClass, ...parseBulkBounds(field), actor: actor(c) });
    return render(
      c,
      bulkDonePage(frame(c, 'Cancelled', 'jobs'), { kind: 'cancel', filter: { class: jobClass } }, count),
    );
  });

  app.post('/classes/:class/pause', async (c) => {
    const jobClass = parseClassName(c.req.param('class'));
    const { outcome } = await pauseClass(actions, jobClass, actor(c), options.classes);
    if (outcome === 'already_paused') return refuse(c, 409, `class ${jobClass} is already paused`);
    return c.redirect('/', 303);
  });

  app.post('/classes/:class/resume', async (c) => {
    const jobClass = parseClassName(c.req.param('class'));
    const { outcome } = await resumeClass(actions, jobClass, actor(c), options.classes);
    if (outcome === 'not_paused') return refuse(c, 409, `class ${jobClass} is not paused`);
    return c.redirect('/', 303);
  });

  app.get('/schedules', async (c) =>
    render(
      c,
      schedulesPage(
        frame(c, 'Schedules', 'schedules'),
        await data.schedules(),
        options.schedules.length > 0,
        options.now(),
      ),
    ),
  );

  app.post('/schedules/:class/:name/run', async (c) => {
    const { class: jobClass, name } = c.req.param();
    const schedule = options.schedules.find((s) => s.class === jobClass && s.config.name === name);
    if (schedule === undefined)
      return refuse(c, 404, `the config has no schedule ${JSON.stringify(name)} of class ${JSON.stringify(jobClass)}`);
    const job = await runScheduleNow(actions, schedule, {
      clock: { now: options.now },
      actor: actor(c),
      payloadLimitBytes: options.payloadLimitBytes,
    });
    return c.redirect(`/jobs/${job.id}?done=enqueued`, 303);
  });

  app.get('/workers', async (c) =>
    render(c, workersPage(frame(c, 'Workers', 'workers'), await data.workers(), options.now())),
  );

  app.notFound((c) => refuse(c, 404, `no page at ${c.req.path}`));

  app.onError((error, c) => {
    if (error instanceof BadParameter) return refuse(c, 400, error.message);
    if (error instanceof NotFoundError) return refuse(c, 404, error.message);
    if (error instanceof JobStateError) return refuse(c, 409, error.message);
    logger.error(`dashboard: ${c.req.method} ${c.req.path} failed`, {
      event: 'DASHBOARD_ERROR',
      err: error,
      method: c.req.method,
      path: c.req.path,
    });
    return render(c, messagePage(frame(c, ''), 500, 'Something went wrong on the server; it is in the log.'), 500);
  });

  return app;
}
