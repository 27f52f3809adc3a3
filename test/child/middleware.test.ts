/**
 * Middleware on real children: the top-level modules wrap the class's, which
 * wrap the handler, each seeing the result; a middleware that makes an error
 * final fails the job without spending a retry; and a middleware module that
 * cannot load is refused by a reload while the old children serve on.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parse, stringify } from 'yaml';
import { describe, expect, it } from 'vitest';
import { useProcessGuard } from '../helpers/processes.js';
import { fixture, startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';

useProcessGuard();
const newDir = tempDir('leasehold-middleware-');

describe('middleware', () => {
  it('runs the top-level modules outermost, then the class’s, around the handler, each seeing the result', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      middleware: [fixture('middleware/trail-outer')],
      classes: [{ name: 'work', handler: 'trail', middleware: [fixture('middleware/trail-inner')] }],
    });
    const { id } = await sup.queue.enqueue({ class: 'work', payload: {} });
    const job = await sup.waitForJob(id, 'SUCCEEDED');
    expect(job.job.result).toEqual({ trail: ['handler', 'inner', 'outer'] });
    expect(await sup.stop()).toBe(0);
  });

  it('may make an error final: the job fails with no retry spent', async () => {
    const sup = await startSupervisor({
      dir: newDir(),
      classes: [{ name: 'work', handler: 'throws', max_retries: 3, middleware: [fixture('middleware/non-retryable')] }],
    });
    const { id } = await sup.queue.enqueue({ class: 'work', payload: {} });
    const job = await sup.waitForJob(id, 'FAILED');
    expect(job.attempts).toHaveLength(1);
    expect(job.job.error_code).toBe('APP:REFUSED');
    expect(job.job.error_detail).toMatch(/^final after attempt 1: /);
    expect(await sup.stop()).toBe(0);
  });

  it('that cannot load is refused by a reload, and the old children serve on', async () => {
    const sup = await startSupervisor({ dir: newDir(), classes: [{ name: 'work', handler: 'succeed' }] });
    const before = (await sup.children('work')).map((c) => c.pid);
    const config = parse(readFileSync(sup.configFile, 'utf8')) as Record<string, unknown>;
    writeFileSync(sup.configFile, stringify({ ...config, middleware: [fixture('middleware/broken')] }));
    sup.kill('SIGHUP');
    const failed = await sup.waitForEvent('CONFIG_RELOAD_FAILED');
    expect(failed.class).toBe('work');
    expect(failed.error).toMatch(/^cannot load middleware .*broken\.mjs: middleware module exploded at import$/);
    const { id } = await sup.queue.enqueue({ class: 'work', payload: {} });
    await sup.waitForJob(id, 'SUCCEEDED');
    expect(
      (await sup.children('work')).map((c) => c.pid),
      'the old children serve on',
    ).toEqual(before);
    expect(sup.events('CHILD_REPLACED')).toEqual([]);
    expect(await sup.stop()).toBe(0);
  });
});
