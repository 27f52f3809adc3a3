/**
 * The Node flags a child starts with: the supervisor's own, and a young
 * generation capped at a semi-space of CHILD_SEMI_SPACE_FLAG's size unless
 * the operator set its size (in NODE_OPTIONS or on the supervisor's command
 * line, which a child inherits). Left to grow to V8's default, each child's
 * new space was released and touched afresh, page fault after page fault,
 * the more so the more children shared the cores (the figures:
 * docs/performance.md, "Children's young generation").
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
