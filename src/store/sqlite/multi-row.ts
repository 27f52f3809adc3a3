import type { SqliteDb, Statement } from './connection.js';

/** Rows per statement; a longer list takes several (SQLite binds at most 32,766 values). */
const MAX_ROWS = 64;

/** A multi-row INSERT: the head (`INSERT INTO t (a, b) VALUES`) and one row's placeholders (`(?, ?)`). */
export interface MultiRowInsert {
  head: string;
  row: string;
}

/**
 * Inserts many rows with one statement per MAX_ROWS, prepared once per row
 * count: a batch pays a statement's fixed cost once, not once a row.
 */
export class MultiRowInserter {
  private readonly prepared = new Map<number, Statement>();

  constructor(
    private readonly db: SqliteDb,
    private readonly insert: MultiRowInsert,
  ) {}

  /**
   * Each row's values in the order of `row`'s placeholders, copied into one
   * flat array by hand: `slice(...).flat()` allocates for every row, on the
   * path every job's rows take.
   */
  run(rows: readonly (readonly unknown[])[]): void {
    for (let start = 0; start < rows.length; start += MAX_ROWS) {
      const end = Math.min(start + MAX_ROWS, rows.length);
      const values: unknown[] = [];
      for (let i = start; i < end; i++) for (const value of rows[i]!) values.push(value);
      this.statement(end - start).run(values);
    }
  }

  private statement(count: number): Statement {
    let statement = this.prepared.get(count);
    if (statement === undefined) {
      statement = this.db.prepare(
        `${this.insert.head} ${Array.from({ length: count }, () => this.insert.row).join(', ')}`,
      );
      this.prepared.set(count, statement);
    }
    return statement;
  }
}
