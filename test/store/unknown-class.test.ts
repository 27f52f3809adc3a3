/**
 * The library's enqueue of a class no supervisor has ever served, on a real
 * SQLite file: one process warning per class, or a refusal that writes nothing.
 */
import { setImmediate as afterWarnings } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.js';
import { Queue } from '../../src/queue/queue.js';
import { SqliteStore } from '../../src/store/sqlite/store.js';
import { dbPathIn, tempDir } from '../helpers/temp.js';

const newDir = tempDir('leasehold-unknown-class-');

describe('enqueue of a class never served', () => {
  let store: SqliteStore;
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => {
    if ((warning as Error & { code?: string }).code === 'LEASEHOLD_CLASS_UNSERVED') warnings.push(warning);
  };

  beforeEach(async () => {
    store = await SqliteStore.open({ path: dbPathIn(newDir()), clock: systemClock });
    warnings.length = 0;
    process.on('warning', onWarning);
  });
  afterEach(async () => {
    process.off('warning', onWarning);
    await store.close();
  });

  it('warns once per class (two enqueues, one warning) and writes the jobs', async () => {
    const queue = new Queue(store);
    await queue.enqueue({ class: 'emial', payload: {} });
    await queue.enqueue({ class: 'emial', payload: {} });
    await afterWarnings();
    expect(warnings.map((w) => w.message)).toEqual([expect.stringMatching(/^class "emial" has never been served/)]);
    expect(await queue.list({ class: 'emial' })).toHaveLength(2);
  });

  it("with unknownClass 'refuse' it throws UNKNOWN_CLASS and writes nothing", async () => {
    const queue = new Queue(store, { unknownClass: 'refuse' });
    await expect(queue.enqueueMany([{ class: 'smss', payload: {} }])).rejects.toMatchObject({
      code: 'INVALID_INPUT:UNKNOWN_CLASS',
    });
    expect(await queue.list({})).toEqual([]);
  });

  it('once a worker of the class was registered, no warning and no refusal', async () => {
    await store.workerRegister({
      id: 'h:1:aa/report.0.1',
      kind: 'child',
      host: 'h',
      supervisorId: 'h:1:aa',
      pid: 1,
      class: 'report',
      state: 'ready',
      restarts: 0,
    });
    await new Queue(store).enqueue({ class: 'report', payload: {} });
    await new Queue(store, { unknownClass: 'refuse' }).enqueue({ class: 'report', payload: {} });
    await afterWarnings();
    expect(warnings).toEqual([]);
  });
});
