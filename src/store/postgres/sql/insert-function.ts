import { JOBS_CHANNEL } from './notify.js';

export const INSERT_JOBS_PARAMS = `p_now bigint, p_actor text, p_event text, p_classes text[], p_priorities int[],
  p_payloads text[], p_run_ats bigint[], p_max_retries bigint[], p_from_class int[], p_keys text[], p_details text[],
  p_key_scopes text[], p_key_expires bigint[], p_on_parent_failure text[], p_dep_jobs int[], p_dep_parents bigint[],
  p_dep_refs int[], p_traceparents text[]`;
export const INSERT_JOBS_ARGS = `p_now, p_actor, p_event, p_classes, p_priorities, p_payloads, p_run_ats, p_max_retries,
  p_from_class, p_keys, p_details, p_key_scopes, p_key_expires, p_on_parent_failure, p_dep_jobs, p_dep_parents, p_dep_refs, p_traceparents`;
export const INSERT_JOBS_TYPES =
  'bigint, text, text, text[], int[], text[], bigint[], bigint[], int[], text[], text[], text[], bigint[], text[], int[], bigint[], int[], text[]';

/** The key of a parent's shared or exclusive lock: its dependents' enqueues against its end (leasehold_after_outcomes). */
export const PARENT_LOCK = (id: string) => `hashtext(current_schema()), (${id} % 2147483647)::int`;

/**
 * Every enqueue's writes, in one call: the library's (its own connection or
 * the application's), the schedules' and leasehold_enqueue's. Jobs are
 * inserted in order, in bulk when none has a key or a parent.
 *
 * A keyed job is inserted, or the job holding its key is returned (created
 * false). A holder whose key is free again (its scope `incomplete` and it has
 * ended, or its key's lifetime is over) gives the key up first, under its row
 * lock: of two enqueues racing for it, one inserts and the other finds that
 * one. A holder deleted in between, by retention, frees the key: try again.
 *
 * A job with parents (`p_dep_*`: one element per edge; the dependent's
 * position in this batch, and the parent's id or its earlier position) reads
 * them under each parent's shared lock, which a parent's end takes
 * exclusively: either this enqueue sees the end, or that end's transaction
 * sees this edge. It is WAITING while a parent has not ended, CANCELLED at
 * once when a parent already failed or was cancelled (unless it runs
 * whatever its parents do), else QUEUED. A parent that does not exist is
 * refused (22023).
 *
 * Each new job gets its event (`p_details`, worded by the library), and the
 * class of each QUEUED one a wake-up, sent when the transaction commits.
 */
