/**
 * `leasehold logs <id>`: a job's own log lines (ctx.log), per attempt.
 * `leasehold logs`: the supervisor's structured log (the config's log.file),
 * pretty-printed and filtered; `--follow` keeps printing as lines come, as
 * `pm2 logs` does.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidInputError, NotFoundError } from '../../errors.js';
import { formatConsoleLine, type LogRecord } from '../../log.js';
import { logsText } from '../../reports/job-logs.js';
import { isLevel, LogFollower, matches, parseRecord, type LogFilter } from '../../reports/log-follow.js';
import { defineCommand, output, parseId, resolveTarget, withExistingStore, type GlobalArgs } from '../context.js';
import { numberOption } from '../numeric-options.js';

/** How often --follow looks for new lines. */
const FOLLOW_POLL_MS = 200;

interface LogsArgs extends GlobalArgs {
  id?: string;
  follow: boolean;
  class?: string;
  job?: string;
  level?: string;
  lines: number;
  file?: string;
}

export const logsCommand = defineCommand<LogsArgs>({
  command: 'logs [id]',
  describe: "a job's own log lines; without an id, the supervisor's log (filtered, --follow)",
  positionals: { id: { type: 'string', describe: 'a job id: its own log lines (ctx.log), per attempt' } },
  options: {
    follow: { type: 'boolean', default: false, describe: 'keep printing the log as it grows (Ctrl-C stops)' },
    class: { type: 'string', describe: "only this class's lines" },
    job: { type: 'string', describe: "only this job's lines" },
    level: { type: 'string', describe: 'only this level and more severe (error, warn, info, debug)' },
    lines: numberOption(
      'lines',
      { integer: true, min: 0, max: 100_000 },
      { default: 50, describe: 'how many of the last matching lines to print first' },
    ),
    file: { type: 'string', describe: "the supervisor's log file (default: the config's log.file)" },
  },
  run: async (args) => {
    if (args.id !== undefined) {
      const id = parseId(args.id);
      await withExistingStore(args, async ({ store, json }) => {
        if ((await store.jobGet({ id })) === undefined) throw new NotFoundError(`job ${id}`);
        const rows = await store.logList({ jobId: id });
        output(json, { id, logs: rows }, () => logsText(rows));
      });
      return;
    }
    const filter: LogFilter = {
      class: args.class,
      jobId: args.job === undefined ? undefined : parseId(args.job),
      level: parseLevel(args.level),
    };
    await printLog(await logFile(args), filter, args);
  },
});

function parseLevel(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!isLevel(raw))
    throw new InvalidInputError('LEVEL', `--level must be one of error, warn, info, debug, got ${JSON.stringify(raw)}`);
  return raw;
}

async function logFile(args: LogsArgs): Promise<string> {
  if (args.file !== undefined) return args.file;
  if (args.config === undefined)
    throw new InvalidInputError('USAGE', 'give --config queue.yaml (its log.file) or --file PATH');
  const { config } = await resolveTarget(args);
  const file = config?.log.file ?? null;
  if (file === null)
    throw new InvalidInputError(
      'LOG_FILE',
      `${args.config} logs to stdout only (log.file is null): there is no file to read`,
    );
  return file;
}

async function printLog(file: string, filter: LogFilter, args: LogsArgs): Promise<void> {
  if (!existsSync(file))
    throw new InvalidInputError('LOG_FILE', `no log file at ${file} (has the supervisor run with this config?)`);
  const show = (record: LogRecord) =>
    process.stdout.write(`${args.json ? JSON.stringify(record) : formatConsoleLine(record)}\n`);
  const follower = new LogFollower(file);
  const pick = (lines: string[]) =>
    lines.map(parseRecord).filter((r): r is LogRecord => r !== undefined && matches(r, filter));
  try {
    const first = pick(follower.read());
    for (const record of first.slice(Math.max(0, first.length - args.lines))) show(record);
    if (!args.follow) return;
    let stopped = false;
    const stop = () => (stopped = true);
    process.once('SIGINT', stop).once('SIGTERM', stop);
    while (!stopped) {
      for (const record of pick(follower.read())) show(record);
      await sleep(FOLLOW_POLL_MS);
    }
  } finally {
    follower.close();
  }
}
