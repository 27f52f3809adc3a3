/**
 * The library's enqueue of a class no supervisor has ever served, on a real
 * SQLite file: one process warning per class, or a refusal that writes nothing;
 * no warning when it is likely false (nothing served yet, a class of the config).
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

  /** A child of `cls` in the registry, as a supervisor serving it would leave. */
  const served = (cls: string) =>
    store.workerRegister({
      id: `h:1:aa/${cls}.0.1`,
      kind: 'child',
      host: 'h',
      supervisorId: 'h:1:aa',
      pid: 1,
      class: cls,
      state: 'ready',
      restarts: 0,
    });

  it('warns once per class (two enqueues, one warning), naming the classes served and the closest, and writes the jobs', async () => {
    await served('email');
    await served('report');
    const queue = new Queue(store);
    await queue.enqueue({ class: 'emial', payload: {} });
    await queue.enqueue({ class: 'emial', payload: {} });
    await afterWarnings();
    expect(warnings.map((w) => w.message)).toEqual([
      'class "emial" has never been served: the supervisors on this database have served email, report (did you mean "email"?)',
    ]);
    expect(await queue.list({ class: 'emial' })).toHaveLength(2);
  });

  it('no warning on a database no supervisor has served yet: the producer merely started first', async () => {
    const queue = new Queue(store);
    await queue.enqueue({ class: 'flaky', payload: {} });
    await afterWarnings();
    expect(warnings).toEqual([]);
    // Once a supervisor has served something else, the same class is worth a word.
    await served('email');
    await queue.enqueue({ class: 'flaky', payload: {} });
    await afterWarnings();
    expect(warnings.map((w) => w.message)).toEqual([expect.stringMatching(/^class "flaky" has never been served/)]);
  });

  it('a class of the config the queue was given (`classes`) is neither warned about nor refused', async () => {
    await served('report');
    await new Queue(store, { classes: ['email'] }).enqueue({ class: 'email', payload: {} });
    await new Queue(store, { classes: ['email'], unknownClass: 'refuse' }).enqueue({ class: 'email', payload: {} });
    await afterWarnings();
    expect(warnings).toEqual([]);
  });

  it("with unknownClass 'refuse' it throws UNKNOWN_CLASS and writes nothing", async () => {
    const queue = new Queue(store, { unknownClass: 'refuse' });
    await expect(queue.enqueueMany([{ class: 'smss', payload: {} }])).rejects.toMatchObject({
      code: 'INVALID_INPUT:UNKNOWN_CLASS',
    });
    expect(await queue.list({})).toEqual([]);
  });

  it('once a worker of the class was registered, no warning and no refusal', async () => {
    await served('report');
    await new Queue(store).enqueue({ class: 'report', payload: {} });
    await new Queue(store, { unknownClass: 'refuse' }).enqueue({ class: 'report', payload: {} });
    await afterWarnings();
    expect(warnings).toEqual([]);
  });
});

describe('pause and resume of a class no config or supervisor has named', () => {
  let store: SqliteStore;

  beforeEach(async () => {
    store = await SqliteStore.open({ path: dbPathIn(newDir()), clock: systemClock });
    await store.workerRegister({
      id: 'h:1:aa/resize.0.1',
      kind: 'child',
      host: 'h',
      supervisorId: 'h:1:aa',
      pid: 1,
      class: 'resize',
      state: 'ready',
      restarts: 0,
    });
  });
  afterEach(async () => {
    await store.close();
  });

  it('is refused with the closest known name, and nothing is written', async () => {
    const queue = new Queue(store, { classes: ['thumbnail'] });
    for (const control of [() => queue.pause('resizes'), () => queue.resume('resizes')]) {
      await expect(control()).rejects.toMatchObject({
        code: 'INVALID_INPUT:CLASS',
        message: expect.stringContaining('did you mean "resize"?'),
      });
    }
    expect(await store.classControlList()).toEqual([]);
  });

  it('takes a class a supervisor served or the config names, and resumes a paused one', async () => {
    const queue = new Queue(store, { classes: ['thumbnail'] });
    expect(await queue.pause('resize')).toMatchObject({ outcome: 'paused' });
    expect(await queue.pause('thumbnail')).toMatchObject({ outcome: 'paused' });
    // A class paused by a Queue that knew it can be resumed by one that does not.
    expect(await new Queue(store).resume('thumbnail')).toMatchObject({ outcome: 'resumed' });
  });
});
