import { openSqliteReadOnly, type SqliteDb } from './connection.js';
import {
  attemptCostMigration,
  classControlsMigration,
  dashboardMigration,
  IN_FLIGHT,
  JOBS_INDEXES_V3,
  MAX_RETRIES_FROM_CLASS,
  failureDetailMigration,
  schedulesTable,
  statsRollupMigration,
  TRACEPARENT_COLUMN,
  type Migration,
} from '../migration.js';
import { flowsMigration, JOB_STATUS_CHECK, TERMINAL_EVENTS } from '../flows-migration.js';

/**
 * A SQLite step may build its SQL from the schema it finds, may need the
 * foreign keys off while it rebuilds a table (a DROP would cascade), and may
 * edit a table's definition in place (`editsSchema`: SQLite's documented way
 * to change a CHECK that every row meets, which better-sqlite3's defensive
 * mode forbids until the step is done).
 */
interface SqliteMigration extends Omit<Migration, 'sql'> {
  sql: string | ((db: SqliteDb) => string);
  rebuildsTables?: true;
  editsSchema?: true;
}

/** Numbered, append-only. Never edit one that has shipped (shipped-migrations.json): add the next. */
export const SQLITE_MIGRATIONS: readonly SqliteMigration[] = [
  {
    version: 1,
    name: 'jobs, attempts, events, workers',
    sql: `
      CREATE TABLE jobs (
        id                  INTEGER PRIMARY KEY,
        class               TEXT    NOT NULL CHECK (length(class) > 0),
        status              TEXT    NOT NULL CHECK (status IN ('QUEUED','CLAIMED','RUNNING','SUCCEEDED','FAILED','CANCELLED')),
        priority            INTEGER NOT NULL DEFAULT 0,
        payload             TEXT    NOT NULL,
        result              TEXT,
        created_at          INTEGER NOT NULL,
        run_at              INTEGER NOT NULL,
        claimed_at          INTEGER,
        started_at          INTEGER,
        heartbeat_at        INTEGER,
        lease_expires_at    INTEGER,
        finished_at         INTEGER,
        owner_id            TEXT,
        lease_token         TEXT,
        attempts            INTEGER NOT NULL DEFAULT 0,
        max_retries         INTEGER NOT NULL CHECK (max_retries >= 0),
        releases            INTEGER NOT NULL DEFAULT 0,
        cancel_requested_at INTEGER,
        error_code          TEXT,
        error_detail        TEXT,
        idempotency_key     TEXT,
        progress            TEXT
      );
      -- claim: equality on class, then exactly the claim's ORDER BY; only queued rows live here
      CREATE INDEX jobs_claim ON jobs (class, priority DESC, run_at, id) WHERE status = 'QUEUED';
      -- sweeper: expired leases, oldest first
      CREATE INDEX jobs_lease_expiry ON jobs (lease_expires_at) WHERE ${IN_FLIGHT};
      -- supervisor: the jobs a dead child held
      CREATE INDEX jobs_owner ON jobs (owner_id) WHERE ${IN_FLIGHT};
      CREATE UNIQUE INDEX jobs_idempotency ON jobs (class, idempotency_key) WHERE idempotency_key IS NOT NULL;
      -- retention and throughput: terminal rows by age
      CREATE INDEX jobs_status_finished ON jobs (status, finished_at);
      -- list newest first, by status, by class (class and id never change: cheap), by both; counts
      CREATE INDEX jobs_status_id ON jobs (status, id);
      CREATE INDEX jobs_class_id ON jobs (class, id);
      CREATE INDEX jobs_class_status ON jobs (class, status, id);

      CREATE TABLE job_attempts (
        job_id       INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        attempt      INTEGER NOT NULL CHECK (attempt >= 1),
        owner_id     TEXT    NOT NULL,
        lease_token  TEXT    NOT NULL,
        started_at   INTEGER NOT NULL,
        finished_at  INTEGER,
        status       TEXT    NOT NULL CHECK (status IN ('RUNNING','SUCCEEDED','FAILED','CANCELLED')),
        error_code   TEXT,
        error_detail TEXT,
        PRIMARY KEY (job_id, attempt)
      ) WITHOUT ROWID;
      -- top error codes
      CREATE INDEX job_attempts_error ON job_attempts (error_code, finished_at) WHERE error_code IS NOT NULL;

      CREATE TABLE job_events (
        id     INTEGER PRIMARY KEY,
        job_id INTEGER NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
        ts     INTEGER NOT NULL,
        event  TEXT    NOT NULL,
        actor  TEXT,
        detail TEXT
      );
      CREATE INDEX job_events_job ON job_events (job_id, id);

      CREATE TABLE workers (
        id            TEXT    PRIMARY KEY,
        kind          TEXT    NOT NULL CHECK (kind IN ('supervisor','child')),
        host          TEXT    NOT NULL,
        supervisor_id TEXT,
        pid           INTEGER NOT NULL,
        class         TEXT,
        state         TEXT    NOT NULL,
        started_at    INTEGER NOT NULL,
        heartbeat_at  INTEGER NOT NULL,
        exited_at     INTEGER,
        exit_code     INTEGER,
        exit_signal   TEXT,
        restarts      INTEGER NOT NULL DEFAULT 0,
        cpu_percent   REAL,
        memory_bytes  INTEGER,
        job_id        INTEGER
      );
      CREATE INDEX workers_live ON workers (host) WHERE exited_at IS NULL;
      CREATE INDEX workers_started ON workers (started_at);
    `,
  },
  {
    version: 2,
    name: 'operators: zombie writes index',
    sql: `
      -- metrics: zombie writes rejected, counted without reading the timeline (only those events live here)
      CREATE INDEX job_events_zombie ON job_events (ts) WHERE event = 'ZOMBIE_WRITE_REJECTED';
    `,
  },
  {
    version: 3,
    name: 'write cost: fewer indexes move when a job changes status',
    sql: JOBS_INDEXES_V3,
  },
  {
    version: 4,
    name: 'pause and rate limits: class controls and starts',
    sql: classControlsMigration('INTEGER PRIMARY KEY'),
  },
  {
    version: 5,
    name: 'schedules: how far each cron schedule is enqueued',
    sql: schedulesTable('INTEGER'),
  },
  {
    version: 6,
    name: 'what each attempt cost: CPU and peak memory',
    sql: attemptCostMigration('REAL', 'INTEGER'),
  },
  {
    version: 7,
    name: 'dashboard: the dead letter by error code, recent child exits, disabled classes',
    sql: dashboardMigration('INTEGER'),
  },
  {
    version: 8,
    name: "a class's max_retries for jobs whose enqueue set none, written by each claim",
    sql: MAX_RETRIES_FROM_CLASS,
  },
  {
    version: 9,
    name: "why attempts failed, in full (error_stack), and jobs' own log lines (job_logs)",
    sql: failureDetailMigration('INTEGER', 'INTEGER'),
  },
  {
    version: 10,
    name: 'the stats rollup: finished jobs and what attempts cost, per minute',
    sql: statsRollupMigration('INTEGER', 'REAL'),
  },
  {
    version: 12,
    name: 'flows (WAITING, job_dependencies), keys with a scope and a lifetime, outcomes in order',
    rebuildsTables: true,
    sql: (db) => `${widenJobStatus(db)}
      ${flowsMigration('INTEGER', 'INTEGER')}
      CREATE INDEX job_events_outcomes ON job_events (id) WHERE ${TERMINAL_EVENTS};`,
  },
  {
    version: 13,
    name: "the file's timeline: a wall time anchored on this boot's monotonic clock (file-clock.ts)",
    sql: `
      CREATE TABLE clock_anchor (
        id           INTEGER PRIMARY KEY CHECK (id = 1),
        boot_id      TEXT    NOT NULL,
        wall_ms      REAL    NOT NULL,
        monotonic_ms REAL    NOT NULL
      );`,
  },
  {
    version: 14,
    name: 'the trace context each job was enqueued in (jobs.traceparent)',
    sql: TRACEPARENT_COLUMN,
  },
  {
    version: 16,
    name: 'ids never given twice: jobs and job_events AUTOINCREMENT, past every row a prune deleted',
    rebuildsTables: true,
    sql: (db) => `${idsNeverReused(db, 'jobs')};
      ${idsNeverReused(db, 'job_events')};`,
  },
  {
    version: 17,
    name: 'status checks compared one by one: a list of constants built a temporary index at every write',
    editsSchema: true,
    sql: statusChecksCompared,
  },
];

