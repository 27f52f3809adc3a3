import {
  DEFAULT_MAX_RETRIES,
  DEFAULT_PAYLOAD_LIMIT_BYTES,
  DEFAULT_PRIORITY,
  MAX_PRIORITY,
} from '../../../queue/limits.js';
import { JOBS_CHANNEL } from './notify.js';

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
export const ENQUEUE_FUNCTION = `
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
  new_id       bigint;
BEGIN
  IF class IS NULL OR class ~ '^\\s*$' THEN
    RAISE EXCEPTION 'INVALID_INPUT:CLASS: class must be a non-empty string' USING ERRCODE = '22023';
  END IF;
  IF jsonb_typeof(opt) <> 'object' THEN
    RAISE EXCEPTION 'INVALID_INPUT:OPTIONS: options must be a JSON object, got %', opt USING ERRCODE = '22023';
  END IF;
  SELECT k INTO unknown FROM jsonb_object_keys(opt) AS k
    WHERE k NOT IN ('priority', 'delay_seconds', 'run_at', 'max_retries', 'key') LIMIT 1;
  IF unknown IS NOT NULL THEN
    RAISE EXCEPTION 'INVALID_INPUT:OPTIONS: unknown option "%" (known: priority, delay_seconds, run_at, max_retries, key)', unknown
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

  -- A key held already returns its job; a holder deleted in between (retention) frees the key: try again.
  FOR attempt_no IN 1..3 LOOP
    INSERT INTO jobs (class, status, priority, payload, created_at, run_at, max_retries, idempotency_key, max_retries_from_class)
      VALUES (class, 'QUEUED', prio, body, now_ms, run_at_ms, retries, job_key, from_class)
      ON CONFLICT (class, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
      RETURNING id INTO new_id;
    IF new_id IS NOT NULL THEN
      INSERT INTO job_events (job_id, ts, event, actor, detail)
        VALUES (new_id, now_ms, 'ENQUEUED', 'sql:' || session_user,
                jsonb_build_object('run_at', run_at_ms, 'priority', prio)::text);
      PERFORM pg_notify('${JOBS_CHANNEL}', current_schema() || ':' || class);
      RETURN new_id;
    END IF;
    SELECT j.id INTO new_id FROM jobs j WHERE j.class = leasehold_enqueue.class AND j.idempotency_key = job_key;
    IF new_id IS NOT NULL THEN
      RETURN new_id;
    END IF;
  END LOOP;
  RAISE EXCEPTION 'idempotency key of class % kept conflicting with a job that then vanished', class;
END
$fn$;
-- Pinned to the schema it was created in: callers find it there, and it finds its tables whatever their search_path.
DO $pin$ BEGIN
  EXECUTE format('ALTER FUNCTION leasehold_enqueue(text, jsonb, jsonb) SET search_path = %I', current_schema());
END $pin$;
`;
