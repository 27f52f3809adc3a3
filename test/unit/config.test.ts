import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { resolveHost } from '../../src/config/host.js';
import { formatPath, loadConfig, parseConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { tempDir } from '../helpers/temp.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const MINIMAL = `
database: ./q.db
classes:
  - name: a
    handler: ./a.js
`;

/** The ConfigError that parsing `text` throws. */
function problemsOf(text: string, file = 'queue.yaml'): ConfigError {
  try {
    parseConfig(text, file);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

const newDir = tempDir('leasehold-config-');

describe('loadConfig', () => {
  it('loads config.example.yaml, whose handlers exist', () => {
    const config = loadConfig(path.join(repoRoot, 'config.example.yaml'));
    expect(config.file).toBe(path.join(repoRoot, 'config.example.yaml'));
    expect(config.database).toBe(path.join(repoRoot, 'data/queue.db'));
    expect(config.log.file).toBe(path.join(repoRoot, 'logs/supervisor.log'));
    expect(config.http).toEqual({ port: 9464, host: '127.0.0.1', dashboard: true });
    expect(config.classes.map((cls) => cls.name)).toEqual(['email', 'flaky', 'report']);
    for (const cls of config.classes) {
      expect(path.isAbsolute(cls.handler)).toBe(true);
      expect(fs.existsSync(cls.handler), cls.handler).toBe(true);
    }
  });

  it('applies every default', () => {
    const config = parseConfig(MINIMAL, '/etc/leasehold/queue.yaml');
    expect(config).toEqual({
      file: '/etc/leasehold/queue.yaml',
      database: '/etc/leasehold/q.db',
      host: null,
      log: { level: 'info', file: null, max_size_mb: 10, max_files: 5 },
      sweeper: { interval_seconds: 10, batch_size: 100 },
      retention: { succeeded_days: 30, failed_days: 90, cancelled_days: 30, batch_size: 5000, interval_seconds: 300 },
      http: null,
      shutdown_grace_seconds: 30,
      statement_timeout_seconds: 30,
      payload_limit_bytes: 1048576,
      result_limit_bytes: 1048576,
      middleware: [],
      classes: [
        {
          name: 'a',
          handler: '/etc/leasehold/a.js',
          processes: 1,
          concurrency: 1,
          lease_seconds: 30,
          heartbeat_seconds: 10,
          max_runtime_seconds: 300,
          middleware: [],
          kill_grace_seconds: 5,
          max_retries: 5,
          backoff: { base_seconds: 1, max_seconds: 300, jitter: true },
          max_memory_mb: 512,
          restart: { max_restarts: 5, within_seconds: 60 },
          claim_batch: 64,
          poll_seconds: 0.5,
          schedules: [],
        },
      ],
    });
  });

  it('holds 64 jobs a child by default with one slot, 16 or twice the slots with several, and what the config says when it says', () => {
    const config = parseConfig(
      'database: q.db\nclasses:\n  - { name: a, handler: a.js }\n  - { name: b, handler: b.js, concurrency: 4 }\n  - { name: c, handler: c.js, claim_batch: 3 }\n  - { name: d, handler: d.js, concurrency: 20 }\n',
      '/tmp/queue.yaml',
    );
    expect(config.classes.map((c) => c.claim_batch)).toEqual([64, 16, 3, 40]);
  });

  it('derives the heartbeat from the lease when it is not given, and lets max_restarts be 0', () => {
    const config = parseConfig(
      'database: q.db\nclasses:\n  - { name: a, handler: a.js, lease_seconds: 6, restart: { max_restarts: 0 } }\n  - { name: b, handler: b.js, lease_seconds: 60 }\n',
      '/tmp/queue.yaml',
    );
    expect(config.classes.map((c) => c.heartbeat_seconds)).toEqual([2, 10]);
    expect(config.classes[0]?.restart.max_restarts).toBe(0);
  });

  it('fills defaults inside partly given sections, and accepts fractional seconds', () => {
    const config = parseConfig(
      `
database: postgres://u@db.example/queue
http: { port: 0 }
sweeper: { interval_seconds: 0.5 }
classes:
  - name: fast
    handler: /opt/h.js
    lease_seconds: 2
    heartbeat_seconds: 0.5
    backoff: { base_seconds: 0.1 }
`,
      'queue.yaml',
    );
    expect(config.database).toBe('postgres://u@db.example/queue');
    expect(config.http).toEqual({ port: 0, host: '127.0.0.1', dashboard: false });
    expect(config.sweeper).toEqual({ interval_seconds: 0.5, batch_size: 100 });
    expect(config.classes[0]?.handler).toBe('/opt/h.js');
    expect(config.classes[0]?.backoff).toEqual({ base_seconds: 0.1, max_seconds: 300, jitter: true });
  });

  it('rejects an unknown key at the top level, naming it', () => {
    const error = problemsOf(`${MINIMAL}\nsweep: { interval_seconds: 1 }\n`);
    expect(error.code).toBe('CONFIG:INVALID');
    expect(error.message).toBe('queue.yaml: (top level): unknown key "sweep" (did you mean "sweeper"?)');
  });

  it('rejects an unknown key inside classes[1], naming the path and the key', () => {
    const error = problemsOf(`${MINIMAL}  - name: b\n    handler: ./b.js\n    lease_secs: 20\n`);
    expect(error.message).toBe('queue.yaml: classes[1]: unknown key "lease_secs" (did you mean "lease_seconds"?)');
  });

  it('rejects an unknown key in a nested section', () => {
    const error = problemsOf(`${MINIMAL}    backoff: { base: 1 }\n`);
    expect(error.message).toBe('queue.yaml: classes[0].backoff: unknown key "base" (did you mean "base_seconds"?)');
  });

  it('suggests the key meant for a misspelt one, in each section, and none when no key is near', () => {
    expect(problemsOf(`${MINIMAL}    procesess: 2\n`).message).toBe(
      'queue.yaml: classes[0]: unknown key "procesess" (did you mean "processes"?)',
    );
    expect(problemsOf(`${MINIMAL}log: { levle: debug }\n`).message).toBe(
      'queue.yaml: log: unknown key "levle" (did you mean "level"?)',
    );
    expect(problemsOf(`${MINIMAL}    schedules: [{ name: n, cron: '* * * * *', timezon: UTC }]\n`).message).toBe(
      'queue.yaml: classes[0].schedules[0]: unknown key "timezon" (did you mean "timezone"?)',
    );
    expect(problemsOf(`${MINIMAL}    colour: blue\n    max_retires: 2\n`).message).toBe(
      'queue.yaml: classes[0]: unknown keys "colour", "max_retires" (did you mean "max_retries"?)',
    );
  });

  it('names the file, the field path and the expectation for a wrong type', () => {
    const error = problemsOf(
      `${MINIMAL}  - name: b\n    handler: ./b.js\n    lease_seconds: "abc"\n`,
      '/srv/queue.yaml',
    );
    expect(error.message).toBe('/srv/queue.yaml: classes[1].lease_seconds: expected a number > 0, got "abc"');
  });

  it('reports every problem, one line each', () => {
    const error = problemsOf(`
database: ./q.db
log: { level: loud }
classes:
  - name: a
    handler: ./a.js
    processes: 1.5
    max_retries: -1
`);
    expect(error.problems).toEqual([
      'queue.yaml: log.level: expected one of error, warn, info, debug, got "loud"',
      'queue.yaml: classes[0].processes: expected an integer > 0, got 1.5',
      'queue.yaml: classes[0].max_retries: expected an integer >= 0, got -1',
    ]);
    expect(error.message.split('\n')).toHaveLength(3);
  });

  it('takes a rate limit (none by default), and rejects one of 0, naming the field', () => {
    expect(parseConfig(MINIMAL, 'queue.yaml').classes[0]?.rate_limit).toBeUndefined();
    const config = parseConfig(`${MINIMAL}    rate_limit: { max: 10, per_seconds: 0.5 }\n`, 'queue.yaml');
    expect(config.classes[0]?.rate_limit).toEqual({ max: 10, per_seconds: 0.5 });
    expect(problemsOf(`${MINIMAL}    rate_limit: { max: 0, per_seconds: 1 }\n`).message).toBe(
      'queue.yaml: classes[0].rate_limit.max: expected an integer > 0, got 0',
    );
    expect(problemsOf(`${MINIMAL}    rate_limit: { max: 5, per_seconds: 0 }\n`).message).toBe(
      'queue.yaml: classes[0].rate_limit.per_seconds: expected a number > 0, got 0',
    );
    expect(problemsOf(`${MINIMAL}    rate_limit: { max: 5 }\n`).message).toBe(
      'queue.yaml: classes[0].rate_limit.per_seconds: missing, expected a number > 0',
    );
    expect(problemsOf(`${MINIMAL}    rate_limit: { max: 5, per: 1 }\n`).problems).toContain(
      'queue.yaml: classes[0].rate_limit: unknown key "per" (did you mean "per_seconds"?)',
    );
  });

  it('rejects a heartbeat that is not well under the lease', () => {
    const error = problemsOf(`${MINIMAL}    lease_seconds: 2\n    heartbeat_seconds: 1.5\n`);
    expect(error.message).toMatch(
      /^queue\.yaml: classes\[0\]\.heartbeat_seconds: expected at most lease_seconds \/ 2 = 1 .*got 1\.5$/,
    );
  });

  it('rejects backoff.max_seconds below backoff.base_seconds', () => {
    const error = problemsOf(`${MINIMAL}    backoff: { base_seconds: 10, max_seconds: 5 }\n`);
    expect(error.message).toMatch(
      /^queue\.yaml: classes\[0\]\.backoff\.max_seconds: expected at least backoff\.base_seconds = 10, got 5$/,
    );
  });

  it('rejects a duplicate class name, naming both indexes', () => {
    const error = problemsOf(`${MINIMAL}  - name: b\n    handler: ./b.js\n  - name: a\n    handler: ./c.js\n`);
    expect(error.message).toBe('queue.yaml: classes[2].name: duplicate class name "a" (also classes[0].name)');
  });

  it('rejects a class name that is not a simple identifier', () => {
    const error = problemsOf(`database: x\nclasses: [{ name: "send email", handler: ./h.js }]\n`);
    expect(error.message).toMatch(/^queue\.yaml: classes\[0\]\.name: expected a class name .*got "send email"$/);
  });

  it('requires database, and at least one class', () => {
    const error = problemsOf('classes: []\n');
    expect(error.problems).toEqual([
      'queue.yaml: database: missing, expected a SQLite file path or a postgres:// URL',
      'queue.yaml: classes: expected at least one class, got []',
    ]);
  });

  it('requires an http port when http is given', () => {
    expect(problemsOf(`${MINIMAL}http: { host: 0.0.0.0 }\n`).message).toBe(
      'queue.yaml: http.port: missing, expected an integer from 0 to 65535',
    );
    expect(problemsOf(`${MINIMAL}http: { port: 70000 }\n`).message).toBe(
      'queue.yaml: http.port: expected an integer from 0 to 65535, got 70000',
    );
  });

  it('takes http.dashboard as true or false', () => {
    expect(parseConfig(`${MINIMAL}http: { port: 0, dashboard: true }\n`, 'queue.yaml').http).toEqual({
      port: 0,
      host: '127.0.0.1',
      dashboard: true,
    });
    expect(problemsOf(`${MINIMAL}http: { port: 0, dashboard: yes please }\n`).message).toBe(
      'queue.yaml: http.dashboard: expected true or false, got "yes please"',
    );
  });

  it('reports a YAML syntax error with file, line and column', () => {
    const error = problemsOf('database: ./q.db\nclasses:\n  - name: a\n    handler: [./a.js\n', 'bad.yaml');
    expect(error.message).toMatch(/^bad\.yaml:\d+:\d+: YAML syntax error: /);
    expect(error.message.split('\n')).toHaveLength(1);
  });

  it('reports an empty file', () => {
    expect(problemsOf('', 'empty.yaml').message).toBe(
      'empty.yaml: the file is empty, expected a mapping with database and classes',
    );
  });

  it('reports a missing file as a ConfigError', () => {
    const missing = path.join(newDir(), 'nope.yaml');
    expect(() => loadConfig(missing)).toThrow(ConfigError);
    expect(() => loadConfig(missing)).toThrow(`${missing}: cannot read the config file: no such file`);
  });

  it("resolves relative paths against the config file's folder, not the working directory", () => {
    const dir = newDir();
    fs.mkdirSync(path.join(dir, 'conf'));
    const file = path.join(dir, 'conf', 'queue.yaml');
    fs.writeFileSync(
      file,
      `
database: ../data/q.db
log: { file: logs/s.log }
classes:
  - name: a
    handler: ./handlers/a.js
  - name: b
    handler: /abs/b.js
`,
    );
    const config = loadConfig(file);
    expect(config.database).toBe(path.join(dir, 'data', 'q.db'));
    expect(config.log.file).toBe(path.join(dir, 'conf', 'logs', 's.log'));
    expect(config.classes[0]?.handler).toBe(path.join(dir, 'conf', 'handlers', 'a.js'));
    expect(config.classes[1]?.handler).toBe('/abs/b.js');
  });

  it('returns a deeply frozen object', () => {
    const config = parseConfig(MINIMAL, 'queue.yaml');
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.log)).toBe(true);
    expect(Object.isFrozen(config.classes)).toBe(true);
    expect(Object.isFrozen(config.classes[0])).toBe(true);
    expect(Object.isFrozen(config.classes[0]?.backoff)).toBe(true);
    expect(() => {
      (config as { database: string }).database = 'x';
    }).toThrow(TypeError);
  });
});

describe('schedules', () => {
  const withSchedules = (lines: string) => `${MINIMAL}    schedules:\n${lines}`;

  it('reads a schedule with its defaults: UTC, an empty payload, catch_up latest, priority 0', () => {
    const config = parseConfig(
      withSchedules(
        '      - { name: nightly, cron: "0 3 * * *" }\n      - { name: tick, cron: "*/5 * * * * *", timezone: Europe/Berlin, payload: { a: 1 }, catch_up: all, priority: 7 }\n',
      ),
      'queue.yaml',
    );
    expect(config.classes[0]!.schedules).toEqual([
      { name: 'nightly', cron: '0 3 * * *', timezone: 'UTC', payload: {}, catch_up: 'latest', priority: 0 },
      {
        name: 'tick',
        cron: '*/5 * * * * *',
        timezone: 'Europe/Berlin',
        payload: { a: 1 },
        catch_up: 'all',
        priority: 7,
      },
    ]);
  });

  it("names the field of a bad cron expression, with croner's reason, in one line", () => {
    const error = problemsOf(
      withSchedules('      - { name: ok, cron: "* * * * *" }\n      - { name: bad, cron: "61 * * * *" }\n'),
    );
    expect(error.message).toBe(
      'queue.yaml: classes[0].schedules[1].cron: expected a cron expression, got "61 * * * *": Invalid value for minute: 61',
    );
    expect(problemsOf(withSchedules('      - { name: short, cron: "* * *" }\n')).message).toMatch(
      /^queue\.yaml: classes\[0\]\.schedules\[0\]\.cron: expected a cron expression, got "\* \* \*": .*parts are required\.$/,
    );
    expect(problemsOf(withSchedules('      - { name: never, cron: "0 0 31 2 *" }\n')).message).toBe(
      'queue.yaml: classes[0].schedules[0].cron: expected a cron expression, got "0 0 31 2 *": it matches no time',
    );
  });

  it('names the field of an unknown time zone', () => {
    const error = problemsOf(withSchedules('      - { name: x, cron: "* * * * *", timezone: Mars/Olympus }\n'));
    expect(error.message).toBe(
      'queue.yaml: classes[0].schedules[0].timezone: expected an IANA time zone such as "Europe/Berlin" or "UTC", got "Mars/Olympus"',
    );
  });

  it('rejects a duplicate schedule name within a class, an unknown catch_up, and a payload over the limit', () => {
    expect(
      problemsOf(withSchedules('      - { name: x, cron: "* * * * *" }\n      - { name: x, cron: "0 * * * *" }\n'))
        .message,
    ).toBe('queue.yaml: classes[0].schedules[1].name: duplicate schedule name "x" (also schedules[0].name)');
    expect(problemsOf(withSchedules('      - { name: x, cron: "* * * * *", catch_up: some }\n')).message).toBe(
      'queue.yaml: classes[0].schedules[0].catch_up: expected one of latest, all, none, got "some"',
    );
    expect(
      problemsOf(
        `payload_limit_bytes: 10\n${withSchedules('      - { name: x, cron: "* * * * *", payload: { text: "far too long" } }\n')}`,
      ).message,
    ).toBe('queue.yaml: classes[0].schedules[0].payload: payload is 23 bytes, over the 10-byte limit');
  });
});

describe('host identity', () => {
  it('takes host: from the config, and rejects one that would break supervisor and worker ids', () => {
    expect(parseConfig(`host: worker-7.example\n${MINIMAL}`, 'queue.yaml').host).toBe('worker-7.example');
    expect(problemsOf(`host: "a:b"\n${MINIMAL}`).message).toBe(
      'queue.yaml: host: expected a host name without whitespace, ":" or "/", got "a:b"',
    );
    expect(problemsOf(`host: ""\n${MINIMAL}`).message).toMatch(/^queue\.yaml: host: expected a host name/);
  });

  it('LEASEHOLD_HOST wins over the config, which wins over os.hostname()', () => {
    const hostname = () => 'from-os';
    expect(resolveHost({ configured: 'from-config', env: { LEASEHOLD_HOST: 'from-env' }, hostname })).toBe('from-env');
    expect(resolveHost({ configured: 'from-config', env: { LEASEHOLD_HOST: '' }, hostname })).toBe('from-config');
    expect(resolveHost({ configured: null, env: {}, hostname })).toBe('from-os');
    expect(() => resolveHost({ configured: null, env: { LEASEHOLD_HOST: 'pod 1' }, hostname })).toThrow(ConfigError);
    expect(() => resolveHost({ configured: null, env: { LEASEHOLD_HOST: 'a/b' }, hostname })).toThrow(
      /^LEASEHOLD_HOST: expected a host name/,
    );
  });
});

describe('formatPath', () => {
  it('writes zod paths as dotted fields with bracketed indexes', () => {
    expect(formatPath(['classes', 1, 'lease_seconds'])).toBe('classes[1].lease_seconds');
    expect(formatPath(['classes', 0, 'backoff', 'max_seconds'])).toBe('classes[0].backoff.max_seconds');
    expect(formatPath([])).toBe('(top level)');
  });
});
