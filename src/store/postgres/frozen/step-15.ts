/**
 * PostgreSQL migration 15 as it shipped (5b40fe0): every function at that build's text, the enqueue functions and
 * leasehold_after_outcomes. Frozen text, never edited: src/store/shipped-migrations.json holds its hash.
 */
export const STEP_15 = `
      DROP FUNCTION IF EXISTS leasehold_enqueue(text, jsonb, jsonb),
        leasehold_insert_jobs_guarded(bigint, text, text, text[], int[], text[], bigint[], bigint[], int[], text[], text[], text[], bigint[], text[], int[], bigint[], int[], text[]), leasehold_insert_jobs(bigint, text, text, text[], int[], text[], bigint[], bigint[], int[], text[], text[], text[], bigint[], text[], int[], bigint[], int[], text[]),
        leasehold_after_outcomes(bigint[], text[], bigint, text);
      
CREATE FUNCTION leasehold_insert_jobs(p_now bigint, p_actor text, p_event text, p_classes text[], p_priorities int[],
  p_payloads text[], p_run_ats bigint[], p_max_retries bigint[], p_from_class int[], p_keys text[], p_details text[],
  p_key_scopes text[], p_key_expires bigint[], p_on_parent_failure text[], p_dep_jobs int[], p_dep_parents bigint[],
  p_dep_refs int[], p_traceparents text[]) RETURNS TABLE (out_id bigint, out_created boolean)
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
        PERFORM pg_advisory_xact_lock_shared(hashtext(current_schema()), (p % 2147483647)::int) FROM unnest(parents) AS p ORDER BY p;
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
  PERFORM pg_notify('leasehold_jobs', current_schema() || ':' || c) FROM (SELECT DISTINCT unnest(woken) AS c) AS d;
END
$fn$;
-- The same in a block of its own, for a statement on the application's client: a failure rolls back to the
-- block's start (a savepoint) and comes back as a row, so the application's transaction stays usable.
CREATE FUNCTION leasehold_insert_jobs_guarded(p_now bigint, p_actor text, p_event text, p_classes text[], p_priorities int[],
  p_payloads text[], p_run_ats bigint[], p_max_retries bigint[], p_from_class int[], p_keys text[], p_details text[],
  p_key_scopes text[], p_key_expires bigint[], p_on_parent_failure text[], p_dep_jobs int[], p_dep_parents bigint[],
  p_dep_refs int[], p_traceparents text[])
  RETURNS TABLE (out_id bigint, out_created boolean, out_sqlstate text, out_message text)
LANGUAGE plpgsql AS $fn$
BEGIN
  RETURN QUERY SELECT r.out_id, r.out_created, NULL::text, NULL::text
    FROM leasehold_insert_jobs(p_now, p_actor, p_event, p_classes, p_priorities, p_payloads, p_run_ats, p_max_retries,
  p_from_class, p_keys, p_details, p_key_scopes, p_key_expires, p_on_parent_failure, p_dep_jobs, p_dep_parents, p_dep_refs, p_traceparents) AS r;
EXCEPTION WHEN others THEN
  RETURN QUERY SELECT NULL::bigint, NULL::boolean, SQLSTATE::text, SQLERRM;
END
$fn$;

CREATE FUNCTION leasehold_enqueue(class text, payload jsonb, options jsonb DEFAULT '{}') RETURNS bigint
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  now_ms       bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  body         text := coalesce(payload, 'null'::jsonb)::text;
  opt          jsonb := coalesce(options, '{}'::jsonb);
  unknown      text;
  prio         numeric := 0;
  retries      numeric := 5;
  from_class   int := 1;
  run_at_ms    bigint := now_ms;
  delay        numeric;
  job_key      text;
  scope        text := 'row';
  key_expires  bigint;
  on_failure   text := 'cancel';
  parents      bigint[] := '{}';
  trace        text;
  served       text;
BEGIN
  IF class IS NULL OR class ~ '^\\s*$' THEN
    RAISE EXCEPTION 'INVALID_INPUT:CLASS: class must be a non-empty string' USING ERRCODE = '22023';
  END IF;
  -- the library's rule for a class never served (unknown-class.ts), as a warning to the caller: only when no job of
  -- the class exists (one index probe, the usual way out) and supervisors have served others, but never this one
  IF NOT EXISTS (SELECT 1 FROM jobs AS j WHERE j.class = leasehold_enqueue.class)
     AND NOT EXISTS (SELECT 1 FROM workers AS w WHERE w.kind = 'child' AND w.class = leasehold_enqueue.class) THEN
    SELECT string_agg(s.class, ', ') INTO served
      FROM (SELECT DISTINCT w.class FROM workers AS w WHERE w.kind = 'child' AND w.class IS NOT NULL
            ORDER BY w.class LIMIT 20) AS s;
    IF served IS NOT NULL THEN
      RAISE WARNING 'class "%" has never been served: the supervisors on this database have served % (a typo, or a class in no config yet?)',
        leasehold_enqueue.class, served;
    END IF;
  END IF;
  IF jsonb_typeof(opt) <> 'object' THEN
    RAISE EXCEPTION 'INVALID_INPUT:OPTIONS: options must be a JSON object, got %', opt USING ERRCODE = '22023';
  END IF;
  SELECT k INTO unknown FROM jsonb_object_keys(opt) AS k
    WHERE k NOT IN ('priority', 'delay_seconds', 'run_at', 'max_retries', 'key', 'key_scope', 'key_ttl_seconds',
                    'depends_on', 'on_parent_failure', 'traceparent') LIMIT 1;
  IF unknown IS NOT NULL THEN
    RAISE EXCEPTION 'INVALID_INPUT:OPTIONS: unknown option "%" (known: priority, delay_seconds, run_at, max_retries, key, key_scope, key_ttl_seconds, depends_on, on_parent_failure, traceparent)', unknown
      USING ERRCODE = '22023';
  END IF;
  IF octet_length(body) > 1048576 THEN
    RAISE EXCEPTION 'INVALID_INPUT:PAYLOAD_TOO_LARGE: payload is % bytes, over the 1048576-byte limit', octet_length(body)
      USING ERRCODE = '22023';
  END IF;
  IF opt ? 'priority' THEN
    IF jsonb_typeof(opt->'priority') <> 'number' OR (opt->>'priority')::numeric <> trunc((opt->>'priority')::numeric)
       OR abs((opt->>'priority')::numeric) > 1000000 THEN
      RAISE EXCEPTION 'INVALID_INPUT:PRIORITY: priority must be an integer between -1000000 and 1000000, got %', opt->'priority'
        USING ERRCODE = '22023';
    END IF;
    prio := (opt->>'priority')::numeric;
  END IF;
  IF opt ? 'max_retries' THEN
    IF jsonb_typeof(opt->'max_retries') <> 'number' OR (opt->>'max_retries')::numeric <> trunc((opt->>'max_retries')::numeric)
       OR (opt->>'max_retries')::numeric < 0 OR (opt->>'max_retries')::numeric > 9007199254740991 THEN
      RAISE EXCEPTION 'INVALID_INPUT:MAX_RETRIES: max_retries must be a whole number >= 0, got %', opt->'max_retries'
        USING ERRCODE = '22023';
    END IF;
    retries := (opt->>'max_retries')::numeric;
    from_class := 0;
  END IF;
  IF opt ? 'key' THEN
    IF jsonb_typeof(opt->'key') <> 'string' OR length(opt->>'key') NOT BETWEEN 1 AND 255 THEN
      RAISE EXCEPTION 'INVALID_INPUT:KEY: key must be a string of 1 to 255 characters' USING ERRCODE = '22023';
    END IF;
    job_key := opt->>'key';
  END IF;
  IF opt ? 'key_scope' THEN
    IF opt->>'key_scope' IS NULL OR opt->>'key_scope' NOT IN ('row', 'incomplete') THEN
      RAISE EXCEPTION 'INVALID_INPUT:KEY_SCOPE: the key scope must be row or incomplete, got %', opt->'key_scope'
        USING ERRCODE = '22023';
    END IF;
    scope := opt->>'key_scope';
  END IF;
  IF opt ? 'key_ttl_seconds' THEN
    IF jsonb_typeof(opt->'key_ttl_seconds') <> 'number' OR (opt->>'key_ttl_seconds')::numeric <= 0 THEN
      RAISE EXCEPTION 'INVALID_INPUT:KEY_TTL: the key lifetime must be a number of seconds > 0, got %', opt->'key_ttl_seconds'
        USING ERRCODE = '22023';
    END IF;
    key_expires := now_ms + round((opt->>'key_ttl_seconds')::numeric * 1000);
  END IF;
  IF (opt ? 'key_scope' OR opt ? 'key_ttl_seconds') AND job_key IS NULL THEN
    RAISE EXCEPTION 'INVALID_INPUT:KEY: a key scope or lifetime needs a key' USING ERRCODE = '22023';
  END IF;
  IF opt ? 'depends_on' THEN
    IF jsonb_typeof(opt->'depends_on') <> 'array' OR EXISTS (SELECT 1 FROM jsonb_array_elements(opt->'depends_on') AS e
         WHERE jsonb_typeof(e) <> 'number' OR e::text::numeric <= 0 OR e::text::numeric <> trunc(e::text::numeric)) THEN
      RAISE EXCEPTION 'INVALID_INPUT:DEPENDS_ON: depends_on must be an array of job ids, got %', opt->'depends_on'
        USING ERRCODE = '22023';
    END IF;
    parents := ARRAY(SELECT e::text::bigint FROM jsonb_array_elements(opt->'depends_on') AS e);
  END IF;
  IF opt ? 'on_parent_failure' THEN
    IF opt->>'on_parent_failure' IS NULL OR opt->>'on_parent_failure' NOT IN ('cancel', 'run') THEN
      RAISE EXCEPTION 'INVALID_INPUT:ON_PARENT_FAILURE: the parent failure policy must be cancel or run, got %', opt->'on_parent_failure'
        USING ERRCODE = '22023';
    END IF;
    on_failure := opt->>'on_parent_failure';
  END IF;
  IF opt ? 'traceparent' THEN
    -- a W3C traceparent, then optionally a space and its tracestate: the caller's trace, which the job's attempts join
    IF jsonb_typeof(opt->'traceparent') <> 'string'
       OR opt->>'traceparent' !~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}( [^
]*)?$' THEN
      RAISE EXCEPTION 'INVALID_INPUT:TRACEPARENT: traceparent must be a W3C traceparent header, got %', opt->'traceparent'
        USING ERRCODE = '22023';
    END IF;
    trace := opt->>'traceparent';
  END IF;
  IF opt ? 'delay_seconds' AND opt ? 'run_at' THEN
    RAISE EXCEPTION 'INVALID_INPUT:SCHEDULE: give delay or run_at, not both' USING ERRCODE = '22023';
  END IF;
  IF opt ? 'delay_seconds' THEN
    IF jsonb_typeof(opt->'delay_seconds') <> 'number' OR (opt->>'delay_seconds')::numeric < 0 THEN
      RAISE EXCEPTION 'INVALID_INPUT:DELAY: delay must be a number of seconds >= 0, got %', opt->'delay_seconds'
        USING ERRCODE = '22023';
    END IF;
    delay := (opt->>'delay_seconds')::numeric;
    run_at_ms := now_ms + round(delay * 1000);
  ELSIF opt ? 'run_at' THEN
    -- epoch milliseconds, as the library takes them, or a timestamp's text
    IF jsonb_typeof(opt->'run_at') = 'number' AND (opt->>'run_at')::numeric >= 0 THEN
      run_at_ms := round((opt->>'run_at')::numeric);
    ELSIF jsonb_typeof(opt->'run_at') = 'string' THEN
      BEGIN
        run_at_ms := round(extract(epoch FROM (opt->>'run_at')::timestamptz) * 1000);
      EXCEPTION WHEN others THEN
        run_at_ms := NULL;
      END;
    ELSE
      run_at_ms := NULL;
    END IF;
    IF run_at_ms IS NULL OR run_at_ms < 0 THEN
      RAISE EXCEPTION 'INVALID_INPUT:RUN_AT: run_at must be a valid time, got %', opt->'run_at' USING ERRCODE = '22023';
    END IF;
  END IF;

  RETURN (SELECT out_id FROM leasehold_insert_jobs(now_ms, 'sql:' || session_user, 'ENQUEUED',
    ARRAY[class], ARRAY[prio::int], ARRAY[body], ARRAY[run_at_ms], ARRAY[retries::bigint], ARRAY[from_class], ARRAY[job_key],
    ARRAY[jsonb_build_object('run_at', run_at_ms, 'priority', prio)::text], ARRAY[scope], ARRAY[key_expires], ARRAY[on_failure],
    array_fill(1, ARRAY[cardinality(parents)]), parents, array_fill(NULL::int, ARRAY[cardinality(parents)]), ARRAY[trace]));
END
$fn$;
-- Pinned to the schema they were created in: callers find them there, and they find their tables whatever their search_path.
DO $pin$ BEGIN
  EXECUTE format('ALTER FUNCTION leasehold_enqueue(text, jsonb, jsonb) SET search_path = %I', current_schema());
  EXECUTE format('ALTER FUNCTION leasehold_insert_jobs(bigint, text, text, text[], int[], text[], bigint[], bigint[], int[], text[], text[], text[], bigint[], text[], int[], bigint[], int[], text[]) SET search_path = %I', current_schema());
  EXECUTE format('ALTER FUNCTION leasehold_insert_jobs_guarded(bigint, text, text, text[], int[], text[], bigint[], bigint[], int[], text[], text[], text[], bigint[], text[], int[], bigint[], int[], text[]) SET search_path = %I', current_schema());
END $pin$;

      
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
  PERFORM pg_notify('leasehold_outcomes', current_schema());
  LOOP
    PERFORM pg_advisory_xact_lock(hashtext(current_schema()), (i % 2147483647)::int) FROM unnest(ended_ids) AS i ORDER BY i;
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
    PERFORM pg_notify('leasehold_jobs', current_schema() || ':' || c) FROM unnest(woken) AS c;
    ended_ids := children;
    ended_statuses := array_fill('CANCELLED'::text, ARRAY[cardinality(children)]);
  END LOOP;
  RETURN touched;
END
$fn$;
`;
