import { closeSync, existsSync, fstatSync, openSync, readFileSync, readSync } from 'node:fs';

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
 * each read parses only the whole lines written since the last one, where
 * parsing the file afresh every 25 ms cost a waiting test a good part of a
 * core once its log grew. A file that shrank was rotated: it is read anew.
 */
export function jsonLogReader<T>(file: string): () => T[] {
  let records: T[] = [];
  let offset = 0;
  return () => {
    if (!existsSync(file)) return [];
    const fd = openSync(file, 'r');
    try {
      const size = fstatSync(fd).size;
      if (size < offset) [records, offset] = [[], 0];
      const fresh = Buffer.alloc(size - offset);
      const read = readSync(fd, fresh, 0, fresh.length, offset);
      const whole = fresh.subarray(0, fresh.subarray(0, read).lastIndexOf(0x0a) + 1);
      offset += whole.length;
      records = records.concat(parseLines<T>(whole.toString('utf8').split('\n')));
    } finally {
      closeSync(fd);
    }
    return records.slice();
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
