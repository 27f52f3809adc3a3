import { existsSync, readFileSync } from 'node:fs';

/**
 * The records of a supervisor's JSON-lines log so far; none before the file
 * exists. A line that does not parse is one still being written: a later
 * read sees it whole.
 */
export function readJsonLog<T>(file: string): T[] {
  if (!existsSync(file)) return [];
  const records: T[] = [];
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    try {
      records.push(JSON.parse(line) as T);
    } catch {
      // a partial last line
    }
  }
  return records;
}
