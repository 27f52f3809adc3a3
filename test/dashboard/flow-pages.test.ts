/**
 * Flows on the dashboard's pages (plain fetch, a real server on a real
 * SQLite file): a job's parents and children as links with their statuses,
 * the first 50 children and how many more, a WAITING job's wait and its
 * key's life; WAITING among the jobs filter's statuses and the overview's
 * counts; a WAITING job cancelled from its page; a dependent a failed
 * parent cancelled, and brought back by that parent's retry.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimJobs, failIfHeld } from '../helpers/fenced-writes.js';
import { tempDir } from '../helpers/temp.js';
import { serve, Session, textOf } from './helpers.js';

const newDir = tempDir('leasehold-dashboard-flows-');

/** The rows of a section's table: each linked job's id and its status badge. */
function linkedRows(body: string, section: string): [number, string][] {
  const html = new RegExp(`<section id="${section}">[\\s\\S]*?</section>`).exec(body)?.[0] ?? '';
  return [
    ...html.matchAll(/<a href="\/jobs\/(\d+)">#\d+<\/a>[\s\S]*?<span class="badge status-\w+">(\w+)<\/span>/g),
  ].map((m) => [Number(m[1]), m[2]!]);
}

describe('flows on the dashboard', () => {
  it("a job's parents and children link to them with their statuses; WAITING is filtered, counted and cancellable", async () => {
    const dir = newDir();
    const { base, queue } = await serve(path.join(dir, 'queue.db'), dir);
    const session = new Session(base);
    const [root, a, b, join] = (
      await queue.enqueueMany([
        { class: 'fetch', ref: 'root' },
        { class: 'part', ref: 'a', dependsOn: ['root'] },
        { class: 'part', ref: 'b', dependsOn: ['root'] },
        {
          class: 'join',
          dependsOn: ['a', 'b'],
          onParentFailure: 'run',
          key: 'join-1',
          keyScope: 'incomplete',
          keyTtlSeconds: 3600,
        },
        ...Array.from({ length: 52 }, () => ({ class: 'part', dependsOn: ['root'] })),
      ])
    ).map((job) => job.id) as [number, number, number, number];

    const joined = await session.get(`/jobs/${join}`);
    expect(joined.status).toBe(200);
    expect(linkedRows(joined.body, 'parents')).toEqual([
      [a, 'WAITING'],
      [b, 'WAITING'],
    ]);
    expect(joined.body).not.toContain('id="children"');
    const text = textOf(joined.body);
    expect(text).toContain('Parents it runs even if one ends FAILED or CANCELLED');
    expect(text).toContain('waiting for 2 parent(s) to end');
    expect(text).toContain('key scope incomplete: free again once the job has ended');
    expect(text).toMatch(/key expires \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ \(in 59m\d\ds\)/);

    const rooted = await session.get(`/jobs/${root}`);
    const children = linkedRows(rooted.body, 'children');
    expect(children).toHaveLength(50);
    expect(children.slice(0, 3)).toEqual([
      [a, 'WAITING'],
      [b, 'WAITING'],
      [join + 1, 'WAITING'],
    ]);
    expect(rooted.body).not.toContain(`href="/jobs/${join}"`);
    expect(textOf(rooted.body)).toContain('… and 4 more');
    expect(rooted.body).not.toContain('id="parents"');

    const waiting = await session.get('/jobs?status=WAITING&class=join');
    expect(waiting.status).toBe(200);
    expect([...waiting.body.matchAll(/<tr data-job="(\d+)">/g)].map((m) => Number(m[1]))).toEqual([join]);
    expect(waiting.body).toContain('<option value="WAITING" selected>WAITING</option>');
    const overview = await session.get('/');
    expect(overview.body).toContain('data-status="WAITING">55<');
    expect(overview.body).toContain('<a class="tile status-waiting"');

    // cancelled from its page, as a QUEUED job is
    expect(joined.body).toContain(`action="/jobs/${join}/cancel"`);
    expect(await session.act(`/jobs/${join}/cancel`)).toMatchObject({
      status: 303,
      location: `/jobs/${join}?done=cancelled`,
    });
    expect((await queue.get(join))?.job).toMatchObject({ status: 'CANCELLED', error_code: null });
    expect(textOf((await session.get(`/jobs/${join}?done=cancelled`)).body)).toContain('Cancelled.');
  });

  it("a dependent its parent's failure cancelled says why it never ran; retried from the parent's page, it waits again", async () => {
    const dir = newDir();
    const { base, queue } = await serve(path.join(dir, 'queue.db'), dir);
    const session = new Session(base);
    const [parent, dependent] = (
      await queue.enqueueMany([
        { class: 'fetch', ref: 'parent' },
        { class: 'part', dependsOn: ['parent'] },
      ])
    ).map((job) => job.id) as [number, number];
    const [held] = await claimJobs(queue.store, {
      classes: ['fetch'],
      ownerId: 'host/child-1',
      limit: 1,
      leaseMs: 60_000,
    });
    const error = { code: 'HANDLER:Error', detail: 'boom', retryable: false };
    await failIfHeld(queue.store, { id: parent, leaseToken: held!.leaseToken, error, retryDelayMs: 0 });

    const attempts = (body: string) =>
      textOf(/<section><h2>Attempts<\/h2>[\s\S]*?<\/section>/.exec(body)?.[0] ?? '').trim();
    expect(attempts((await session.get(`/jobs/${dependent}`)).body)).toBe(
      `Attempts Never ran: cancelled, parent job ${parent} ended FAILED.`,
    );
    expect((await session.get(`/jobs/${parent}`)).body).toContain(`action="/jobs/${parent}/retry"`);
    expect(await session.act(`/jobs/${parent}/retry`)).toMatchObject({ status: 303 });
    const page = (await session.get(`/jobs/${dependent}`)).body;
    expect(attempts(page)).toBe('Attempts Not run yet: it waits for its parents.');
    expect(textOf(page)).toMatch(new RegExp(`REVIVED flow \\{"parent":${parent}\\}`));
  });
});
