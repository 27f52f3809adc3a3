/** `leasehold enqueue <class> [--payload JSON | --payload-file F | -]` and `enqueue --file jobs.jsonl`. */
import { readFileSync } from 'node:fs';
import type { LeaseholdConfig } from '../../config/schema.js';
import { InvalidInputError } from '../../errors.js';
import { prepareJob, prepareJobs, type EnqueueLimits, type EnqueueRequest } from '../../queue/enqueue.js';
import { DEFAULT_PAYLOAD_LIMIT_BYTES, MAX_PRIORITY } from '../../limits.js';
import type { InsertedJob, KeyScope, NewJob, OnParentFailure } from '../../store/types.js';
import { systemClock, type Clock } from '../../clock.js';
import { adoptEnvironmentTrace, loadTracing, sendTraced, tracingWanted } from '../../tracing/gate.js';
import {
  classConfig,
  defineCommand,
  CLI_ACTOR,
  isStdin,
  output,
  resolveTarget,
  unknownClassError,
  withStore,
  type GlobalArgs,
} from '../context.js';
import { numberOption } from '../numeric-options.js';

/** Jobs of a bulk file written per transaction: short enough that workers keep claiming meanwhile. */
const BULK_CHUNK = 1_000;
const LINE_FIELDS = [
  'class',
  'payload',
  'priority',
  'delay',
  'max_retries',
  'key',
  'key_scope',
  'key_ttl',
  'ref',
  'depends_on',
  'on_parent_failure',
] as const;
/** The options of one job, which a bulk file's lines give instead. */
const ONE_JOB_OPTIONS = [
  'payload',
  'payload-file',
  'priority',
  'delay',
  'run-at',
  'max-retries',
  'key',
  'key-scope',
  'key-ttl',
  'depends-on',
  'on-parent-failure',
] as const;

interface EnqueueArgs extends GlobalArgs {
  class?: string;
  /** `-`: the payload comes from stdin. */
  stdin?: string;
  payload?: string;
  'payload-file'?: string;
  priority?: number;
  delay?: number;
  'run-at'?: string;
  'max-retries'?: number;
  key?: string;
  'key-scope'?: string;
  'key-ttl'?: number;
  'depends-on'?: number[];
  'on-parent-failure'?: string;
  file?: string;
  'allow-unknown-class': boolean;
}

export const enqueueCommand = defineCommand<EnqueueArgs>({
  command: 'enqueue [class] [stdin]',
  describe: 'enqueue one job (prints its id), or every line of a JSON-lines file with --file',
  positionals: {
    class: { type: 'string', describe: 'the job class' },
    stdin: { type: 'string', describe: '"-": read the payload JSON from stdin' },
  },
  options: {
    payload: { type: 'string', describe: 'the payload as JSON ("-" reads stdin)' },
    'payload-file': { type: 'string', describe: 'read the payload JSON from a file ("-" for stdin)' },
    priority: numberOption(
      'priority',
      { integer: true, min: -MAX_PRIORITY, max: MAX_PRIORITY },
      { describe: 'higher runs first (default 0)' },
    ),
    delay: numberOption('delay', { integer: false, min: 0 }, { describe: 'seconds from now before it may run' }),
    'run-at': { type: 'string', describe: 'not before this ISO 8601 time' },
    'max-retries': numberOption(
      'max-retries',
      { integer: true, min: 0 },
      { describe: "default: the class's max_retries, from the config of the child that claims the job" },
    ),
    key: { type: 'string', describe: 'idempotency key, unique per class: enqueueing it again returns the same job' },
    'key-scope': {
      type: 'string',
      requiresArg: true,
      describe:
        "when the key is free again: row (while the job's row exists, the default) or incomplete (once it ended)",
    },
    'key-ttl': numberOption(
      'key-ttl',
      { integer: false, min: 0, aboveMin: true },
      { describe: 'the key is also free again this many seconds after the job was created' },
    ),
    'depends-on': {
      type: 'string',
      requiresArg: true,
      coerce: parseDependsOn,
      describe: 'job ids, comma-separated: the job is WAITING until every one of them has SUCCEEDED',
    },
    'on-parent-failure': {
      type: 'string',
      requiresArg: true,
      describe: 'when a parent ends FAILED or CANCELLED: cancel this job (the default) or run it anyway',
    },
    file: {
      type: 'string',
      describe: `bulk: one JSON object a line with ${LINE_FIELDS.join(', ')} ("-" for stdin)`,
    },
    'allow-unknown-class': {
      type: 'boolean',
      default: false,
      describe: 'enqueue a class that the config does not list',
    },
  },
  run: async (args) => {
    const target = await resolveTarget(args);
    // Everything is checked before the database is opened: bad input writes nothing. Checked on this host's
    // clock; the times written (a delay, a key's life) are then taken from the store's.
    const prepare = args.file !== undefined ? bulkJobs(args, target.config) : oneJob(args, target.config);
    prepare(systemClock);
    if (tracingWanted()) await loadTracing();
    adoptEnvironmentTrace();
    await withStore(target, args, { create: false }, async ({ store }) => {
      const jobs = prepare(store.clock);
      if (args.file === undefined) {
        const [inserted] = (await sendTraced(jobs, () => store.jobInsert({ jobs, actor: CLI_ACTOR }))) as [InsertedJob];
        output(args.json, { id: inserted.id, created: inserted.created }, () =>
          inserted.created
            ? `enqueued job ${inserted.id} (${jobs[0]?.class})`
            : `job ${inserted.id} already holds key ${JSON.stringify(args.key)} (not created)`,
        );
        return;
      }
      const progress = new ProgressBar(jobs.length);
      const inserted: InsertedJob[] = [];
      for (let start = 0; start < jobs.length; start += BULK_CHUNK) {
        const chunk = chunkOf(jobs, start, inserted);
        inserted.push(...(await sendTraced(chunk, () => store.jobInsert({ jobs: chunk, actor: CLI_ACTOR }))));
        progress.update(inserted.length);
      }
      progress.done();
      const existing = inserted.filter((job) => !job.created).length;
      output(
        args.json,
        { count: inserted.length, ids: inserted.map((job) => job.id), created: inserted.map((job) => job.created) },
        () =>
          `enqueued ${inserted.length - existing} job(s)${existing > 0 ? `; ${existing} were already enqueued under their keys` : ''} (${inserted.length} line(s) of ${isStdin(args.file) ? 'stdin' : args.file})`,
      );
    });
  },
});

