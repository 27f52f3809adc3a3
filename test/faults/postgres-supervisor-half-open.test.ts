/**
 * Issue 53: the supervisor's own connections to PostgreSQL go half-open (a
 * TCP proxy stops forwarding them and closes nothing, as a partition leaves
 * them). Its next sweep waits for an answer that never comes: without a
 * bound, the sweeper would stop taking back dead workers' leases while the
 * supervisor looked alive. With `statement_timeout_seconds`, the stalled
 * statement fails, the connection is replaced (DB_CONNECTION_STALLED, then
 * DB_RECOVERED), and the sweeper takes back the lease of a worker that died
 * on another host.
 */
import { describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/types.js';
import { claimJobs } from '../helpers/fenced-writes.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { tempDir } from '../helpers/temp.js';
import { waitFor } from '../helpers/wait.js';

useProcessGuard();
const schemas = schemaPool('lh_sup_half_open');
const newDir = tempDir('leasehold-sup-half-open-');

describe('a supervisor whose own PostgreSQL connections go half-open', () => {
  it(
    "logs DB_CONNECTION_STALLED, reconnects, and its sweeper takes back a dead worker's lease",
    { timeout: 90_000 },
    async () => {
      const url = pgUrl(schemas.next());
      const proxy = await TcpProxy.toPostgres();
      const sup = await startSupervisor({
        dir: newDir(),
        database: proxy.route(url),
        queueDatabase: url,
        statementTimeoutSeconds: 1,
        sweeperIntervalSeconds: 0.2,
        classes: [{ name: 'work', handler: 'succeed', lease_seconds: 2, heartbeat_seconds: 0.5, poll_seconds: 0.1 }],
      });
      let store: Store | undefined;
      try {
        await sup.waitForChildren('work', 1);
        expect(proxy.freezeConnectionsOf(sup.pid)).toBeGreaterThan(0);

        // A worker on another host claims a job of a class this supervisor does not run, then dies.
        store = await openStore(url);
        const { id } = await sup.queue.enqueue({ class: 'elsewhere', payload: {} });
        const [held] = await claimJobs(store, {
          classes: ['elsewhere'],
          ownerId: 'gone:1:abc',
          limit: 1,
          leaseMs: 1_000,
        });
        expect(held!.id).toBe(id);

        await waitFor('DB_CONNECTION_STALLED', () => sup.events('DB_CONNECTION_STALLED').length > 0);
        const job = await sup.waitForJob(id, 'QUEUED', 20_000);
        expect(job.attempts).toHaveLength(1);
        expect(job.attempts[0]).toMatchObject({ owner_id: 'gone:1:abc', error_code: 'LEASE:EXPIRED' });
        await waitFor('DB_RECOVERED', () => sup.events('DB_RECOVERED').length > 0);
        expect(sup.events('DB_CONNECTION_STALLED')[0]).toMatchObject({ level: 'warn' });
      } finally {
        await store?.close();
        expect(await sup.stop()).toBe(0);
      }
    },
  );
});
