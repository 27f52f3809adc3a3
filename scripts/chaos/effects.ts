import Database from 'better-sqlite3';

/** One side effect a chaos handler recorded: it started, or finished, a job under a lease. */
export interface Effect {
  job_id: number;
  attempt: number;
  lease_token: string;
  pid: number;
  kind: 'start' | 'done';
  ts: number;
}

/**
 * The chaos handlers' own record of what they did, kept apart from the
 * queue's database so the two can be compared.
 */
export class EffectsLog {
  private readonly db: Database.Database;

  constructor(readonly path: string) {
    this.db = new Database(path, { timeout: 10_000 });
    this.db.pragma('journal_mode = WAL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS effects (
      job_id INTEGER NOT NULL, attempt INTEGER NOT NULL, lease_token TEXT NOT NULL,
      pid INTEGER NOT NULL, kind TEXT NOT NULL, ts INTEGER NOT NULL)`);
  }

  all(): Effect[] {
    return this.db.prepare('SELECT job_id, attempt, lease_token, pid, kind, ts FROM effects ORDER BY ts').all() as Effect[];
  }

  close(): void {
    this.db.close();
  }
}
