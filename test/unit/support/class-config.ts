import { parseConfig } from '../../../src/config/load.js';
import type { ClassConfig } from '../../../src/config/schema.js';

/** A class config as the loader makes it (defaults and derived fields filled in), with `fields` set in the file. */
export function classConfig(fields: Record<string, unknown> = {}): ClassConfig {
  // YAML is a superset of JSON: the fields go through the same schema as a config file's.
  const text = JSON.stringify({
    database: './queue.db',
    classes: [{ name: 'unit', handler: './handler.js', ...fields }],
  });
  return parseConfig(text, '/nonexistent/leasehold.yaml').classes[0]!;
}
