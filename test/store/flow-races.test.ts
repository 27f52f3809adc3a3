/**
 * Races a flow must survive, on two connections of its own each (two hosts,
 * as far as the database can tell), over many rounds: two parents ending at
 * the same moment; a dependent enqueued while its parent ends; two enqueues
 * of one key. On PostgreSQL these run truly at once; on SQLite the writes
 * take turns on the file's lock, and the rules must give the same rows.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { Queue } from '../../src/queue/queue.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import type { Store } from '../../src/store/types.js';
import { claimJobs, completeIfHeld } from '../helpers/fenced-writes.js';
import { pgUrl, schemaPool } from '../helpers/postgres.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';

const ROUNDS = 50;
const schemas = schemaPool('lh_flow_races');
const newDir = tempDir();
afterAll(schemas.dropAll);

const DRIVERS: Record<string, () => Promise<[Store, Store]>> = {
  sqlite: async () => {
    const path = dbPathIn(newDir());
    return [await SqliteStore.open({ path, clock: systemClock }), await SqliteStore.open({ path, clock: systemClock })];
  },
  postgres: async () => {
    const database = pgUrl(schemas.next());
    const first = await PostgresStore.open({ database, clock: systemClock });
    return [first, await PostgresStore.open({ database, clock: systemClock })];
  },
};

async function claimOne(store: Store, cls: string, owner: string) {
  const [job] = await claimJobs(store, { classes: [cls], ownerId: owner, limit: 1, leaseMs: 60_000 });
  if (job === undefined) throw new Error(`nothing of ${cls} to claim`);
  return job;
}

describe.each(Object.keys(DRIVERS))('flow races on %s, two connections', (driver) => {
  it(`two parents ending at the same moment queue their dependent exactly once, ${ROUNDS} rounds`, async () => {
    const [a, b] = await DRIVERS[driver]!();
    try {
      const queue = new Queue(a);
      for (let round = 0; round < ROUNDS; round++) {
        const cls = `race-${round}`;
        const [p1, p2, dependent] = await queue.enqueueMany([
          { class: cls, ref: 'p1' },
          { class: cls, ref: 'p2' },
          { class: `${cls}-after`, dependsOn: ['p1', 'p2'] },
        ]);
        const [held1, held2] = [await claimOne(a, cls, 'host-a/child'), await claimOne(b, cls, 'host-b/child')];
        await Promise.all([
          completeIfHeld(a, { id: held1.id, leaseToken: held1.leaseToken, result: null }),
          completeIfHeld(b, { id: held2.id, leaseToken: held2.leaseToken, result: null }),
        ]);
        expect([held1.id, held2.id].sort()).toEqual([p1!.id, p2!.id].sort());
        const row = await a.jobGet({ id: dependent!.id });
        expect({ round, status: row?.status }).toEqual({ round, status: 'QUEUED' });
        const events = (await a.eventList({ jobId: dependent!.id })).map((e) => e.event);
        expect(events).toEqual(['ENQUEUED', 'DEPENDENCIES_MET']);
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it(`a dependent enqueued while its parent ends is never left waiting, ${ROUNDS} rounds`, async () => {
    const [a, b] = await DRIVERS[driver]!();
    try {
      const [producer, other] = [new Queue(a), new Queue(b)];
      for (let round = 0; round < ROUNDS; round++) {
        const cls = `end-${round}`;
        const parent = await producer.enqueue({ class: cls });
        const held = await claimOne(a, cls, 'host-a/child');
        const [, dependent] = await Promise.all([
          completeIfHeld(a, { id: held.id, leaseToken: held.leaseToken, result: null }),
          other.enqueue({ class: `${cls}-after`, dependsOn: [parent.id] }),
        ]);
        expect({ round, status: (await a.jobGet({ id: dependent.id }))?.status }).toEqual({ round, status: 'QUEUED' });
      }
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it(`two enqueues of one key at the same moment create exactly one job, ${ROUNDS} rounds`, async () => {
    const [a, b] = await DRIVERS[driver]!();
    try {
      const [one, two] = [new Queue(a), new Queue(b)];
      for (let round = 0; round < ROUNDS; round++) {
        // the second round onwards races for a key a finished job of the previous round gives up
        const request = { class: 'keyed', key: 'nightly', keyScope: 'incomplete' as const };
        const results = await Promise.all([one.enqueue(request), two.enqueue(request)]);
        expect(results.filter((r) => r.created)).toHaveLength(1);
        expect(results[0]!.id).toBe(results[1]!.id);
        const held = await claimOne(a, 'keyed', 'host-a/child');
        await completeIfHeld(a, { id: held.id, leaseToken: held.leaseToken, result: null });
      }
      expect((await a.jobList({ class: 'keyed', limit: ROUNDS * 2 })).length).toBe(ROUNDS);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
