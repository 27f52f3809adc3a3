/**
 * The Node flags a child starts with: the supervisor's own, and a young
 * generation capped at 4 MiB a semi-space unless the operator set its size
 * (in NODE_OPTIONS or on the supervisor's command line, which a child
 * inherits). V8's default lets it grow to 16 MiB, and with several children
 * sharing a few cores each one's new space was released and touched afresh
 * again and again: with 8 children on 2 cores the children took 0.9 page
 * faults a job, against 0.2 for 1 child, and a quarter more CPU per job
 * (docs/performance.md, "Children's young generation").
 */
export const CHILD_SEMI_SPACE_FLAG = '--max-semi-space-size=4';

/** How the operator may have written the size: V8 takes dashes or underscores. */
const SETS_SEMI_SPACE = /--max[-_]semi[-_]space[-_]size\b/;

export function childExecArgv(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): string[] {
  const operatorChose = SETS_SEMI_SPACE.test(nodeOptions) || execArgv.some((arg) => SETS_SEMI_SPACE.test(arg));
  return operatorChose ? [...execArgv] : [...execArgv, CHILD_SEMI_SPACE_FLAG];
}
