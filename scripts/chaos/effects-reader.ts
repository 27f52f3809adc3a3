import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Effect } from './effects.js';
import type { ProcessLedger } from './process-ledger.js';

export interface EffectsReading {
  /** Every whole record of every process, oldest first. */
  effects: Effect[];
  files: number;
  /** Last records of processes that died while writing them: lost with their process, each named. */
  cutByDeath: string[];
  /** Records that are not whole and that no death explains: each one fails the run. */
  torn: string[];
}

const FILE_NAME = /^(\d+)-(\d+)\.jsonl$/;

/**
 * The records of the effects folder, one file per process. A line that does
 * not parse is a lost record, and a lost record could hide a zombie's write,
 * so it is never skipped quietly: it is excused only as the unterminated
 * last line of a process that the ledger saw die after its last whole
 * record (a SIGKILL cut its write short); anywhere else it fails the run.
 */
export function readEffects(dir: string, ledger: ProcessLedger): EffectsReading {
  const reading: EffectsReading = { effects: [], files: 0, cutByDeath: [], torn: [] };
  for (const name of readdirSync(dir).sort()) {
    reading.files += 1;
    const match = FILE_NAME.exec(name);
    if (match === null) {
      reading.torn.push(`${name}: not a process's effects file (<pid>-<start>.jsonl)`);
      continue;
    }
    const [pid, startTicks] = [Number(match[1]), Number(match[2])];
    const lines = readFileSync(join(dir, name), 'utf8').split('\n');
    let lastSeen = 0;
    lines.forEach((line, index) => {
      const unterminated = index === lines.length - 1;
      if (unterminated && line === '') return;
      const effect = parseRecord(line);
      if (effect !== undefined) {
        reading.effects.push(effect);
        lastSeen = Math.max(lastSeen, effect.ts);
        return;
      }
      const where = `${name} line ${index + 1}`;
      const text = line.slice(0, 200);
      const death = unterminated ? ledger.deathOf(pid, startTicks, lastSeen) : undefined;
      if (death !== undefined) reading.cutByDeath.push(`${where}, cut short when the process ${death.how}: ${text}`);
      else if (!unterminated) reading.torn.push(`${where} is not a whole record, and not the last line: ${text}`);
      else
        reading.torn.push(
          `${where} is not a whole record, and the ledger saw no death of pid ${pid} after its last whole record: ${text}`,
        );
    });
  }
  reading.effects.sort((a, b) => a.ts - b.ts);
  return reading;
}

function parseRecord(line: string): Effect | undefined {
  try {
    return JSON.parse(line) as Effect;
  } catch {
    return undefined;
  }
}
