/**
 * The dashboard over a PostgreSQL queue (plain fetch, a real server, the
 * real PostgreSQL server): the pages read it, an action writes through it,
 * and a wrong-state action writes nothing there either.
 */
import { describe, expect, it } from 'vitest';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { tempDir } from '../helpers/temp.js';
import { seed, serve, Session, textOf } from './helpers.js';

const schemas = schemaPool('lh_dashboard');
const newDir = tempDir('leasehold-dashboard-pg-');

describe('dashboard on PostgreSQL', () => {
  it('shows the counts and a job, retries a FAILED job, and refuses a wrong-state retry without writing', async () => {
    const { base, queue } = await serve(pgUrl(schemas.next()), newDir());
    const ids = await seed(queue);
    const session = new Session(base);

    const overview = await session.get('/');
    expect(overview.status).toBe(200);
    expect(overview.body).toContain('data-status="FAILED">3<');

    const job = await session.get(`/jobs/${ids.failedEmail}`);
    expect(textOf(job.body)).toMatch(/SMTP:REJECTED: SMTP:REJECTED said no/);
    expect((await session.act(`/jobs/${ids.failedEmail}/retry`)).status).toBe(303);
    expect((await queue.store.eventList({ jobId: ids.failedEmail })).at(-1)).toMatchObject({
      event: 'RETRY_SCHEDULED',
      actor: 'dashboard@127.0.0.1',
    });

    const events = JSON.stringify(await queue.store.eventList({ jobId: ids.succeeded }));
    const refused = await session.act(`/jobs/${ids.succeeded}/retry`);
    expect(refused.status).toBe(409);
    expect(textOf(refused.body)).toContain('is SUCCEEDED, not FAILED');
    expect(JSON.stringify(await queue.store.eventList({ jobId: ids.succeeded }))).toBe(events);
    expect((await queue.store.jobGet({ id: ids.succeeded }))?.status).toBe('SUCCEEDED');
  });
});
