import { PARENT_LOCK } from './insert-function.js';
import { JOBS_CHANNEL, OUTCOME_ENDS_LOCK, OUTCOME_READERS_LOCK, OUTCOMES_CHANNEL } from './notify.js';

/**
 * `leasehold_after_outcomes(ids, statuses, now, actor)`: what every
 * transaction that ends jobs calls, with the jobs it ended and how (the
 * outcome plans' terminal statuses). It is the PostgreSQL side of
 * flow-rules.ts's `dependentFate`, and runs in the ending transaction:
 *
 * - one notification to whoever waits for outcomes (at most one per
 *   transaction: the server folds repeats), only while a reader listens
 *   (OUTCOME_READERS_LOCK): each notification wakes every listening
 *   connection of the database, whatever its channel, and takes the
 *   server's lock on notifications at commit;
 * - each ended job's exclusive parent lock, so a dependent's enqueue either
 *   saw this end or committed its edge before the read below (a dependent
 *   cancelled here takes its own, before its dependents are read);
 * - each WAITING dependent, locked in id order (two ends touching the same
 *   dependents never deadlock): cancelled, with the parent named, when a
 *   parent failed or was cancelled and it does not run regardless; else its
 *   pending_parents counts down under its row lock, and the end that brings
 *   it to zero queues it and wakes its class. A cancelled dependent ends in
 *   turn: the same steps run again for it, down the chain.
 *
 * Only the store's own connections call it, whose search_path is the
 * queue's schema: unlike the enqueue functions it is not pinned, which would
 * cost a setting's save and restore on every settle.
 *
 * A VOLATILE function takes a fresh snapshot for each statement, so called
 * from inside the ending statement it still sees edges committed while that
 * statement waited for its locks.
 */
export const AFTER_OUTCOMES_FUNCTION = `
CREATE FUNCTION leasehold_after_outcomes(p_ids bigint[], p_statuses text[], p_now bigint, p_actor text) RETURNS int
LANGUAGE plpgsql VOLATILE AS $fn$
DECLARE
  ended_ids      bigint[] := p_ids;
  ended_statuses text[] := p_statuses;
  children       bigint[];
  woken          text[];
  touched        int := 0;
BEGIN
  IF coalesce(cardinality(p_ids), 0) = 0 THEN RETURN 0; END IF;
  PERFORM pg_advisory_xact_lock_shared(${OUTCOME_ENDS_LOCK});
  -- One expression: no interrupt between the try and the unlock, which would leave the session holding it.
  IF NOT (CASE WHEN pg_try_advisory_lock(${OUTCOME_READERS_LOCK}) THEN pg_advisory_unlock(${OUTCOME_READERS_LOCK}) ELSE false END) THEN
    PERFORM pg_notify('${OUTCOMES_CHANNEL}', current_schema());
  END IF;
  LOOP
    PERFORM pg_advisory_xact_lock(${PARENT_LOCK('i')}) FROM unnest(ended_ids) AS i ORDER BY i;
    children := ARRAY(SELECT DISTINCT d.job_id FROM job_dependencies AS d WHERE d.parent_id = ANY(ended_ids) ORDER BY 1);
    EXIT WHEN cardinality(children) = 0;
    PERFORM 1 FROM jobs AS c WHERE c.id = ANY(children) AND c.status = 'WAITING' ORDER BY c.id FOR NO KEY UPDATE;
    WITH blame AS (
      SELECT DISTINCT ON (d.job_id) d.job_id, e.id AS parent_id, e.status AS parent_status
      FROM job_dependencies AS d JOIN unnest(ended_ids, ended_statuses) AS e(id, status) ON e.id = d.parent_id
      WHERE e.status IN ('FAILED', 'CANCELLED') ORDER BY d.job_id, e.id
    ), cancelled AS (
      UPDATE jobs AS c SET status = 'CANCELLED', finished_at = p_now, pending_parents = 0,
        error_code = 'DEPENDENCY:' || b.parent_status, error_detail = 'parent job ' || b.parent_id || ' ended ' || b.parent_status
      FROM blame AS b WHERE c.id = b.job_id AND c.status = 'WAITING' AND c.on_parent_failure = 'cancel'
      RETURNING c.id, b.parent_id, c.error_code
    ), recorded AS (
      INSERT INTO job_events (job_id, ts, event, actor, detail)
      SELECT x.id, p_now, 'CANCELLED', p_actor, '{"code":' || to_json(x.error_code)::text || ',"parent":' || x.parent_id || '}' FROM cancelled AS x
    )
    SELECT coalesce(array_agg(x.id ORDER BY x.id), '{}') INTO children FROM cancelled AS x;
    touched := touched + cardinality(children);
    WITH ended AS (
      SELECT d.job_id, count(*) AS n, max(e.id) AS parent_id
      FROM job_dependencies AS d JOIN unnest(ended_ids) AS e(id) ON e.id = d.parent_id GROUP BY d.job_id
    ), counted AS (
      UPDATE jobs AS c SET pending_parents = c.pending_parents - x.n,
        status = CASE WHEN c.pending_parents - x.n <= 0 THEN 'QUEUED' ELSE 'WAITING' END,
        run_at = CASE WHEN c.pending_parents - x.n <= 0 THEN greatest(c.run_at, p_now) ELSE c.run_at END
      FROM ended AS x WHERE c.id = x.job_id AND c.status = 'WAITING'
      RETURNING c.id, c.class, c.status, x.parent_id
    ), recorded AS (
      INSERT INTO job_events (job_id, ts, event, actor, detail)
      SELECT x.id, p_now, 'DEPENDENCIES_MET', p_actor, '{"parent":' || x.parent_id || '}'
      FROM counted AS x WHERE x.status = 'QUEUED'
    )
    SELECT array_agg(DISTINCT x.class) INTO woken FROM counted AS x WHERE x.status = 'QUEUED';
    PERFORM pg_notify('${JOBS_CHANNEL}', current_schema() || ':' || c) FROM unnest(woken) AS c;
    ended_ids := children;
    ended_statuses := array_fill('CANCELLED'::text, ARRAY[cardinality(children)]);
  END LOOP;
  RETURN touched;
END
$fn$;
`;
