import { nameAll } from '../connection.js';
import { TERMINAL_EVENTS } from '../../flows-migration.js';
import { TERMINAL_LIST } from '../../outcome-rows.js';
import { JOB_COLUMNS } from './jobs.js';

/**
 * The horizon of a reader of outcomes: every transaction with a smaller id
 * has ended, so no terminal event below it can still commit (sequences hand
 * out ids before commit, so job_events.id alone is not an order a reader can
 * follow).
 */
const HORIZON = `pg_snapshot_xmin(pg_current_snapshot())`;

/**
 * Reads of outcomes (Queue.waitFor, Queue.events): the jobs that ended, and
 * the terminal events in job_events_outcomes, followed in (txid, id) order
 * below the horizon. Rows written before migration 12 have no txid: they
 * come first, as txid 0, in id order.
 */
export const OUTCOME_SQL = nameAll('outcomes', {
  /** (ids[]) -> those of the jobs that have ended, by key; an id left out: not ended, or no such job. */
  ended: `SELECT ${JOB_COLUMNS} FROM jobs WHERE id = ANY($1::bigint[]) AND status IN ${TERMINAL_LIST}`,
  /**
   * (afterTxid, afterId, limit) -> the next terminal events after (afterTxid, afterId) below the horizon, in
   * order, each with its job's class and error code (read by key: OFFSET 0 keeps the lookup a nested loop, not
   * a hash of the whole jobs table). Each branch walks job_events_outcomes in its order (the first by txid too,
   * all NULL there, so that the index gives its order).
   */
  after: `SELECT e.id, e.txid::text AS txid, e.job_id, j.class, e.event, e.detail, j.error_code AS job_error_code, e.ts
    FROM (SELECT * FROM (
        (SELECT id, '0'::xid8 AS txid, job_id, event, detail, ts FROM job_events
          WHERE txid IS NULL AND $1::xid8 = '0' AND id > $2::bigint AND ${TERMINAL_EVENTS}
          ORDER BY job_events.txid, id LIMIT $3)
        UNION ALL
        (SELECT id, txid, job_id, event, detail, ts FROM job_events
          WHERE (txid, id) > ($1::xid8, $2::bigint) AND txid < ${HORIZON} AND ${TERMINAL_EVENTS}
          ORDER BY txid, id LIMIT $3)
      ) AS both_ ORDER BY txid, id LIMIT $3) AS e
    CROSS JOIN LATERAL (SELECT class, error_code FROM jobs WHERE jobs.id = e.job_id OFFSET 0) AS j
    ORDER BY e.txid, e.id`,
  /**
   * () -> (txid, id) of the newest terminal event below the horizon (txid 0: one from before migration 12); no
   * row: none. Both branches walk job_events_outcomes backwards; the sort is of their two rows.
   */
  latest: `SELECT txid, id FROM (
      (SELECT 1 AS rank, txid::text AS txid, id FROM job_events WHERE txid < ${HORIZON} AND ${TERMINAL_EVENTS}
        ORDER BY job_events.txid DESC, id DESC LIMIT 1)
      UNION ALL
      (SELECT 2, '0', id FROM job_events WHERE txid IS NULL AND ${TERMINAL_EVENTS}
        ORDER BY job_events.txid DESC NULLS FIRST, id DESC LIMIT 1)
    ) AS newest ORDER BY rank LIMIT 1`,
});
