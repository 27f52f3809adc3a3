/**
 * Issue 53: no statement of leasehold's waits forever. Another session holds
 * an exclusive lock on the jobs table for longer than
 * `statement_timeout_seconds`: the children's claims and the supervisor's
 * sweeps wait on it until the server cancels them, each logged
 * (DB_STATEMENT_TIMEOUT, naming the operation). No child is killed for it,
 * and once the lock goes the queue runs its jobs.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { pgUrl, schemaPool, PG_URL } from '../helpers/postgres.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const schemas = schemaPool('lh_stmt_timeout');
const newDir = tempDir('leasehold-stmt-timeout-');

describe('a statement past statement_timeout_seconds', () => {
  it('is cancelled and logged, and the supervisor and its children carry on', { timeout: 90_000 }, async () => {
    const schema = schemas.next();
    const sup = await startSupervisor({
      dir: newDir(),
      database: pgUrl(schema),
      statementTimeoutSeconds: 1,
      sweeperIntervalSeconds: 0.2,
      classes: [{ name: 'work', handler: 'succeed', lease_seconds: 2, heartbeat_seconds: 0.5, poll_seconds: 0.1 }],
    });
    const [child] = await sup.waitForChildren('work', 1);
    const holder = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE');
      await waitFor('a timeout in the child and in the supervisor', () => {
        const timeouts = sup.events('DB_STATEMENT_TIMEOUT');
        return timeouts.some((r) => r.pid === child!.pid) && timeouts.some((r) => r.pid === undefined);
      });
      await holder.query('COMMIT');

      const jobs = await sup.queue.enqueueMany(Array.from({ length: 5 }, () => ({ class: 'work', payload: {} })));
      for (const { id } of jobs) await sup.waitForJob(id, 'SUCCEEDED');
      const [timeout] = sup.events('DB_STATEMENT_TIMEOUT');
      expect(timeout).toMatchObject({ level: 'warn', operation: expect.any(String) });
      expect(timeout!.msg).toMatch(/statement timeout/);
      expect(sup.events('CHILD_KILLED')).toEqual([]);
      expect(sup.events('CHILD_EXITED')).toEqual([]);
    } finally {
      await holder.end();
      expect(await sup.stop()).toBe(0);
    }
  });
});
