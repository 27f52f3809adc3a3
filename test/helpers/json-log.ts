import { existsSync, readFileSync } from 'node:fs';
import { LogFollower } from '../../src/reports/log-follow.js';

/**
 * The records of a supervisor's JSON-lines log so far; none before the file
 * exists. A line that does not parse is one still being written: a later
 * read sees it whole.
 */
export function readJsonLog<T>(file: string): T[] {
  if (!existsSync(file)) return [];
  return parseLines<T>(readFileSync(file, 'utf8').split('\n'));
}

/**
 * The same records, for a log read again and again (a test waiting on it):
 * each read parses only the whole lines written since the last one (the
 * CLI's LogFollower, which follows a rotation too), where parsing the file
 * afresh every 25 ms cost a waiting test a good part of a core once its log
 * grew. `close` lets the file go; a read after it reads the file anew.
 */
export function jsonLogReader<T>(file: string): { read: () => T[]; close: () => void } {
  let records: T[] = [];
  let follower: LogFollower | undefined;
  return {
    read: () => {
      if (follower === undefined) {
        if (!existsSync(file)) return [];
        follower = new LogFollower(file);
      }
      records = records.concat(parseLines<T>(follower.read()));
      return records.slice();
    },
    close: () => {
      follower?.close();
      [follower, records] = [undefined, []]; // a later read starts over
    },
  };
}

function parseLines<T>(lines: string[]): T[] {
  const records: T[] = [];
  for (const line of lines) {
    if (line.trim() === '') continue;
    try {
      records.push(JSON.parse(line) as T);
    } catch {
      // a partial last line
    }
  }
  return records;
}