/** The job to enqueue, prepared on a clock. */
function oneJob(args: EnqueueArgs, config: LeaseholdConfig | undefined): (clock: Clock) => NewJob[] {
  if (args.class === undefined)
    throw new InvalidInputError('USAGE', 'give a class (enqueue <class>) or --file jobs.jsonl');
  if (args.stdin !== undefined && !isStdin(args.stdin))
    throw new InvalidInputError(
      'USAGE',
      `unexpected argument ${JSON.stringify(args.stdin)} after the class (only "-", for a payload on stdin)`,
    );
  const sources = [args.payload, args['payload-file'], args.stdin].filter((source) => source !== undefined);
  if (sources.length > 1)
    throw new InvalidInputError('USAGE', 'give one payload: --payload, --payload-file or - (stdin)');
  if (args.delay !== undefined && args['run-at'] !== undefined)
    throw new InvalidInputError('USAGE', 'give --delay or --run-at, not both');
  checkClass(args.class, config, args['allow-unknown-class']);
  const text =
    args.payload !== undefined
      ? readPayloadArg(args.payload)
      : args['payload-file'] !== undefined
        ? readText(args['payload-file'], 'payload file')
        : args.stdin !== undefined
          ? readText('-', 'payload')
          : undefined;
  const request: EnqueueRequest = {
    class: args.class,
    payload: text === undefined ? null : parseJson(text, 'payload'),
    priority: args.priority,
    delay: args.delay,
    runAt: args['run-at'] === undefined ? undefined : parseRunAt(args['run-at']),
    maxRetries: args['max-retries'],
    key: args.key,
    // prepareJob checks these words, as it does the library's
    keyScope: args['key-scope'] as KeyScope | undefined,
    keyTtlSeconds: args['key-ttl'],
    dependsOn: args['depends-on'],
    onParentFailure: args['on-parent-failure'] as OnParentFailure | undefined,
  };
  return (clock) => [prepareJob(request, clock, limitsOf(config))];
}

/** `--depends-on 3,4` (or the option given again): positive integers; whether those jobs exist, the insert checks. */
function parseDependsOn(raw: unknown): number[] {
  const words = (Array.isArray(raw) ? raw : [raw]).flatMap((value) => String(value).split(','));
  return words.map((word) => {
    const id = /^\s*[1-9][0-9]*\s*$/.test(word) ? Number(word) : Number.NaN;
    if (!Number.isSafeInteger(id))
      throw new InvalidInputError(
        'DEPENDS_ON',
        `--depends-on: expected job ids separated by commas, got ${JSON.stringify(String(raw))}`,
      );
    return id;
  });
}

/**
 * The jobs of one transaction of a bulk file, as jobInsert takes a batch: a
 * `depends_on` ref to a line of an earlier chunk becomes the id that line was
 * given; one to a line of this chunk, that line's place in it.
 */
function chunkOf(jobs: readonly NewJob[], start: number, inserted: readonly InsertedJob[]): NewJob[] {
  return jobs.slice(start, start + BULK_CHUNK).map((job) => {
    const indexes = job.parentIndexes;
    if (indexes === undefined || start === 0) return job;
    const earlier = indexes.filter((at) => at < start).map((at) => inserted[at]!.id);
    return {
      ...job,
      parentIds: [...(job.parentIds ?? []), ...earlier],
      parentIndexes: indexes.filter((at) => at >= start).map((at) => at - start),
    };
  });
}

