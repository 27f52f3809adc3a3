/**
 * The writer's calls on SQLite: a child sends each write of its WorkerStore
 * to its supervisor's writer (one thread, one connection), over a Unix
 * socket the writer listens on, one JSON line a call and one an answer;
 * the writer runs it and answers. The supervisor's own writes go to the
 * same writer (from its main thread). A call names
 * a store method and its one params object; the answer is its result, or
 * the error it threw, summed up so that the caller can tell a database fault
 * (`code`: SQLITE_BUSY...) and a fenced write turned away (LEASE:LOST).
 */

/** The writes of a child's store (WorkerStore) that the writer makes for it. */
export const CHILD_WRITES = ['jobsSettle', 'jobStart', 'leasesExtend', 'jobProgress'] as const;
export type ChildWrite = (typeof CHILD_WRITES)[number];

/** A call a child sends the writer, numbered by the child. */
export interface WriterCall {
  id: number;
  method: ChildWrite;
  params: unknown;
}

/** An error as it crosses to the caller: enough to rebuild what the caller branches on. */
export interface WireError {
  name: string;
  message: string;
  code?: string;
}

/** The writer's answer to a child's call: the method's result, or its error. */
export type WriterAnswer = { id: number } & Answer;

/** What a call came to. */
export type Answer = { ok: true; result: unknown } | { ok: false; error: WireError };

/** Sum up what a store method threw. */
export function toWire(error: unknown): WireError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const code = (error as { code?: unknown }).code;
  return { name: error.name, message: error.message, ...(typeof code === 'string' ? { code } : {}) };
}

/** Rebuild a summed-up error: the same name, message and code (a database fault is told by its code). */
export function fromWire(wire: WireError): Error {
  const error = new Error(wire.message) as Error & { code?: string };
  error.name = wire.name;
  if (wire.code !== undefined) error.code = wire.code;
  return error;
}

/** Whether a child may ask the writer for `method`. */
export function isChildWrite(method: unknown): method is ChildWrite {
  return (CHILD_WRITES as readonly unknown[]).includes(method);
}
