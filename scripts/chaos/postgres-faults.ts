import pg from 'pg';
import { parsePostgresUrl } from '../../src/store/postgres/connection.js';
import type { FaultInjector } from './fault-injector.js';

/** The queue's sessions, and no one else's: other suites may be using the same database at the same time. */
const TERMINATE_QUEUE_BACKENDS = `
  SELECT pg_terminate_backend(pid) AS terminated FROM pg_stat_activity
  WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = $1`;

/**
 * The application_name the queue's sessions carry (a parameter of the
 * database URL, which node-postgres sends): how backend kills find the
 * queue's sessions and only those.
 */
export function queueApplicationName(database: string): string {
  const name = new URL(database).searchParams.get('application_name');
  if (name === null || name === '') {
    throw new Error(
      `--db-faults on PostgreSQL terminates the queue's sessions only: add application_name=<a name of its own> to the database URL (${database.replace(/\/\/[^@]*@/, '//')})`,
    );
  }
  return name;
}

/** The same database URL with another application_name: for the chaos program's own sessions, which the kills spare. */
export function withApplicationName(database: string, name: string): string {
  const url = new URL(database);
  url.searchParams.set('application_name', name);
  return url.toString();
}

/** The PostgreSQL fault: terminate every backend of the queue (supervisors, children, their LISTEN connections) at once. */
export class BackendKills implements FaultInjector {
  private kills = 0;
  private terminated = 0;

  private constructor(
    private readonly client: pg.Client,
    private readonly queueSessions: string,
  ) {}

  static async open(database: string): Promise<BackendKills> {
    const queueSessions = queueApplicationName(database);
    const own = withApplicationName(database, `${queueSessions}-faults`);
    const client = new pg.Client({ connectionString: parsePostgresUrl(own).connectionString });
    // Our own connection breaking is no part of the experiment: say so, and let the next injection fail visibly.
    client.on('error', (error) => console.error(`chaos: the fault injector's own connection failed: ${error.message}`));
    await client.connect();
    return new BackendKills(client, queueSessions);
  }

  async inject(): Promise<void> {
    const { rows } = await this.client.query<{ terminated: boolean }>(TERMINATE_QUEUE_BACKENDS, [this.queueSessions]);
    this.kills += 1;
    this.terminated += rows.filter((row) => row.terminated).length;
  }

  interrupt(): void {
    // a kill is over as soon as it is made
  }

  async close(): Promise<void> {
    await this.client.end();
  }

  report(): Record<string, number> {
    return { backend_kills: this.kills, backends_terminated: this.terminated };
  }
}
