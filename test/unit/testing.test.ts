/**
 * `leasehold/testing`'s runHandler, on the demo handlers (handlers/) as an
 * application's own tests would use it, and on its own rules: the job's
 * defaults, the payload through JSON and through a module's `parse`.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InvalidInputError } from '../../src/errors.js';
import { runHandler, type HandlerModule } from '../../src/testing.js';

const demo = async (name: string) =>
  (await import(new URL(`../../handlers/${name}.js`, import.meta.url).href)) as HandlerModule;

afterEach(() => {
  vi.restoreAllMocks();
});

describe('the demo handlers under runHandler', () => {
  it('email: its result, its three progress steps and its log line', async () => {
    const outcome = await runHandler(await demo('email'), { to: 'a@example.com' }, { id: 7, attempt: 2 });
    expect(outcome).toMatchObject({ ok: true, result: { delivered_to: 'a@example.com', message_id: 'demo-7-2' } });
    expect(outcome.progress).toEqual([
      { step: 'render', done: 1, total: 3 },
      { step: 'connect', done: 2, total: 3 },
      { step: 'send', done: 3, total: 3 },
    ]);
    expect(outcome.logs.map((line) => [line.level, line.msg, line.fields])).toEqual([
      ['info', 'sent to a@example.com', null],
    ]);
  });

  it('flaky: an unlucky draw throws the retryable code the job would record', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const outcome = await runHandler(await demo('flaky'), {}, { attempt: 3 });
    expect(outcome).toMatchObject({ ok: false, code: 'UPSTREAM:UNAVAILABLE', retryable: true });
    expect(outcome.ok ? undefined : (outcome.error as Error).message).toBe('upstream unavailable (attempt 3)');
  });

  it('report: one step heartbeats, reports progress and logs; an aborted signal stops it with its reason', async () => {
    const done = await runHandler(await demo('report'), { steps: 1 });
    expect(done).toMatchObject({ ok: true, result: { steps: 1 }, progress: [{ done: 1, total: 1 }] });
    expect(done.logs.map((line) => line.msg)).toEqual([expect.stringMatching(/^report ready: \d+ rows in 1 steps$/)]);

    const controller = new AbortController();
    const reason = new Error('the test stopped it');
    controller.abort(reason);
    const stopped = await runHandler(await demo('report'), { steps: 3 }, { signal: controller.signal });
    expect(stopped).toMatchObject({ ok: false, error: reason, progress: [] });
  });
});

describe('runHandler', () => {
  it('gives the job its defaults, a real context and a payload as enqueue stores it', async () => {
    const seen: unknown[] = [];
    const outcome = await runHandler(
      async (job, ctx) => {
        seen.push(job, ctx.leaseToken, ctx.signal.aborted);
        await ctx.heartbeat();
        await ctx.progress(undefined);
        ctx.log.warn('careful', { n: 1 });
        return 'done';
      },
      { at: new Date(0) },
    );
    expect(outcome).toMatchObject({ ok: true, result: 'done', progress: [null] });
    expect(seen).toEqual([
      { id: 1, class: 'test', payload: { at: '1970-01-01T00:00:00.000Z' }, attempt: 1 },
      expect.stringMatching(/^[0-9a-f-]{36}$/),
      false,
    ]);
    expect(outcome.logs.map((line) => [line.level, line.msg, line.fields])).toEqual([['warn', 'careful', '{"n":1}']]);
  });

  it('refuses a payload enqueue would refuse, before the handler runs', async () => {
    const handler = vi.fn();
    await expect(runHandler(handler, { n: 1n })).rejects.toThrow(InvalidInputError);
    expect(handler).not.toHaveBeenCalled();
  });

  it("runs a module's parse first: its value is the payload, its refusal INVALID_INPUT:PAYLOAD with no retry", async () => {
    const module: HandlerModule = {
      default: async (job) => job.payload,
      parse: (raw) => {
        if (typeof raw !== 'string') throw new Error('want a string');
        return raw.toUpperCase();
      },
    };
    expect(await runHandler(module, 'abc')).toMatchObject({ ok: true, result: 'ABC' });
    const refused = await runHandler(module, 42);
    expect(refused).toMatchObject({ ok: false, code: 'INVALID_INPUT:PAYLOAD', retryable: false });
    expect(refused.ok ? undefined : (refused.error as Error).message).toBe('parse refused the payload: want a string');
  });

  it('words a schema refusal one line per issue, each with its field (Standard Schema issues, zod)', async () => {
    const issues = [
      { message: 'expected number, received string', path: ['orderId'] },
      { message: 'required', path: [{ key: 'items' }, { key: 0 }, 'sku'] },
      { message: 'must be an object' },
    ];
    const module: HandlerModule = {
      default: async () => null,
      parse: () => {
        throw Object.assign(new Error(JSON.stringify(issues, null, 2)), { issues });
      },
    };
    const refused = await runHandler(module, {});
    expect(refused.ok ? undefined : (refused.error as Error).message).toBe(
      [
        'parse refused the payload:',
        'payload.orderId: expected number, received string',
        'payload.items[0].sku: required',
        'payload: must be an object',
      ].join('\n'),
    );
  });

  it('checks a module as a child does: a parse that is not a function is refused', async () => {
    const module = { default: async () => null, parse: 'not a function' } as unknown as HandlerModule;
    await expect(runHandler(module, {})).rejects.toMatchObject({ code: 'HANDLER:BAD_PARSE_EXPORT' });
  });
});

describe('runHandler and a module’s setup and teardown', () => {
  const counted = () => {
    const life: string[] = [];
    const module: HandlerModule<string, { opened: number }> = {
      setup: (ctx) => {
        life.push(`setup ${ctx.class}`);
        return { opened: life.length };
      },
      default: async (_job, ctx) => ({ opened: ctx.resources.opened }),
      teardown: (resources) => void life.push(`teardown ${resources.opened}`),
    };
    return { life, module: module as unknown as HandlerModule };
  };

  it('runs setup before the handler, gives what it returned as ctx.resources, and tears down after', async () => {
    const { life, module } = counted();
    expect(await runHandler(module, {}, { class: 'billing' })).toMatchObject({ ok: true, result: { opened: 1 } });
    expect(life).toEqual(['setup billing', 'teardown 1']);
  });

  it('takes the test’s own resources instead, running neither setup nor teardown', async () => {
    const { life, module } = counted();
    expect(await runHandler(module, {}, { resources: { opened: 42 } })).toMatchObject({ result: { opened: 42 } });
    expect(life).toEqual([]);
  });
});
