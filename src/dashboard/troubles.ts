/**
 * Classes in trouble, read from the database alone (the dashboard may run
 * on another host than the supervisors): classes a live supervisor disabled
 * (it recorded them in disabled_classes), and classes whose children keep
 * ending abnormally without being disabled (yet): the dashboard's crash-loop
 * rule (CRASHING_EXITS, ../crash-loop.ts), over each class's restart window
 * (the default for a class the dashboard's config does not name), counting the
 * children of live supervisors only.
 */
import type { ClassConfig } from '../config/schema.js';
import { crashWindowMs, CRASHING_EXITS } from '../crash-loop.js';
import { DEFAULT_RESTART } from '../limits.js';
import { STALE_SUPERVISOR_MS } from '../queue/registry.js';
import { byName } from '../reports/format.js';
import type { ChildCrash, OperatorStore } from '../store/types.js';

/** A class that is not consuming jobs as configured: disabled by a supervisor, or crashing again and again. */
export interface ClassTrouble {
  class: string;
  kind: 'disabled' | 'crash_loop';
  /** Which supervisor saw it (worker id), or null when read from the children's exits. */
  supervisor_id: string | null;
  /** That supervisor's host; null with supervisor_id. */
  host: string | null;
  reason: string;
  since: number;
}

/** Exits read at most: a loop this busy shows whatever the rest say. */
const CRASHES_READ = 500;

export type TroubleStore = Pick<OperatorStore, 'classDisabledList' | 'workerCrashList'>;

export async function classTroubles(
  store: TroubleStore,
  now: number,
  classes: readonly ClassConfig[] = [],
): Promise<ClassTrouble[]> {
  const liveSince = now - STALE_SUPERVISOR_MS;
  const windows = new Map(classes.map((cls) => [cls.name, crashWindowMs(cls.restart)]));
  const windowOf = (name: string) => windows.get(name) ?? crashWindowMs(DEFAULT_RESTART);
  const widest = Math.max(crashWindowMs(DEFAULT_RESTART), ...windows.values());

  const troubles: ClassTrouble[] = (await store.classDisabledList({ liveSince })).map((row) => ({
    class: row.class,
    kind: 'disabled',
    supervisor_id: row.supervisor_id,
    host: row.host,
    reason: row.reason,
    since: row.disabled_at,
  }));
  const disabled = new Set(troubles.map((trouble) => trouble.class));
  const byClass = new Map<string, ChildCrash[]>();
  for (const crash of await store.workerCrashList({ since: now - widest, liveSince, limit: CRASHES_READ })) {
    if (disabled.has(crash.class) || crash.exited_at < now - windowOf(crash.class)) continue;
    byClass.set(crash.class, [...(byClass.get(crash.class) ?? []), crash]);
  }
  for (const [name, crashes] of [...byClass.entries()].sort(([a], [b]) => byName(a, b))) {
    if (crashes.length < CRASHING_EXITS) continue;
    const [last] = crashes; // newest first
    const how =
      last!.exit_signal === null ? `exit code ${last!.exit_code ?? 'unknown'}` : `signal ${last!.exit_signal}`;
    troubles.push({
      class: name,
      kind: 'crash_loop',
      supervisor_id: null,
      host: null,
      reason: `${crashes.length} children ended abnormally within ${windowOf(name) / 1000}s (the last by ${how})`,
      since: crashes.at(-1)!.exited_at,
    });
  }
  return troubles;
}
