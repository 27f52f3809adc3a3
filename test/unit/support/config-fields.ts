/**
 * The queue.yaml fields as the exported schema defines them, found by walking
 * it (zod 4's `_zod.def`), and each field's default as the schema produces it:
 * the value a parse fills in when the field is left out. Nothing here lists a
 * field or a default by hand, so a field added to the schema, or a default
 * moved, is seen without editing this file.
 */
import type { z } from 'zod';
import { configSchema } from '../../../src/config/schema.js';

type Schema = z.core.$ZodType;

/** One field: `classes[].backoff.base_seconds` (`[]`: any element of a list). */
export interface ConfigField {
  path: string;
  /** After the wrappers (default, optional, nullable, the class's transform): what the value itself is. */
  kind: 'mapping' | 'list' | 'value';
  schema: Schema;
}

/** What the schema fills in when a field is left out. */
export type FieldDefault = { required: true } | { required: false; value: unknown };

/** The schema under its wrappers: `.default()`, `.optional()`, `.nullable()`, a `.transform()` after it. */
export function unwrap(schema: Schema): Schema {
  for (;;) {
    const def = schema._zod.def as z.core.$ZodTypeDef & { innerType?: Schema; in?: Schema; out?: Schema };
    if (def.innerType !== undefined) schema = def.innerType;
    else if (def.type === 'pipe') schema = def.in!._zod.def.type === 'transform' ? def.out! : def.in!;
    else return schema;
  }
}

function shapeOf(schema: Schema): Record<string, Schema> | undefined {
  const core = unwrap(schema);
  return core._zod.def.type === 'object' ? (core._zod.def as z.core.$ZodObjectDef).shape : undefined;
}

/** A list's element when it is a mapping (`classes`, `schedules`), else undefined. */
function elementShapeOf(schema: Schema): Record<string, Schema> | undefined {
  const core = unwrap(schema);
  return core._zod.def.type === 'array' ? shapeOf((core._zod.def as z.core.$ZodArrayDef).element) : undefined;
}

function kindOf(schema: Schema): ConfigField['kind'] {
  const type = unwrap(schema)._zod.def.type;
  return type === 'object' ? 'mapping' : type === 'array' ? 'list' : 'value';
}

/** Every field, parents before their fields, in the schema's order. */
export function configFields(): ConfigField[] {
  const fields: ConfigField[] = [];
  const walk = (shape: Record<string, Schema>, prefix: string) => {
    for (const [key, schema] of Object.entries(shape)) {
      const path = prefix === '' ? key : `${prefix}.${key}`;
      fields.push({ path, kind: kindOf(schema), schema });
      const inner = shapeOf(schema);
      if (inner !== undefined) walk(inner, path);
      const element = elementShapeOf(schema);
      if (element !== undefined) walk(element, `${path}[]`);
    }
  };
  walk(configSchema.shape, '');
  return fields;
}

/** Values to try for a field that has no default, first accepted wins: numbers, names, paths, a cron expression. */
const SAMPLES: unknown[] = [1, 'x', '* * * * *', true];

/**
 * The smallest config with every mapping present: each field without a
 * default gets a sample value its own schema accepts, each mapping is
 * written out (`http: { port: 1 }`), each list of mappings has one element.
 * Leaving one field out of it shows that field's default.
 */
export function fullMinimalConfig(): Record<string, unknown> {
  const build = (shape: Record<string, Schema>, prefix: string): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [key, schema] of Object.entries(shape)) {
      const path = prefix === '' ? key : `${prefix}.${key}`;
      const inner = shapeOf(schema);
      const element = elementShapeOf(schema);
      if (inner !== undefined) out[key] = build(inner, path);
      else if (element !== undefined) out[key] = [build(element, `${path}[]`)];
      else if (!(schema as z.ZodType).safeParse(undefined).success) {
        const sample = SAMPLES.find((value) => (schema as z.ZodType).safeParse(value).success);
        if (sample === undefined) throw new Error(`no sample value fits ${path}: add one to SAMPLES`);
        out[key] = sample;
      }
    }
    return out;
  };
  return build(configSchema.shape, '');
}

/** `classes[].backoff.base_seconds` → ['classes', 0, 'backoff', 'base_seconds']. */
export function segmentsOf(path: string): (string | number)[] {
  return path.split('.').flatMap((part) => (part.endsWith('[]') ? [part.slice(0, -2), 0] : [part]));
}

export function getAt(value: unknown, segments: readonly (string | number)[]): unknown {
  let at = value;
  for (const segment of segments) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string | number, unknown>)[segment];
  }
  return at;
}

/** A copy of `value` without the field at `segments`. */
export function without(value: unknown, segments: readonly (string | number)[]): unknown {
  const copy = structuredClone(value);
  const parent = getAt(copy, segments.slice(0, -1));
  if (parent !== null && typeof parent === 'object')
    delete (parent as Record<string | number, unknown>)[segments.at(-1)!];
  return copy;
}

export function parse(config: unknown): { success: true; data: unknown } | { success: false; error: string } {
  const result = configSchema.safeParse(config, { jitless: true });
  return result.success
    ? { success: true, data: result.data }
    : { success: false, error: result.error.issues.map((issue) => issue.message).join('; ') };
}

/** Each field's default: leave it out of the full minimal config and read what the parse put there. */
export function configDefaults(): Map<string, FieldDefault> {
  const base = fullMinimalConfig();
  const baseline = parse(base);
  if (!baseline.success) throw new Error(`the minimal config does not parse: ${baseline.error}`);
  const defaults = new Map<string, FieldDefault>();
  for (const field of configFields()) {
    const segments = segmentsOf(field.path);
    const parsed = parse(without(base, segments));
    defaults.set(
      field.path,
      parsed.success ? { required: false, value: getAt(parsed.data, segments) } : { required: true },
    );
  }
  return defaults;
}
