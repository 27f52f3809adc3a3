import { join } from 'node:path';

/** Another build whose `supervise` a section runs beside this one's, in the same rounds. */
export interface Baseline {
  /** The checkout, built (LEASEHOLD_BENCH_BASELINE). */
  folder: string;
  supervise: string;
}

/** The baseline that LEASEHOLD_BENCH_BASELINE names, if it is set. */
export function benchBaseline(): Baseline | undefined {
  const folder = process.env.LEASEHOLD_BENCH_BASELINE;
  return folder ? { folder, supervise: join(folder, 'dist/supervisor/main.js') } : undefined;
}
