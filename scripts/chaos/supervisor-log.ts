import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'node:path';
import type { NotedDeath } from './process-ledger.js';

type LogRecord = Record<string, unknown>;

/** What the supervisors' log says about their children, judged against what the chaos program did to them. */
export interface ChildVerdicts {
  /** Children that exited on their own with an error code (an uncaught error, a failed start): crashes. */
  crashes: string[];
  /**
   * Children the supervisor killed that the chaos program neither stopped nor gave a job that hangs or busy-loops,
   * and children it found stalled (CHILD_STALLED) that the chaos program did not stop.
   */
  healthy_kills: string[];
  /** Outages the supervisors logged (DB_UNAVAILABLE, DB_RECOVERED). */
  db_unavailable: number;
  db_recovered: number;
}

/**
 * Judge the children from the supervisors' JSON log. A kill is deserved
 * when the chaos program SIGSTOPped the child, when the child began a job
 * whose first attempt hangs or busy-loops, or at shutdown; any other kill
 * is of a healthy child. Lines before `since` are an earlier run's (a log
 * file may be shared); `file` null (no log file): nothing to judge.
 */
export function judgeChildren(
  file: string | null,
  since: number,
  deserving: { stoppedPids: Set<number>; troublePids: Set<number> },
): ChildVerdicts {
  const verdicts: ChildVerdicts = { crashes: [], healthy_kills: [], db_unavailable: 0, db_recovered: 0 };
  for (const record of file === null ? [] : readLog(file)) {
    if (!(Date.parse(String(record.ts)) >= since)) continue;
    const pid = Number(record.pid);
    switch (record.event) {
      case 'CHILD_EXITED':
        if (typeof record.exit_code === 'number' && record.exit_code !== 0)
          verdicts.crashes.push(`${record.ts} child ${pid}: ${String(record.msg)}`);
        break;
      case 'CHILD_KILLED':
        if (record.reason !== 'shutdown' && !deserving.stoppedPids.has(pid) && !deserving.troublePids.has(pid)) {
          verdicts.healthy_kills.push(`${record.ts} child ${pid}: ${String(record.msg)}`);
        }
        break;
      // A stalled run loop is a fault of ours to find, even though the net replaced the child; or the net was wrong.
      case 'CHILD_STALLED':
        if (!deserving.stoppedPids.has(pid))
          verdicts.healthy_kills.push(`${record.ts} child ${pid}: ${String(record.msg)}`);
        break;
      case 'DB_UNAVAILABLE':
        verdicts.db_unavailable += 1;
        break;
      case 'DB_RECOVERED':
        verdicts.db_recovered += 1;
        break;
    }
  }
  return verdicts;
}

/** The children the supervisors saw end on a signal since `since`: deaths that may have cut a write short. */
export function signalledChildren(file: string | null, since: number): NotedDeath[] {
  return (file === null ? [] : readLog(file)).flatMap((record) => {
    const at = Date.parse(String(record.ts));
    if (record.event !== 'CHILD_EXITED' || typeof record.exit_signal !== 'string' || !(at >= since)) return [];
    const how = `exited on ${record.exit_signal} (the supervisors' log)`;
    return [{ pid: Number(record.pid), startTicks: undefined, at: at, how }];
  });
}

/** The log's lines, the rotated files (supervisor2.log, supervisor1.log) first. */
function readLog(file: string): LogRecord[] {
  const { dir, name, ext } = parse(file);
  const rotated: string[] = [];
  for (let index = 1; existsSync(`${dir}/${name}${index}${ext}`); index++)
    rotated.unshift(`${dir}/${name}${index}${ext}`);
  return [...rotated, file].filter(existsSync).flatMap((path) =>
    readFileSync(path, 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as LogRecord];
        } catch {
          return []; // a line cut short by a SIGKILL
        }
      }),
  );
}
