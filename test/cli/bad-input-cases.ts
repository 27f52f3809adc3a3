/**
 * The bad command lines of bad-input.test.ts, each with the one line on
 * stderr it must get, and its standard input when it reads one.
 */
import { join } from 'node:path';

/** (the copy's path) -> the arguments; each case runs on its own copy of the database. */
export type Args = (db: string) => string[];

export type BadInputCase = [name: string, args: Args, message: RegExp, input?: string];

/** Where the test's files are: set before any case runs. */
export interface CaseFiles {
  configFile: string;
  dir: string;
}

/** Arguments that name the test's config (and the copy's database), or the copy's database alone. */
export function caseArgs(where: CaseFiles) {
  return {
    withConfig:
      (...rest: string[]): Args =>
      (db) => ['--config', where.configFile, '--db', db, ...rest],
    withDb:
      (...rest: string[]): Args =>
      (db) => ['--db', db, ...rest],
    inDir: (name: string) => join(where.dir, name),
  };
}

export function badInputCases(where: CaseFiles): BadInputCase[] {
  const { withConfig, withDb, inDir } = caseArgs(where);
  return [
    ['unknown command', withConfig('frobnicate'), /^leasehold: Unknown command: frobnicate$/],
    [
      'no command',
      withConfig(),
      /^leasehold: give a command: enqueue, show, logs, list, stats, workers, schedules, cancel, retry, pause, resume, prune, sweep, migrate, reload or dashboard$/,
    ],
    ['unknown flag', withConfig('list', '--colour', 'red'), /^leasehold: Unknown argument: colour$/],
    [
      'unknown flag on enqueue (a typo)',
      withConfig('enqueue', 'ok', '--paylod', '{}'),
      /^leasehold: Unknown argument: paylod$/,
    ],
    [
      'payload that is not JSON',
      withConfig('enqueue', 'ok', '--payload', '{"to":'),
      /^leasehold: payload is not JSON: .+$/,
    ],
    [
      'payload on stdin that is not JSON',
      withConfig('enqueue', 'ok', '-'),
      /^leasehold: payload is not JSON: .+$/,
      'not json',
    ],
    [
      'payload file that does not exist',
      withConfig('enqueue', 'ok', '--payload-file', '/nonexistent/p.json'),
      /^leasehold: cannot read the payload file \/nonexistent\/p\.json: no such file$/,
    ],
    [
      'payload over the size cap',
      (db) => withConfig('enqueue', 'ok', '--payload-file', inDir('big.json'))(db),
      /^leasehold: payload is \d+ bytes, over the 1048576-byte limit$/,
    ],
    [
      'two payloads',
      withConfig('enqueue', 'ok', '--payload', '{}', '--payload-file', '/dev/null'),
      /^leasehold: give one payload: --payload, --payload-file or - \(stdin\)$/,
    ],
    [
      '--delay and --run-at',
      withConfig('enqueue', 'ok', '--delay', '5', '--run-at', '2030-01-01T00:00:00Z'),
      /^leasehold: give --delay or --run-at, not both$/,
    ],
    [
      '--run-at that is not a time',
      withConfig('enqueue', 'ok', '--run-at', 'tomorrow'),
      /^leasehold: --run-at must be an ISO 8601 time such as .+, got "tomorrow"$/,
    ],
    [
      'a priority that is not a number',
      withConfig('enqueue', 'ok', '--priority', 'high'),
      /^leasehold: --priority: expected an integer from -1000000 to 1000000, got "high"$/,
    ],
    [
      'a priority in hex',
      withConfig('enqueue', 'ok', '--priority', '0x10'),
      /^leasehold: --priority: expected an integer from -1000000 to 1000000, got "0x10"$/,
    ],
    [
      'a delay that is not a number',
      withConfig('enqueue', 'ok', '--delay', 'abc'),
      /^leasehold: --delay: expected a number >= 0, got "abc"$/,
    ],
    [
      'a negative delay',
      withConfig('enqueue', 'ok', '--delay=-5'),
      /^leasehold: --delay: expected a number >= 0, got "-5"$/,
    ],
    [
      '--max-retries that is not a number',
      withConfig('enqueue', 'ok', '--max-retries', 'abc'),
      /^leasehold: --max-retries: expected an integer >= 0, got "abc"$/,
    ],
    [
      'a fractional --max-retries',
      withConfig('enqueue', 'ok', '--max-retries', '1.5'),
      /^leasehold: --max-retries: expected an integer >= 0, got "1\.5"$/,
    ],
    [
      'enqueue without a class',
      withConfig('enqueue', '--payload', '{}'),
      /^leasehold: give a class \(enqueue <class>\) or --file jobs\.jsonl$/,
    ],
    [
      'unknown class',
      withConfig('enqueue', 'nosuch', '--payload', '{}'),
      /^leasehold: unknown class "nosuch" \(.*queue\.yaml has ok\); pass --allow-unknown-class to enqueue it anyway$/,
    ],
    [
      'unknown class, no config to check it',
      withDb('enqueue', 'ok', '--payload', '{}'),
      /^leasehold: unknown class "ok": there is no config to check it against \(give --config, or --allow-unknown-class\)$/,
    ],
    [
      'bulk file with an unknown class on line 3',
      (db) => withConfig('enqueue', '--file', inDir('bad-line.jsonl'))(db),
      /^leasehold: .*bad-line\.jsonl line 3: unknown class "nosuch" .+$/,
    ],
    [
      'bulk file with a line that is not JSON',
      (db) => withConfig('enqueue', '--file', inDir('not-json-line.jsonl'))(db),
      /^leasehold: .*not-json-line\.jsonl line 2: not JSON: .+$/,
    ],
    [
      'bulk file with a field of the wrong type',
      (db) => withConfig('enqueue', '--file', inDir('bad-field-line.jsonl'))(db),
      /^leasehold: .*bad-field-line\.jsonl line 2: priority must be a number, got "high"$/,
    ],
    [
      'bulk file with a depends_on ref that no earlier line has',
      (db) => withConfig('enqueue', '--file', inDir('bad-ref-line.jsonl'))(db),
      /^leasehold: .*bad-ref-line\.jsonl line 2: dependsOn names ref "frist", which no earlier job of this batch has$/,
    ],
    [
      'bulk file and --depends-on',
      (db) => withConfig('enqueue', '--file', inDir('bad-ref-line.jsonl'), '--depends-on', '1')(db),
      /^leasehold: --file takes every field from its lines: drop --depends-on$/,
    ],
    [
      '--depends-on that is not a list of ids',
      withConfig('enqueue', 'ok', '--depends-on', '1,two'),
      /^leasehold: --depends-on: expected job ids separated by commas, got "1,two"$/,
    ],
    [
      '--depends-on a job that does not exist',
      withConfig('enqueue', 'ok', '--depends-on', '1,9999'),
      /^leasehold: job 9999 does not exist$/,
    ],
    [
      'an --on-parent-failure that is neither cancel nor run',
      withConfig('enqueue', 'ok', '--depends-on', '1', '--on-parent-failure', 'ignore'),
      /^leasehold: the parent failure policy must be cancel or run, got "ignore"$/,
    ],
    [
      'a --key-scope without a key',
      withConfig('enqueue', 'ok', '--key-scope', 'incomplete'),
      /^leasehold: a key scope or lifetime needs a key$/,
    ],
    [
      'a --key-scope that is neither row nor incomplete',
      withConfig('enqueue', 'ok', '--key', 'k', '--key-scope', 'forever'),
      /^leasehold: the key scope must be row or incomplete, got "forever"$/,
    ],
    [
      'a --key-ttl of 0',
      withConfig('enqueue', 'ok', '--key', 'k', '--key-ttl', '0'),
      /^leasehold: --key-ttl: expected a number > 0, got "0"$/,
    ],
    [
      'bulk file and a class',
      (db) => withConfig('enqueue', 'ok', '--file', inDir('bad-line.jsonl'))(db),
      /^leasehold: --file takes every field from its lines: drop the class$/,
    ],
    [
      'pause of an unknown class',
      withConfig('pause', 'oj'),
      /^leasehold: unknown class "oj": no config or supervisor has named it \(did you mean "ok"\?\)$/,
    ],
    [
      'resume of an unknown class',
      withConfig('resume', 'nosuch'),
      /^leasehold: unknown class "nosuch": no config or supervisor has named it$/,
    ],
    [
      'pause, without a config, of a class no supervisor has served',
      withDb('pause', 'nosuch'),
      /^leasehold: unknown class "nosuch": no config or supervisor has named it$/,
    ],
    ['id that is not a number', withConfig('show', 'abc'), /^leasehold: job id must be a positive integer, got "abc"$/],
    ['id zero', withConfig('cancel', '0'), /^leasehold: job id must be a positive integer, got "0"$/],
    ['negative id', withConfig('retry', '-3'), /^leasehold: job id must be a positive integer, got "-3"$/],
    ['fractional id', withConfig('show', '1.5'), /^leasehold: job id must be a positive integer, got "1\.5"$/],
    ['hex id', withConfig('cancel', '0x1'), /^leasehold: job id must be a positive integer, got "0x1"$/],
    ['id that does not exist: show', withConfig('show', '9999'), /^leasehold: job 9999 not found$/],
    ['id that does not exist: cancel', withConfig('cancel', '9999'), /^leasehold: job 9999 not found$/],
    ['id that does not exist: retry', withConfig('retry', '9999'), /^leasehold: job 9999 not found$/],
    [
      'retry with neither an id nor --status',
      withConfig('retry'),
      /^leasehold: give a job id, or --status FAILED \[--class C\] \[--error-code E\]$/,
    ],
    [
      'retry with an id and --error-code',
      withConfig('retry', '1', '--error-code', 'X:Y'),
      /^leasehold: give a job id, or --status FAILED \[--class C\] \[--error-code E\], not both$/,
    ],
    [
      'retry with an empty --error-code',
      withConfig('retry', '--status', 'FAILED', '--error-code', ''),
      /^leasehold: --error-code must not be empty$/,
    ],
    [
      'list with an unknown status',
      withConfig('list', '--status', 'DONE'),
      /^leasehold: --status must be one of WAITING, QUEUED, CLAIMED, RUNNING, SUCCEEDED, FAILED, CANCELLED, got "DONE"$/,
    ],
    [
      'list with --limit 0',
      withConfig('list', '--limit', '0'),
      /^leasehold: --limit: expected an integer from 1 to 10000, got "0"$/,
    ],
    [
      'list with a --limit that is not a number',
      withConfig('list', '--limit', 'abc'),
      /^leasehold: --limit: expected an integer from 1 to 10000, got "abc"$/,
    ],
    [
      'list with an empty --limit',
      withConfig('list', '--limit', ''),
      /^leasehold: --limit: expected an integer from 1 to 10000, got ""$/,
    ],
    [
      'list of an unknown class',
      withConfig('list', '--class', 'nosuch'),
      /^leasehold: --class: unknown class "nosuch" \(.*queue\.yaml has ok\)$/,
    ],
    [
      'list of a class the database has never seen, no config',
      withDb('list', '--class', 'nosuch'),
      /^leasehold: --class: unknown class "nosuch": no job of it in the database, and there is no config to check it against \(give --config\)$/,
    ],
    [
      'retry of an unknown class',
      withConfig('retry', '--status', 'FAILED', '--class', 'nosuch'),
      /^leasehold: --class: unknown class "nosuch" \(.*queue\.yaml has ok\)$/,
    ],
    [
      'retry of a class the database has never seen, no config',
      withDb('retry', '--status', 'FAILED', '--class', 'nosuch'),
      /^leasehold: --class: unknown class "nosuch": no job of it in the database, and there is no config to check it against \(give --config\)$/,
    ],
    [
      'stats with --hours that is not a number',
      withConfig('stats', '--hours', 'abc'),
      /^leasehold: --hours: expected a number > 0, got "abc"$/,
    ],
    [
      'stats with --hours 0',
      withConfig('stats', '--hours', '0'),
      /^leasehold: --hours: expected a number > 0, got "0"$/,
    ],
    [
      'stats with a --limit that is not a number',
      withConfig('stats', '--limit', 'abc'),
      /^leasehold: --limit: expected an integer from 1 to 1000, got "abc"$/,
    ],
    [
      'workers with a --limit that is not a number',
      withConfig('workers', '--limit', 'abc'),
      /^leasehold: --limit: expected an integer from 1 to 10000, got "abc"$/,
    ],
    [
      'dashboard with a --port that is not a number',
      withConfig('dashboard', '--port', 'abc'),
      /^leasehold: --port: expected an integer from 0 to 65535, got "abc"$/,
    ],
    [
      'reload with a --timeout that is not a number',
      withConfig('reload', '--timeout', 'abc'),
      /^leasehold: --timeout: expected an integer from 1 to 3600, got "abc"$/,
    ],
    [
      'reload of a config whose handler does not exist (checked as start-up checks it, before any signal)',
      (db) => ['--config', inDir('typo-handler.yaml'), '--db', db, 'reload'],
      /^leasehold: .*typo-handler\.yaml: classes\[0\]\.handler: class ok: no such file .*\/typo\.mjs$/,
    ],
    [
      'a numeric option given twice',
      withConfig('list', '--limit', '5', '--limit', '6'),
      /^leasehold: --limit: given more than once$/,
    ],
    [
      'config that does not exist',
      (db) => ['--config', inDir('missing.yaml'), '--db', db, 'list'],
      /^leasehold: .*missing\.yaml: cannot read the config file: no such file$/,
    ],
    [
      'config that is a folder',
      (db) => ['--config', inDir('folder.yaml'), '--db', db, 'stats'],
      /^leasehold: .*folder\.yaml: cannot read the config file: it is a folder, not a file$/,
    ],
    [
      'config that is not YAML',
      (db) => ['--config', inDir('not-yaml.yaml'), '--db', db, 'enqueue', 'ok'],
      /^leasehold: .*not-yaml\.yaml:\d+:\d+: YAML syntax error: .+$/,
    ],
    [
      'config with a bad field',
      (db) => ['--config', inDir('bad-field.yaml'), '--db', db, 'enqueue', 'ok'],
      /^leasehold: .*bad-field\.yaml: classes\[0\]\.lease_seconds: expected a number > 0, got "soon"$/,
    ],
    [
      'config with a negative lease (one line: no derived heartbeat error)',
      (db) => ['--config', inDir('negative-lease.yaml'), '--db', db, 'list'],
      /^leasehold: .*negative-lease\.yaml: classes\[0\]\.lease_seconds: expected a number > 0, got -1$/,
    ],
    [
      'config with a negative backoff max (one line: no derived backoff error)',
      (db) => ['--config', inDir('negative-backoff.yaml'), '--db', db, 'list'],
      /^leasehold: .*negative-backoff\.yaml: classes\[0\]\.backoff\.max_seconds: expected a number > 0, got -1$/,
    ],
  ];
}