/** The jobs of the file's lines, prepared on a clock. */
function bulkJobs(args: EnqueueArgs, config: LeaseholdConfig | undefined): (clock: Clock) => NewJob[] {
  const single = (['class', 'stdin', ...ONE_JOB_OPTIONS] as const).filter((name) => args[name] !== undefined);
  if (single.length > 0) {
    throw new InvalidInputError(
      'USAGE',
      `--file takes every field from its lines: drop ${single.map((name) => (name === 'class' ? 'the class' : name === 'stdin' ? '-' : `--${name}`)).join(', ')}`,
    );
  }
  const file = args.file as string;
  const text = readText(file, 'jobs file');
  const where = (line: number) => `${isStdin(file) ? 'stdin' : file} line ${line}`;
  const requests: EnqueueRequest[] = [];
  const lines: number[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (line === '') return;
    try {
      requests.push(lineRequest(line, config, args['allow-unknown-class']));
      lines.push(index + 1);
    } catch (error) {
      if (error instanceof InvalidInputError)
        throw new InvalidInputError(error.code.split(':')[1] ?? 'LINE', `${where(index + 1)}: ${error.message}`);
      throw error;
    }
  });
  // As one batch: a line's depends_on may name the ref of an earlier line.
  return (clock) => prepareJobs(requests, clock, limitsOf(config), (index) => where(lines[index]!));
}

/** A line as the library's request; prepareJobs checks its values. */
function lineRequest(line: string, config: LeaseholdConfig | undefined, allowUnknown: boolean): EnqueueRequest {
  const value = parseJson(line, 'line');
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new InvalidInputError('LINE', 'expected a JSON object with class and payload');
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => !(LINE_FIELDS as readonly string[]).includes(key));
  if (unknown.length > 0)
    throw new InvalidInputError(
      'LINE',
      `unknown field ${JSON.stringify(unknown[0])} (expected ${LINE_FIELDS.join(', ')})`,
    );
  if (typeof fields.class !== 'string') throw new InvalidInputError('CLASS', 'class must be a string');
  checkClass(fields.class, config, allowUnknown);
  const typed = <T>(name: string, type: 'number' | 'string'): T | undefined => {
    const field = fields[name];
    if (field === undefined || field === null) return undefined;
    if (typeof field !== type)
      throw new InvalidInputError(name.toUpperCase(), `${name} must be a ${type}, got ${JSON.stringify(field)}`);
    return field as T;
  };
  return {
    class: fields.class,
    payload: fields.payload ?? null,
    priority: typed<number>('priority', 'number'),
    delay: typed<number>('delay', 'number'),
    maxRetries: typed<number>('max_retries', 'number'),
    key: typed<string>('key', 'string'),
    keyScope: typed<KeyScope>('key_scope', 'string'),
    keyTtlSeconds: typed<number>('key_ttl', 'number'),
    ref: typed<string>('ref', 'string'),
    // an array of ids and refs, checked by prepareJobs
    dependsOn: (fields.depends_on ?? undefined) as EnqueueRequest['dependsOn'],
    onParentFailure: typed<OnParentFailure>('on_parent_failure', 'string'),
  };
}

/** The payload cap comes from the config; a job without max_retries takes its class's when claimed, from the claiming child's config. */
function limitsOf(config: LeaseholdConfig | undefined): EnqueueLimits {
  return { payloadLimitBytes: config?.payload_limit_bytes ?? DEFAULT_PAYLOAD_LIMIT_BYTES };
}

function checkClass(name: string, config: LeaseholdConfig | undefined, allowUnknown: boolean): void {
  if (!allowUnknown && classConfig(config, name) === undefined)
    throw unknownClassError(name, config, { allowFlag: '--allow-unknown-class' });
}

function readPayloadArg(value: string): string {
  return isStdin(value) ? readText('-', 'payload') : value;
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(isStdin(file) ? 0 : file, 'utf8');
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EACCES'
          ? 'permission denied'
          : code === 'EISDIR'
            ? 'it is a folder'
            : (error as Error).message;
    throw new InvalidInputError('FILE', `cannot read the ${what} ${isStdin(file) ? 'from stdin' : file}: ${why}`);
  }
}

function parseJson(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(
      what === 'payload' ? 'PAYLOAD' : 'LINE',
      `${what === 'payload' ? 'payload is not JSON' : 'not JSON'}: ${(error as Error).message}`,
    );
  }
}

function parseRunAt(text: string): number {
  const at = /^\d{4}-\d{2}-\d{2}/.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(at))
    throw new InvalidInputError(
      'RUN_AT',
      `--run-at must be an ISO 8601 time such as 2026-01-31T09:00:00Z, got ${JSON.stringify(text)}`,
    );
  return at;
}

/** A bar on stderr while a bulk file is written, only when stderr is a terminal. */
class ProgressBar {
  private readonly enabled = process.stderr.isTTY === true;
  private lastDrawn = -1;

  constructor(private readonly total: number) {}

  update(done: number): void {
    if (!this.enabled || this.total === 0) return;
    const width = 30;
    const filled = Math.round((done / this.total) * width);
    if (filled === this.lastDrawn && done !== this.total) return;
    this.lastDrawn = filled;
    process.stderr.write(`\r[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${done}/${this.total}`);
  }

  done(): void {
    if (this.enabled && this.total > 0) process.stderr.write('\n');
  }
}