/** A step's SQL, built from the schema `db` has now when the step asks for that. */
export function migrationSql(migration: SqliteMigration, db: SqliteDb): string {
  return typeof migration.sql === 'string' ? migration.sql : migration.sql(db);
}

/** Run a step's SQL on `db` (inside the caller's transaction), with the schema writable for a step that edits it; its SQL. */
export function execMigration(migration: SqliteMigration, db: SqliteDb): string {
  const sql = migrationSql(migration, db);
  if (migration.editsSchema) db.unsafeMode(true);
  try {
    db.exec(sql);
  } finally {
    if (migration.editsSchema) db.unsafeMode(false);
  }
  return sql;
}

/**
 * SQLite cannot alter a CHECK: the jobs table is rebuilt with WAITING added to
 * its statuses, from the definition it has now, whatever columns earlier
 * steps added.
 */
function widenJobStatus(db: SqliteDb): string {
  const narrow = `status IN ('QUEUED','CLAIMED','RUNNING','SUCCEEDED','FAILED','CANCELLED')`;
  return rebuiltTable(db, 'jobs', 'jobs_widened', (table) => {
    if (!table.includes(narrow)) throw new Error('migration 12: the jobs table is not as expected');
    return table.replace(narrow, JOB_STATUS_CHECK);
  });
}

