/** The caps on what a failure keeps: a stack with its cause chain (8 KiB), and an attempt's log lines (200 lines, 64 KiB). */
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { capBytes, errorStack, STACK_MAX_BYTES } from '../../src/errors.js';
import { withoutOwnFrames } from '../../src/stack-frames.js';
import { AttemptLogBuffer, droppedNote, JOB_LOG_CAP, jobLogRows } from '../../src/store/job-logs.js';

describe('errorStack', () => {
  it('keeps the stack and each cause in the chain, and nothing for a value that is not an Error', () => {
    const root = new Error('socket hang up');
    const stack = errorStack(new Error('charge failed', { cause: new Error('HTTP 502', { cause: root }) }))!;
    expect(stack).toMatch(/^Error: charge failed\n\s+at /);
    expect(stack).toContain('\nCaused by: Error: HTTP 502\n');
    expect(stack).toContain('\nCaused by: Error: socket hang up\n');
    expect(errorStack('a string')).toBeUndefined();
  });

  it('follows a looping cause chain a few steps only, and caps a runaway message at 8 KiB', () => {
    const looped = new Error('a');
    looped.cause = looped;
    expect(errorStack(looped)!.split('Caused by:').length).toBe(6);
    const huge = errorStack(new Error('é'.repeat(20_000)))!;
    expect(Buffer.byteLength(huge)).toBeLessThanOrEqual(STACK_MAX_BYTES);
    expect(huge.endsWith('… (cut)')).toBe(true);
    expect(huge).not.toContain('\uFFFD');
    expect(capBytes('short')).toBe('short');
  });
});

describe('withoutOwnFrames', () => {
  const own = (file: string, fn: string) => `    at ${fn} (${new URL(`../../${file}:10:5`, import.meta.url).href})`;
  const handler = '    at charge (file:///srv/handlers/pay.mjs:6:12)';
  const tick = '    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)';

  it("leaves out the run of leasehold's frames below the handler's, node's among them, and counts them", () => {
    const stack = [
      'Error: 402',
      handler,
      own('child/job-run.js', 'JobRun.run'),
      tick,
      own('child/run-loop.js', 'RunLoop.pump'),
    ];
    expect(withoutOwnFrames(stack.join('\n'))).toBe(
      ['Error: 402', handler, "    ... 2 leasehold frames and 1 of node's"].join('\n'),
    );
    expect(withoutOwnFrames(['Error: x', handler, own('child/job-run.js', 'JobRun.run')].join('\n'))).toBe(
      ['Error: x', handler, '    ... 1 leasehold frame'].join('\n'),
    );
    // a plain path, as a CommonJS stack names it
    const plain = `    at RunLoop.pump (${fileURLToPath(new URL('../../child/run-loop.js', import.meta.url))}:3:1)`;
    expect(withoutOwnFrames(['Error: x', handler, plain].join('\n'))).toContain('... 1 leasehold frame');
  });

  it("counts OpenTelemetry's context frames among them when the attempt runs in its span", () => {
    const otel = '    at ContextAPI.with (/srv/app/node_modules/@opentelemetry/api/build/src/api/context.js:51:46)';
    const stack = ['Error: 402', handler, own('child/job-run.js', 'run'), otel, own('src/tracing/spans.js', 'run')];
    expect(withoutOwnFrames(stack.join('\n'))).toBe(
      ['Error: 402', handler, "    ... 2 leasehold frames and 1 of OpenTelemetry's"].join('\n'),
    );
  });

  it("keeps a stack with none of leasehold's frames, or nothing but them (a cause made inside leasehold)", () => {
    const theirs = ['Error: 402', handler, tick].join('\n');
    expect(withoutOwnFrames(theirs)).toBe(theirs);
    const ours = ['LeaseLostError: lease lost', own('child/lease-renewal.js', 'renew')].join('\n');
    expect(withoutOwnFrames(ours)).toBe(ours);
    expect(withoutOwnFrames('Error: no frames')).toBe('Error: no frames');
  });
});

describe('AttemptLogBuffer', () => {
  it('keeps the last lines in order and counts those it dropped past the line cap', () => {
    const buffer = new AttemptLogBuffer();
    for (let n = 1; n <= JOB_LOG_CAP.lines + 5; n++) buffer.add('info', `line ${n}`, n === 1 ? { n } : undefined);
    const { lines, dropped } = buffer.logs();
    expect(dropped).toBe(5);
    expect(lines.map((l) => l.msg)).toEqual(Array.from({ length: JOB_LOG_CAP.lines }, (_, i) => `line ${i + 6}`));
    expect(lines.every((l) => l.fields === null)).toBe(true);
  });

  it('drops the oldest lines past the byte cap, cuts one huge line, and keeps fields as JSON', () => {
    const buffer = new AttemptLogBuffer();
    buffer.add('warn', 'first', { user: 'ada' });
    buffer.add('info', 'x'.repeat(100_000), undefined);
    for (let n = 0; n < 20; n++) buffer.add('info', 'y'.repeat(4000), undefined);
    const { lines, dropped } = buffer.logs();
    const bytes = lines.reduce((sum, l) => sum + l.msg.length + (l.fields?.length ?? 0), 0);
    expect(bytes).toBeLessThanOrEqual(JOB_LOG_CAP.bytes);
    expect(dropped).toBeGreaterThan(0);
    expect(lines.at(-1)!.msg).toBe('y'.repeat(4000));

    const small = new AttemptLogBuffer();
    small.add('warn', 'first', { user: 'ada' });
    small.add('info', 'x'.repeat(100_000), undefined);
    expect(small.logs().lines.map((l) => [l.msg.length, l.fields])).toEqual([
      [5, '{"user":"ada"}'],
      [8 * 1024, null],
    ]);
  });

  it('stores the note first when lines were dropped, numbered in order with the lines', () => {
    const rows = jobLogRows(7, 2, { lines: [{ ts: 5, level: 'info', msg: 'kept', fields: null }], dropped: 3 });
    expect(rows.map((r) => [r.job_id, r.attempt, r.seq, r.level, r.message])).toEqual([
      [7, 2, 0, 'warn', droppedNote(3)],
      [7, 2, 1, 'info', 'kept'],
    ]);
    expect(droppedNote(1)).toMatch(/^1 earlier line was dropped/);
  });
});
