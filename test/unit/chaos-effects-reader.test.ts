import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEffects } from '../../scripts/chaos/effects-reader.js';
import { effectsFileName, type Effect } from '../../scripts/chaos/effects.js';
import { ProcessLedger } from '../../scripts/chaos/process-ledger.js';
import { tempDir } from '../helpers/temp.js';

const newDir = tempDir('leasehold-chaos-effects-');

const START_TICKS = 4_242;

function record(pid: number, jobId: number, ts: number): string {
  const effect: Effect = {
    job_id: jobId,
    attempt: 1,
    lease_token: `token-${jobId}`,
    pid,
    proc_start: START_TICKS,
    kind: 'start',
    outcome: null,
    ts,
  };
  return `${JSON.stringify(effect)}\n`;
}

/** A record cut short, as a SIGKILL in the middle of its write(2) leaves it: no newline, no closing brace. */
const TORN = '{"outcome":null,"proc_start":4242,"job_id":9,"att';

/** The effects folder of a run: one file per process, `contents` by pid. */
function effectsDir(contents: Record<number, string>): string {
  const dir = newDir();
  for (const [pid, text] of Object.entries(contents))
    writeFileSync(path.join(dir, effectsFileName(Number(pid), START_TICKS)), text);
  return dir;
}

describe("the chaos program's reading of the effects files", () => {
  it('reads every process file, oldest record first', () => {
    const dir = effectsDir({ 101: record(101, 1, 10) + record(101, 3, 30), 102: record(102, 2, 20) });
    const reading = readEffects(dir, new ProcessLedger());
    expect(reading.effects.map((e) => e.job_id)).toEqual([1, 2, 3]);
    expect({ torn: reading.torn, cut: reading.cutByDeath }).toEqual({ torn: [], cut: [] });
  });

  it('fails a record torn in the middle of a file, even of a process that was killed', () => {
    const dir = effectsDir({ 101: record(101, 1, 10) + TORN + record(101, 2, 20) });
    const ledger = new ProcessLedger();
    ledger.noteDeath({ pid: 101, startTicks: START_TICKS, at: 30, how: 'SIGKILLed by the chaos program' });
    const reading = readEffects(dir, ledger);
    expect(reading.torn).toHaveLength(1);
    expect(reading.torn[0]).toMatch(/101-4242\.jsonl line 2 is not a whole record, and not the last line/);
    expect(reading.effects.map((e) => e.job_id)).toEqual([1]);
  });

  it('accepts the torn last record of a process the ledger saw die after its last whole record', () => {
    const dir = effectsDir({ 101: record(101, 1, 10) + TORN, 102: record(102, 2, 20) });
    const ledger = new ProcessLedger();
    ledger.noteDeath({ pid: 101, startTicks: undefined, at: 15, how: 'exited on SIGKILL (supervisor log)' });
    const reading = readEffects(dir, ledger);
    expect(reading.torn).toEqual([]);
    expect(reading.cutByDeath).toHaveLength(1);
    expect(reading.cutByDeath[0]).toMatch(/101-4242\.jsonl line 2, .*exited on SIGKILL \(supervisor log\)/);
    expect(reading.effects.map((e) => e.job_id)).toEqual([1, 2]);
  });

  it('fails the torn last record of a process with no death in the ledger, or only one before its last record, or of another process', () => {
    const dir = effectsDir({ 101: record(101, 1, 10) + TORN });
    expect(readEffects(dir, new ProcessLedger()).torn[0]).toMatch(/line 2 .*no death of pid 101/);

    const earlier = new ProcessLedger();
    earlier.noteDeath({ pid: 101, startTicks: undefined, at: 5, how: 'an earlier process with this pid, killed' });
    expect(readEffects(dir, earlier).torn).toHaveLength(1);

    const other = new ProcessLedger();
    other.noteDeath({ pid: 101, startTicks: START_TICKS + 1, at: 50, how: 'a later process with this pid, killed' });
    other.noteDeath({ pid: 102, startTicks: START_TICKS, at: 50, how: 'another pid, killed' });
    expect(readEffects(dir, other).torn).toHaveLength(1);
  });

  it('takes a file that is nothing but a torn record as the last record of its process', () => {
    const dir = effectsDir({ 101: TORN });
    const ledger = new ProcessLedger();
    ledger.noteDeath({ pid: 101, startTicks: START_TICKS, at: 1, how: 'SIGKILLed by the chaos program' });
    expect(readEffects(dir, ledger)).toMatchObject({ effects: [], torn: [] });
    expect(readEffects(dir, new ProcessLedger()).torn).toHaveLength(1);
  });
});