/** The status CHECKs step 17 rewrites: `status IN (<list>)` of each table, and the same as comparisons. */
const STATUS_CHECKS = [
  { table: 'jobs', list: JOB_STATUS_CHECK },
  { table: 'job_attempts', list: `status IN ('RUNNING','SUCCEEDED','FAILED','CANCELLED')` },
].map(({ table, list }) => {
  const values = list.slice(list.indexOf('(') + 1, list.lastIndexOf(')')).split(',');
  return { table, list, compared: `(${values.map((value) => `status = ${value}`).join(' OR ')})` };
});

/**
 * SQLite evaluates `x IN (<more than two constants>)` by building a temporary
 * index each time a statement runs: the status CHECKs of jobs and
 * job_attempts built one at every success's two UPDATEs, half of each
 * UPDATE's time (docs/performance.md). The same test as comparisons builds nothing. The
 * definitions are edited in place (no row changes: every row meets both
 * forms); the table made and dropped after it moves the schema's version,
 * so that every other connection reads the new definitions, and RESET makes
 * this one read them.
 */
function statusChecksCompared(db: SqliteDb): string {
  const definition = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`).pluck();
  for (const { table, list } of STATUS_CHECKS)
    if (!String(definition.get(table)).includes(list))
      throw new Error(`migration 17: the ${table} table is not as expected`);
  return `PRAGMA writable_schema = ON;
    ${STATUS_CHECKS.map(
      ({ table, list, compared }) =>
        `UPDATE sqlite_master SET sql = replace(sql, '${list.replaceAll("'", "''")}', '${compared.replaceAll("'", "''")}')
          WHERE type = 'table' AND name = '${table}';`,
    ).join('\n    ')}
    CREATE TABLE leasehold_schema_moved (x);
    DROP TABLE leasehold_schema_moved;
    PRAGMA writable_schema = RESET;`;
}

/** An id that no row, even one deleted since, ever had: SQLite keeps the largest in sqlite_sequence. */
function idsNeverReused(db: SqliteDb, table: 'jobs' | 'job_events'): string {
  const plain = /\bid(\s+)INTEGER PRIMARY KEY,/;
  return rebuiltTable(db, table, `${table}_sequenced`, (definition) => {
    if (!plain.test(definition)) throw new Error(`migration 16: the ${table} table is not as expected`);
    return definition.replace(plain, 'id$1INTEGER PRIMARY KEY AUTOINCREMENT,');
  });
}

/**
 * A table rebuilt to a changed definition (SQLite's documented twelve
 * steps): made under a new name from the definition it has now, filled,
 * dropped, renamed, and its indexes made again.
 */
function rebuiltTable(db: SqliteDb, table: string, interim: string, change: (definition: string) => string): string {
  const schema = (type: string) =>
    db
      .prepare(`SELECT sql FROM sqlite_master WHERE type = ? AND tbl_name = ? AND sql IS NOT NULL`)
      .pluck()
      .all(type, table) as string[];
  const [definition] = schema('table');
  if (definition === undefined) throw new Error(`the ${table} table is missing`);
  const named = new RegExp(`^CREATE TABLE "?${table}"?`);
  return `${change(definition).replace(named, `CREATE TABLE ${interim}`)};
    INSERT INTO ${interim} SELECT * FROM ${table};
    DROP TABLE ${table};
    ALTER TABLE ${interim} RENAME TO ${table};
    ${schema('index')
      .map((index) => `${index};`)
      .join('\n')}`;
}

/**
 * Each migration is one IMMEDIATE transaction that records its version first:
 * a second process migrating the same file at the same moment waits on the
 * write lock, then finds the version taken and skips it. A file that has
 * every version already is only read: every command opens the store, and
 * must not queue for the write lock behind busy workers to learn that.
 */
export function runSqliteMigrations(db: SqliteDb, now: number): number[] {
  if (isCurrent(db)) return [];
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const record = db.prepare(
    'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?) ON CONFLICT (version) DO NOTHING',
  );
  const applied: number[] = [];
  for (const migration of SQLITE_MIGRATIONS) {
    const apply = db.transaction(() => {
      if (record.run(migration.version, migration.name, now).changes === 0) return false;
      execMigration(migration, db);
      if (migration.rebuildsTables && db.prepare('PRAGMA foreign_key_check').all().length > 0)
        throw new Error(`migration ${migration.version}: a rebuilt table broke a foreign key`);
      return true;
    });
    if (migration.rebuildsTables) db.pragma('foreign_keys = OFF');
    try {
      if (apply.immediate()) applied.push(migration.version);
    } finally {
      if (migration.rebuildsTables) db.pragma('foreign_keys = ON');
    }
  }
  return applied;
}

/** Whether the file at `path` exists and holds a queue, looked at without writing to it or making it. */
export function fileHoldsQueue(path: string): boolean {
  let db: SqliteDb;
  try {
    db = openSqliteReadOnly(path);
  } catch {
    return false; // no such file, or not a database: no queue either way
  }
  try {
    return hasLedger(db);
  } finally {
    db.close();
  }
}

/** Whether the file holds leasehold's migration ledger: a queue at some version. */
export function hasLedger(db: SqliteDb): boolean {
  return (
    db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'`).get() !== undefined
  );
}

/** Every version this build knows is recorded (counted by number: versions need not be consecutive). */
function isCurrent(db: SqliteDb): boolean {
  if (!hasLedger(db)) return false;
  const versions = JSON.stringify(SQLITE_MIGRATIONS.map((migration) => migration.version));
  const recorded = db
    .prepare('SELECT count(*) FROM schema_migrations WHERE version IN (SELECT value FROM json_each(?))')
    .pluck()
    .get(versions);
  return recorded === SQLITE_MIGRATIONS.length;
}
