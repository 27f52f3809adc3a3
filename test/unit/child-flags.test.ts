import { describe, expect, it } from 'vitest';
import { CHILD_SEMI_SPACE_FLAG, childExecArgv } from '../../supervisor/child-flags.js';

describe('childExecArgv', () => {
  it("adds the young generation's cap after the supervisor's own flags", () => {
    expect(childExecArgv(['--enable-source-maps'], '')).toEqual(['--enable-source-maps', CHILD_SEMI_SPACE_FLAG]);
  });

  it('adds nothing when the operator set the size, however written', () => {
    expect(childExecArgv(['--max-semi-space-size=64'], '')).toEqual(['--max-semi-space-size=64']);
    expect(childExecArgv([], '--require x --max_semi_space_size=8')).toEqual([]);
  });
});
