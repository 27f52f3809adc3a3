import { nameAll } from '../connection.js';

/**
 * Whole-database checks, for the chaos program and operators: each returns problems, none when healthy.
 * Page-level corruption is the server's business (data checksums); these check leasehold's own invariants.
 */
export const INTEGRITY_SQL = nameAll('integrity', {
  /** () -> history rows whose job is missing (the foreign keys forbid it; this proves it). */
  orphans: `SELECT 'job_attempts' AS child, a.job_id AS job_id FROM job_attempts AS a WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = a.job_id)
    UNION ALL
    SELECT 'job_events', e.job_id FROM job_events AS e WHERE NOT EXISTS (SELECT 1 FROM jobs WHERE jobs.id = e.job_id)`,
  /** () -> jobs whose attempt rows are not numbered 1..attempts. */
  attemptGaps: `SELECT j.id, j.attempts, count(a.attempt) AS rows, coalesce(max(a.attempt), 0) AS highest
    FROM jobs AS j LEFT JOIN job_attempts AS a ON a.job_id = j.id
    GROUP BY j.id HAVING count(a.attempt) <> j.attempts OR coalesce(max(a.attempt), 0) <> j.attempts`,
});
