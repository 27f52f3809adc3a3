import { prepareAll, type SqliteDb } from '../connection.js';
import { TERMINAL_EVENTS } from '../../flows-migration.js';
import { TERMINAL_LIST } from '../../outcome-rows.js';
import { JOB_COLUMNS } from './jobs.js';

/**
 * Reads of outcomes (Queue.waitFor, Queue.events): the jobs that ended, and
 * the terminal events in job_events_outcomes. SQLite writes one transaction
 * at a time, so its event ids commit in order: a reader after an id never
 * meets a later commit with a smaller one.
 */
export const OUTCOME_SQL = {
  /** (ids: a JSON array) -> those of the jobs that have ended, by key; an id left out: not ended, or no such job. */
  ended: `SELECT ${JOB_COLUMNS} FROM jobs WHERE id IN (SELECT value FROM json_each(@ids)) AND status IN ${TERMINAL_LIST}`,
  /** (afterId, limit) -> the next terminal events after @afterId, in id order, with their job's class and error code. */
  after: `SELECT e.id, '0' AS txid, e.job_id, j.class, e.event, e.detail, j.error_code AS job_error_code, e.ts
    FROM job_events AS e INDEXED BY job_events_outcomes JOIN jobs AS j ON j.id = e.job_id
    WHERE e.id > @afterId AND e.${TERMINAL_EVENTS} ORDER BY e.id LIMIT @limit`,
  /** () -> the newest terminal event's id, 0 when there is none. */
  latest: `SELECT coalesce(max(id), 0) AS id FROM job_events WHERE ${TERMINAL_EVENTS}`,
};

export const prepareOutcomeStatements = (db: SqliteDb) => prepareAll(db, OUTCOME_SQL);

export type OutcomeStatements = ReturnType<typeof prepareOutcomeStatements>;
