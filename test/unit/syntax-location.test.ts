/** Where a syntax error is, read from what node prints: the header of an uncaught error, or a stack's first frame. */
import { describe, expect, it } from 'vitest';
import { firstOwnFrame, headerLocation } from '../../src/config/syntax-location.js';

describe('headerLocation', () => {
  it('reads file, line and the caret column, from a URL or a path', () => {
    const printed =
      "file:///srv/handlers/pay.mjs:2\n  const a = ;\n            ^\n\nSyntaxError: Unexpected token ';'\n";
    expect(headerLocation(printed)).toBe('/srv/handlers/pay.mjs:2:13');
    expect(headerLocation('/srv/h.cjs:7\n\treturn 1 +;\n\t         ^\n')).toBe('/srv/h.cjs:7:11');
    expect(headerLocation('/srv/h.cjs:7\nsource\n')).toBe('/srv/h.cjs:7');
  });

  it('finds nothing in a stack without the header', () => {
    expect(headerLocation("SyntaxError: Unexpected token ';'\n    at compileSourceTextModule (node:internal)")).toBe(
      undefined,
    );
    expect(headerLocation('')).toBeUndefined();
  });
});

describe('firstOwnFrame', () => {
  it("skips node's frames and names the first of the module's", () => {
    const stack = [
      'SyntaxError: Unexpected token } in JSON at position 5',
      '    at JSON.parse (<anonymous>)',
      '    at file:///srv/handlers/pay.mjs:3:18',
      '    at ModuleJob.run (node:internal/modules/esm/module_job:195:25)',
    ].join('\n');
    expect(firstOwnFrame(stack)).toBe('/srv/handlers/pay.mjs:3:18');
    expect(firstOwnFrame('Error: x\n    at load (/srv/h.cjs:4:2)')).toBe('/srv/h.cjs:4:2');
    expect(
      firstOwnFrame('SyntaxError: x\n    at compileSourceTextModule (node:internal/modules/esm/utils:346:16)'),
    ).toBe(undefined);
  });
});
