/**
 * Guarantee 10 (Database faults are weather, not death) at start-up: a
 * supervisor started while PostgreSQL cuts every connection (a TCP proxy
 * that closes them at once, as a server still starting or a network
 * refusing would) does not exit. It logs the outage once, waits, and
 * starts when the database is back: its children run the jobs queued
 * meanwhile. (A chaos run with --db-faults once saw a restarted supervisor
 * exit on a backend terminated during its start-up.)
 */
import { describe, expect, it } from 'vitest';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { tempDir } from '../helpers/temp.js';
import { holdsFor } from '../helpers/wait.js';

useProcessGuard();
const schemas = schemaPool('lh_away_at_start');
const newDir = tempDir('leasehold-away-at-start-');

describe('a supervisor started while PostgreSQL is away', () => {
  it(
    'waits for the database instead of exiting, then starts and runs the jobs queued meanwhile',
    { timeout: 90_000 },
    async () => {
      const proxy = await TcpProxy.toPostgres();
      const direct = pgUrl(schemas.next());
      proxy.refuse(true);
      const sup = await startSupervisor({
        dir: newDir(),
        database: proxy.route(direct),
        queueDatabase: direct,
        classes: [{ name: 'work', handler: 'succeed', waitReady: false }],
      });
      const job = await sup.queue.enqueue({ class: 'work', payload: {} });
      await sup.waitForEvent('DB_UNAVAILABLE', { kind: 'connection' }, 20_000);
      await holdsFor('the supervisor to keep running while the database is away', () => !sup.exited(), {
        forMs: 2_000,
      });

      proxy.refuse(false);
      await sup.waitForJob(job.id, 'SUCCEEDED', 30_000);
      expect(sup.events('DB_RECOVERED')).toHaveLength(1);
      expect(sup.events('SUPERVISOR_STARTED')).toHaveLength(1);
      expect(await sup.stop()).toBe(0);
    },
  );
});