export const INSERT_JOBS_FUNCTIONS = `
CREATE FUNCTION leasehold_insert_jobs(${INSERT_JOBS_PARAMS}) RETURNS TABLE (out_id bigint, out_created boolean)
LANGUAGE plpgsql AS $fn$
DECLARE
  new_id   bigint;
  ids      bigint[] := '{}';
  woken    text[] := '{}';
  parents  bigint[];
  known    int;
  pending  int;
  failed_id     bigint;
  failed_status text;
  state    text;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM unnest(p_keys) AS k WHERE k IS NOT NULL) AND coalesce(cardinality(p_dep_jobs), 0) = 0 THEN
    RETURN QUERY
    WITH inserted AS (
      INSERT INTO jobs (class, status, priority, payload, created_at, run_at, max_retries, max_retries_from_class, on_parent_failure,
                        traceparent)
      SELECT j.class, 'QUEUED', j.priority, j.payload, p_now, j.run_at, j.max_retries, j.from_class, j.on_parent_failure, j.traceparent
      FROM unnest(p_classes, p_priorities, p_payloads, p_run_ats, p_max_retries, p_from_class, p_on_parent_failure, p_traceparents)
        WITH ORDINALITY AS j(class, priority, payload, run_at, max_retries, from_class, on_parent_failure, traceparent, n)
      ORDER BY j.n
      RETURNING jobs.id
    ), numbered AS (
      -- ids are drawn in the ORDER BY's order: the n-th smallest is the n-th job
      SELECT inserted.id, row_number() OVER (ORDER BY inserted.id) AS n FROM inserted
    ), recorded AS (
      INSERT INTO job_events (job_id, ts, event, actor, detail)
      SELECT numbered.id, p_now, p_event, p_actor, d.detail
      FROM numbered JOIN unnest(p_details) WITH ORDINALITY AS d(detail, n) ON d.n = numbered.n
    )
    SELECT numbered.id, true FROM numbered ORDER BY numbered.id;
    woken := p_classes;
  ELSE
    FOR i IN 1 .. coalesce(array_length(p_classes, 1), 0) LOOP
      parents := ARRAY(SELECT DISTINCT coalesce(e.parent, ids[e.ref]) FROM unnest(p_dep_jobs, p_dep_parents, p_dep_refs)
        AS e(job, parent, ref) WHERE e.job = i ORDER BY 1);
      state := 'QUEUED';
      pending := 0;
      failed_id := NULL;
      failed_status := NULL;
      IF cardinality(parents) > 0 THEN
        PERFORM pg_advisory_xact_lock_shared(${PARENT_LOCK('p')}) FROM unnest(parents) AS p ORDER BY p;
        SELECT count(*), count(*) FILTER (WHERE j.status NOT IN ('SUCCEEDED', 'FAILED', 'CANCELLED'))
          INTO known, pending FROM jobs AS j WHERE j.id = ANY(parents);
        IF known < cardinality(parents) THEN
          RAISE EXCEPTION 'INVALID_INPUT:DEPENDS_ON: job % does not exist',
            (SELECT min(p) FROM unnest(parents) AS p WHERE NOT EXISTS (SELECT 1 FROM jobs AS j WHERE j.id = p))
            USING ERRCODE = '22023';
        END IF;
        IF p_on_parent_failure[i] = 'cancel' THEN
          SELECT j.id, j.status INTO failed_id, failed_status FROM jobs AS j
            WHERE j.id = ANY(parents) AND j.status IN ('FAILED', 'CANCELLED') ORDER BY j.id LIMIT 1;
        END IF;
        state := CASE WHEN failed_id IS NOT NULL THEN 'CANCELLED' WHEN pending > 0 THEN 'WAITING' ELSE 'QUEUED' END;
      END IF;
      IF p_keys[i] IS NOT NULL THEN
        UPDATE jobs AS j SET idempotency_key = NULL
          WHERE j.class = p_classes[i] AND j.idempotency_key = p_keys[i]
            AND ((j.key_scope = 'incomplete' AND j.status IN ('SUCCEEDED', 'FAILED', 'CANCELLED')) OR j.key_expires_at <= p_now);
      END IF;
      new_id := NULL;
      FOR attempt_no IN 1 .. 3 LOOP
        INSERT INTO jobs (class, status, priority, payload, created_at, run_at, max_retries, idempotency_key, max_retries_from_class,
                          key_scope, key_expires_at, on_parent_failure, pending_parents, finished_at, error_code, error_detail,
                          traceparent)
          VALUES (p_classes[i], state, p_priorities[i], p_payloads[i], p_now, p_run_ats[i], p_max_retries[i], p_keys[i], p_from_class[i],
                  p_key_scopes[i], p_key_expires[i], p_on_parent_failure[i], CASE WHEN state = 'WAITING' THEN pending ELSE 0 END,
                  CASE WHEN state = 'CANCELLED' THEN p_now END,
                  CASE WHEN state = 'CANCELLED' THEN 'DEPENDENCY:' || failed_status END,
                  CASE WHEN state = 'CANCELLED' THEN 'parent job ' || failed_id || ' ended ' || failed_status END,
                  p_traceparents[i])
          ON CONFLICT (class, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
          RETURNING jobs.id INTO new_id;
        IF new_id IS NOT NULL THEN
          INSERT INTO job_dependencies (job_id, parent_id) SELECT new_id, p FROM unnest(parents) AS p;
          INSERT INTO job_events (job_id, ts, event, actor, detail) VALUES (new_id, p_now, p_event, p_actor, p_details[i]);
          IF state = 'CANCELLED' THEN
            INSERT INTO job_events (job_id, ts, event, actor, detail) VALUES (new_id, p_now, 'CANCELLED', p_actor,
              '{"code":"DEPENDENCY:' || failed_status || '","parent":' || failed_id || '}');
          ELSIF state = 'QUEUED' THEN
            woken := woken || p_classes[i];
          END IF;
          out_id := new_id; out_created := true;
          EXIT;
        END IF;
        SELECT j.id INTO new_id FROM jobs j WHERE j.class = p_classes[i] AND j.idempotency_key = p_keys[i];
        IF new_id IS NOT NULL THEN
          out_id := new_id; out_created := false;
          EXIT;
        END IF;
      END LOOP;
      IF new_id IS NULL THEN
        RAISE EXCEPTION 'idempotency key of class % kept conflicting with a job that then vanished', p_classes[i];
      END IF;
      ids := ids || new_id;
      RETURN NEXT;
    END LOOP;
  END IF;
  PERFORM pg_notify('${JOBS_CHANNEL}', current_schema() || ':' || c) FROM (SELECT DISTINCT unnest(woken) AS c) AS d;
END
$fn$;
-- The same in a block of its own, for a statement on the application's client: a failure rolls back to the
-- block's start (a savepoint) and comes back as a row, so the application's transaction stays usable.
CREATE FUNCTION leasehold_insert_jobs_guarded(${INSERT_JOBS_PARAMS})
  RETURNS TABLE (out_id bigint, out_created boolean, out_sqlstate text, out_message text)
LANGUAGE plpgsql AS $fn$
BEGIN
  RETURN QUERY SELECT r.out_id, r.out_created, NULL::text, NULL::text
    FROM leasehold_insert_jobs(${INSERT_JOBS_ARGS}) AS r;
EXCEPTION WHEN others THEN
  RETURN QUERY SELECT NULL::bigint, NULL::boolean, SQLSTATE::text, SQLERRM;
END
$fn$;
`;
