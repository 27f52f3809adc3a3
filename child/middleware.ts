import type { Handler, HandlerContext, HandlerJob, Middleware } from '../src/handler.js';

/** The handler inside its middleware: one call that runs the whole chain for a job (its result, or a promise of it). */
export type AttemptBody = (job: HandlerJob, ctx: HandlerContext) => unknown;

/**
 * Wrap the handler in its middleware, the first outermost: each gets a
 * `next` that runs the rest of the chain. A chain without middleware is
 * the handler itself, so a class without any pays nothing per job.
 */
export function withMiddleware(handler: Handler, middleware: readonly Middleware[]): AttemptBody {
  return middleware.reduceRight<AttemptBody>(
    (next, outer) => (job, ctx) => outer(job, ctx, async () => next(job, ctx)),
    handler,
  );
}
