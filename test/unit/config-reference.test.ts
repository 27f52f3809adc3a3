/**
 * docs/reference/configuration.md and config.example.yaml cannot drift from
 * the schema. The fields and their defaults come from the exported schema
 * itself (support/config-fields.ts walks it and parses configs with one field
 * left out), never from a list kept here.
 *
 * The reference: every schema field has exactly one row (`Field` column, its
 * path), every row names a schema field, and every row's Default is what the
 * schema fills in: `required` (leaving it out is an error), `none` (left out,
 * it stays unset), `each field's default` (a mapping filled in from its
 * fields), or a YAML value in backticks, compared with the parsed default.
 *
 * The example's rule: every value config.example.yaml writes out is the
 * schema's default for that field (what a parse fills in when the field is
 * left out of the example, so a derived default such as heartbeat_seconds is
 * judged with the rest of its class), unless the field has no default, or the
 * line it is written on has a comment that begins `override:`. A line marked
 * `override:` must write at least one value that differs from its default,
 * so a mark cannot outlive its override.
 */
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import { isMap, isPair, isScalar, isSeq, LineCounter, parse as parseYaml, parseDocument, type Node } from 'yaml';
import { formatPath } from '../../src/config/load.js';
import { configDefaults, configFields, type FieldDefault, getAt, parse, without } from './support/config-fields.js';

const REFERENCE = new URL('../../docs/reference/configuration.md', import.meta.url);
const EXAMPLE = new URL('../../config.example.yaml', import.meta.url);

interface Row {
  line: number;
  field: string;
  defaultText: string;
}

/** The rows of every table whose first column is `Field`. */
function referenceRows(markdown: string): Row[] {
  const rows: Row[] = [];
  let columns: string[] | undefined;
  markdown.split('\n').forEach((text, index) => {
    if (!text.trimStart().startsWith('|')) {
      columns = undefined;
      return;
    }
    const cells = text
      .trim()
      .replace(/^\||\|$/g, '')
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim());
    if (columns === undefined) {
      columns = cells.map((cell) => cell.toLowerCase());
      return;
    }
    if (cells.every((cell) => /^:?-+:?$/.test(cell)) || columns[0] !== 'field') return;
    const defaultText = cells[columns.indexOf('default')] ?? '';
    rows.push({ line: index + 1, field: (cells[0] ?? '').replace(/^`|`$/g, ''), defaultText });
  });
  return rows;
}

type Documented = FieldDefault | { eachField: true } | { unreadable: string };

function readDefault(text: string): Documented {
  if (/^required\b/.test(text)) return { required: true };
  if (/^none\b/.test(text)) return { required: false, value: undefined };
  if (/^each field's default\b/.test(text)) return { eachField: true };
  const literal = /^`([^`]*)`/.exec(text);
  if (literal !== null) return { required: false, value: parseYaml(literal[1] ?? '') };
  return { unreadable: text };
}

/** Why a reference disagrees with the schema: one line per problem, none when it agrees. */
function referenceProblems(markdown: string): string[] {
  const fields = configFields();
  const defaults = configDefaults();
  const rows = referenceRows(markdown);
  const problems: string[] = [];
  const byField = new Map<string, Row[]>();
  for (const row of rows) byField.set(row.field, [...(byField.get(row.field) ?? []), row]);

  for (const field of fields)
    if (!byField.has(field.path)) problems.push(`${field.path}: in the schema, no row in the reference`);
  for (const [field, same] of byField) {
    if (!defaults.has(field))
      problems.push(`line ${same[0]?.line}: ${field}: a row for a field the schema does not have`);
    if (same.length > 1)
      problems.push(`${field}: ${same.length} rows (lines ${same.map((row) => row.line).join(', ')})`);
  }
  for (const row of rows) {
    const actual = defaults.get(row.field);
    if (actual === undefined) continue;
    const documented = readDefault(row.defaultText);
    const where = `line ${row.line}: ${row.field}`;
    if ('unreadable' in documented) {
      problems.push(`${where}: default "${row.defaultText}" is not required, none, each field's default or \`value\``);
    } else if ('eachField' in documented) {
      const children = [...defaults].filter(
        ([path]) => path.startsWith(`${row.field}.`) && !path.slice(row.field.length + 1).includes('.'),
      );
      const filled = !actual.required && actual.value !== null && typeof actual.value === 'object';
      const fromFields = Object.fromEntries(
        children.map(([path, value]) => [path.slice(row.field.length + 1), value.required ? undefined : value.value]),
      );
      if (!filled || !isDeepStrictEqual(actual.value, fromFields))
        problems.push(`${where}: documented as each field's default, the schema gives ${show(actual)}`);
    } else if (!isDeepStrictEqual(documented, actual)) {
      problems.push(`${where}: the reference says ${show(documented)}, the schema gives ${show(actual)}`);
    }
  }
  return problems;
}

