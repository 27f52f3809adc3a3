/**
 * Issue 43, no run loop left stalled, with a real fault: one child's
 * connections to PostgreSQL go half-open (a TCP proxy stops forwarding them
 * and closes nothing, as a network partition leaves them). Its next claim
 * waits for an answer that never comes, and no error says so. The
 * supervisor sees its run loop stuck in that claim while the class has due
 * jobs: it logs CHILD_STALLED, kills the child, and the child in its place
 * runs the queued jobs. The rest of the supervisor goes through the same
 * proxy, on connections that keep working.
 */
import { describe, expect, it } from 'vitest';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { useProcessGuard } from '../helpers/processes.js';
import { startSupervisor } from '../helpers/supervisor.js';
import { TcpProxy } from '../helpers/tcp-proxy.js';
import { tempDir } from '../helpers/temp.js';

useProcessGuard();
const schemas = schemaPool('lh_half_open');
const newDir = tempDir('leasehold-half-open-');

describe('a child whose PostgreSQL connections go half-open', () => {
  it('is found stalled (CHILD_STALLED), replaced, and the jobs queued meanwhile run', { timeout: 90_000 }, async () => {
    const proxy = await TcpProxy.toPostgres();
    const sup = await startSupervisor({
      dir: newDir(),
      database: proxy.route(pgUrl(schemas.next())),
      classes: [{ name: 'work', handler: 'succeed', lease_seconds: 2, heartbeat_seconds: 0.5, poll_seconds: 0.1 }],
    });
    const [child] = await sup.waitForChildren('work', 1);
    const first = await sup.queue.enqueue({ class: 'work', payload: {} });
    await sup.waitForJob(first.id, 'SUCCEEDED');

    expect(proxy.freezeConnectionsOf(child!.pid!)).toBeGreaterThan(0);
    const queued = await sup.queue.enqueueMany(Array.from({ length: 5 }, () => ({ class: 'work', payload: {} })));
    for (const { id } of queued) {
      const job = await sup.waitForJob(id, 'SUCCEEDED', 30_000);
      expect(job.attempts.at(-1)!.owner_id).not.toBe(child!.id);
    }

    const stalled = sup.events('CHILD_STALLED', { pid: child!.pid });
    expect(stalled).toHaveLength(1);
    expect(stalled[0]).toMatchObject({ class: 'work', worker_id: child!.id, waiting_on: 'claiming' });
    expect(stalled[0]!.last_claim_at).toEqual(expect.any(Number));
    expect(sup.events('CHILD_EXITED', { pid: child!.pid, reason: 'stalled' })).toHaveLength(1);
    const [replacement] = await sup.waitForChildren('work', 1);
    expect(replacement!.pid).not.toBe(child!.pid);
    expect(await sup.stop()).toBe(0);
  });
});
