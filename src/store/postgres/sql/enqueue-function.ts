import { DEFAULT_MAX_RETRIES, DEFAULT_PAYLOAD_LIMIT_BYTES, DEFAULT_PRIORITY, MAX_PRIORITY } from '../../../limits.js';
import { INSERT_JOBS_FUNCTIONS, INSERT_JOBS_TYPES } from './insert-function.js';

/**
 * `leasehold_enqueue(class, payload, options)`: enqueue from plain SQL (a
 * trigger, another language's driver) inside the caller's transaction. It
 * checks what the library's prepareJob checks, with the same error codes
 * and wording (the enqueue-function tests hold the two side by side), then
 * writes the row, its ENQUEUED event and the wake-up, as the library does.
 * Its errors read `INVALID_INPUT:<FIELD>: <why>` (SQLSTATE 22023).
 * Its search_path is pinned to the queue's schema, so the caller's own
 * search_path does not matter. Times are the server's clock.
 */
export const ENQUEUE_FUNCTION = `${INSERT_JOBS_FUNCTIONS}
CREATE FUNCTION leasehold_enqueue(class text, payload jsonb, options jsonb DEFAULT '{}') RETURNS bigint
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  now_ms       bigint := (extract(epoch FROM clock_timestamp()) * 1000)::bigint;
  body         text := coalesce(payload, 'null'::jsonb)::text;
  opt          jsonb := coalesce(options, '{}'::jsonb);
  unknown      text;
  prio         numeric := ${DEFAULT_PRIORITY};
  retries      numeric := ${DEFAULT_MAX_RETRIES};
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
  IF octet_length(body) > ${DEFAULT_PAYLOAD_LIMIT_BYTES} THEN
    RAISE EXCEPTION 'INVALID_INPUT:PAYLOAD_TOO_LARGE: payload is % bytes, over the ${DEFAULT_PAYLOAD_LIMIT_BYTES}-byte limit', octet_length(body)
      USING ERRCODE = '22023';
  END IF;
  IF opt ? 'priority' THEN
    IF jsonb_typeof(opt->'priority') <> 'number' OR (opt->>'priority')::numeric <> trunc((opt->>'priority')::numeric)
       OR abs((opt->>'priority')::numeric) > ${MAX_PRIORITY} THEN
      RAISE EXCEPTION 'INVALID_INPUT:PRIORITY: priority must be an integer between -${MAX_PRIORITY} and ${MAX_PRIORITY}, got %', opt->'priority'
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
       OR opt->>'traceparent' !~ '^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}( [^\n]*)?$' THEN
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
  EXECUTE format('ALTER FUNCTION leasehold_insert_jobs(${INSERT_JOBS_TYPES}) SET search_path = %I', current_schema());
  EXECUTE format('ALTER FUNCTION leasehold_insert_jobs_guarded(${INSERT_JOBS_TYPES}) SET search_path = %I', current_schema());
END $pin$;
`;