function show(value: FieldDefault): string {
  return value.required ? 'required' : value.value === undefined ? 'none' : JSON.stringify(value.value);
}

const OVERRIDE = /#\s*override:/;

/** Why the example breaks its rule (the header's): one line per problem, none when it keeps it. */
function exampleProblems(text: string): string[] {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter });
  const example = doc.toJS() as unknown;
  const parsed = parse(example);
  if (!parsed.success) return [`config.example.yaml does not parse: ${parsed.error}`];
  const kinds = new Map(configFields().map((field) => [field.path, field.kind]));

  // Every value the example writes out, with where: ['classes', 2, 'lease_seconds'] at line 82.
  const written: { segments: (string | number)[]; line: number }[] = [];
  const visit = (node: Node | null, segments: (string | number)[], path: string) => {
    if (isMap(node)) {
      for (const pair of node.items) {
        if (!isPair(pair) || !isScalar(pair.key)) continue;
        const key = String(pair.key.value);
        const fieldPath = path === '' ? key : `${path}.${key}`;
        const value = pair.value as Node | null;
        if (kinds.get(fieldPath) === 'value') {
          const line = lineCounter.linePos(value?.range?.[0] ?? pair.key.range?.[0] ?? 0).line;
          written.push({ segments: [...segments, key], line });
        } else visit(value, [...segments, key], fieldPath);
      }
    } else if (isSeq(node)) node.items.forEach((item, index) => visit(item as Node, [...segments, index], `${path}[]`));
  };
  visit(doc.contents as Node | null, [], '');

  const problems: string[] = [];
  const lines = text.split('\n');
  const overridden = new Set<number>();
  for (const { segments, line } of written) {
    const leftOut = parse(without(example, segments));
    if (!leftOut.success) continue; // no default: the example has to write something
    const value = getAt(parsed.data, segments);
    const fallback = getAt(leftOut.data, segments);
    if (isDeepStrictEqual(value, fallback)) continue;
    overridden.add(line);
    if (!OVERRIDE.test(lines[line - 1] ?? ''))
      problems.push(
        `config.example.yaml:${line}: ${formatPath(segments)} is ${JSON.stringify(value)}, its default ${JSON.stringify(fallback)}: write the default or mark the line "# override: ..."`,
      );
  }
  lines.forEach((line, index) => {
    if (OVERRIDE.test(line) && !overridden.has(index + 1))
      problems.push(`config.example.yaml:${index + 1}: marked override, but every value on it is its default`);
  });
  return problems;
}

describe('docs/reference/configuration.md', () => {
  it('has one row per schema field, and each default is the schema default', () => {
    expect(referenceProblems(readFileSync(REFERENCE, 'utf8'))).toEqual([]);
  });

  it('reports a missing row, a stale row and a wrong default', () => {
    const reference = readFileSync(REFERENCE, 'utf8');
    const broken = reference
      .split('\n')
      .filter((line) => !line.startsWith('| `sweeper.batch_size`'))
      .join('\n')
      .replace(/(\| `classes\[\]\.backoff\.base_seconds` *\|[^|]*\| *)`[^`]*`/, '$1`12345`')
      .concat(
        '\n\n| Field | Type | Default | What it does |\n|---|---|---|---|\n| `classes[].no_such_field` | list | `[]` | x |\n',
      );
    const problems = referenceProblems(broken);
    expect(problems).toContainEqual('sweeper.batch_size: in the schema, no row in the reference');
    expect(problems).toContainEqual(
      expect.stringMatching(/classes\[\]\.no_such_field: a row for a field the schema does not have/),
    );
    expect(problems).toContainEqual(
      expect.stringMatching(/classes\[\]\.backoff\.base_seconds: the reference says 12345, the schema gives/),
    );
  });
});

describe('config.example.yaml', () => {
  it('writes out defaults, and marks every other value "override:"', () => {
    expect(exampleProblems(readFileSync(EXAMPLE, 'utf8'))).toEqual([]);
  });

  it('reports an unmarked value that is not the default, and a mark with no override', () => {
    const example = readFileSync(EXAMPLE, 'utf8')
      .replace(/^ {2}interval_seconds: \S+/m, '  interval_seconds: 12345')
      .replace(/^( {2}batch_size: \S+)(.*)$/m, '$1 # override: nothing');
    const problems = exampleProblems(example);
    expect(problems).toContainEqual(expect.stringMatching(/:\d+: sweeper\.interval_seconds is 12345, its default/));
    expect(problems).toContainEqual(expect.stringMatching(/marked override, but every value on it is its default/));
  });
});
