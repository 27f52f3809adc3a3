import Database from 'better-sqlite3';

/**
 * What a chaos handler did, in its own words:
 * - `start`: it began an attempt (`pid` is the child's, `proc_start` its start in /proc);
 * - `spawn`: it started a subprocess (`pid`, `proc_start` are the subprocess's);
 * - `write`: it made a fenced write (ctx.progress); `outcome` says what came back;
 * - `done`: it finished its work and is about to return its result.
 */
export type EffectKind = 'start' | 'spawn' | 'write' | 'done';

/**
 * A write's outcome as the handler saw it: taken; `refused`, the store
 * turned it away with LeaseLostError (the fence); `lost_locally`, the child
 * refused it before asking the store (it knew the lease was gone); `failed`,
 * another error (the database away).
 */
export type WriteOutcome = 'accepted' | 'refused' | 'lost_locally' | `failed:${string}`;

export interface Effect {
  job_id: number;
  attempt: number;
  lease_token: string;
  pid: number;
  /** The process's start in clock ticks since boot (/proc/<pid>/stat), null when it was gone before it could be read. */
  proc_start: number | null;
  kind: EffectKind;
  outcome: WriteOutcome | null;
  ts: number;
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS effects (
  job_id INTEGER NOT NULL, attempt INTEGER NOT NULL, lease_token TEXT NOT NULL,
  pid INTEGER NOT NULL, proc_start INTEGER, kind TEXT NOT NULL, outcome TEXT, ts INTEGER NOT NULL)`;

/**
 * The effects database is a log, not a store of record: synchronous=OFF
 * keeps a record to a few microseconds (jobs of a few ms write two), and a
 * SIGKILLed handler's records survive anyway (they are in the OS's cache;
 * only a host crash would lose them).
 */
function open(path: string): Database.Database {
  const db = new Database(path, { timeout: 10_000 });
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  return db;
}

/** The chaos program's side: creates the effects database and reads it back. */
export class EffectsLog {
  private readonly db: Database.Database;

  constructor(readonly path: string) {
    this.db = open(path);
    this.db.exec(SCHEMA);
  }

  all(): Effect[] {
    return this.db.prepare('SELECT job_id, attempt, lease_token, pid, proc_start, kind, outcome, ts FROM effects ORDER BY ts').all() as Effect[];
  }

  close(): void {
    this.db.close();
  }
}

/** A handler's side: appends its records to the effects database the chaos program created. */
export class EffectsRecorder {
  private readonly insert: Database.Statement;

  constructor(path: string) {
    this.insert = open(path).prepare(
      'INSERT INTO effects (job_id, attempt, lease_token, pid, proc_start, kind, outcome, ts) VALUES (@job_id, @attempt, @lease_token, @pid, @proc_start, @kind, @outcome, @ts)',
    );
  }

  record(effect: Omit<Effect, 'ts' | 'outcome' | 'proc_start'> & Partial<Pick<Effect, 'outcome' | 'proc_start'>>): void {
    this.insert.run({ outcome: null, proc_start: null, ...effect, ts: Date.now() });
  }
}
