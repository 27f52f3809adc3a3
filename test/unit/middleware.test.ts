/**
 * The middleware chain's rules (child/middleware.ts): the first module is
 * outermost, each sees what the rest returned or threw, and one that never
 * calls next skips the handler.
 */
import { describe, expect, it } from 'vitest';
import { withMiddleware } from '../../child/middleware.js';
import type { Handler, HandlerContext, HandlerJob, Middleware } from '../../src/handler.js';

const job = { id: 1, class: 'work', payload: {}, attempt: 1 } as HandlerJob;
const ctx = {} as HandlerContext;

/** A middleware that records entering and leaving, and adds its name to the result's trail. */
function tracing(name: string, seen: string[]): Middleware {
  return async (_job, _ctx, next) => {
    seen.push(`enter ${name}`);
    try {
      const result = (await next()) as string[];
      return [...result, name];
    } finally {
      seen.push(`leave ${name}`);
    }
  };
}

describe('withMiddleware', () => {
  it('runs the first outermost, around the handler, each seeing the result of the rest', async () => {
    const seen: string[] = [];
    const handler: Handler = () => {
      seen.push('handler');
      return ['handler'];
    };
    const body = withMiddleware(handler, [tracing('outer', seen), tracing('inner', seen)]);
    expect(await body(job, ctx)).toEqual(['handler', 'inner', 'outer']);
    expect(seen).toEqual(['enter outer', 'enter inner', 'handler', 'leave inner', 'leave outer']);
  });

  it('is the handler itself without middleware', () => {
    const handler: Handler = () => 'done';
    expect(withMiddleware(handler, [])).toBe(handler);
  });

  it('lets a middleware see the failure and change it', async () => {
    const handler: Handler = () => {
      throw new Error('upstream down');
    };
    const final: Middleware = async (_job, _ctx, next) =>
      next().catch((error: Error) => {
        throw Object.assign(new Error(`final: ${error.message}`), { retryable: false });
      });
    await expect(withMiddleware(handler, [final])(job, ctx)).rejects.toMatchObject({
      message: 'final: upstream down',
      retryable: false,
    });
  });

  it('skips the handler when a middleware does not call next', async () => {
    let ran = false;
    const handler: Handler = () => void (ran = true);
    const cached: Middleware = async () => 'cached';
    expect(await withMiddleware(handler, [cached])(job, ctx)).toBe('cached');
    expect(ran).toBe(false);
  });
});
