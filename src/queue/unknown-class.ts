/**
 * The library's rule for a class no supervisor has ever served (no child of
 * it in `workers`, ever): a typo, or a class not yet in any config. The CLI
 * checks against its config instead (SPEC "Bad input").
 *
 * A warning that is usually false teaches people to ignore it, so it fires
 * only when it is likely true: the class is in none of the classes the
 * Queue was told of (its application's config), and supervisors have served
 * other classes on this database, but never this one. On a database no
 * supervisor has served yet, the producer merely started first.
 */
import { closest } from '../closest.js';
import { InvalidInputError } from '../errors.js';
import type { ProducerStore } from '../store/types.js';
import type { SyncProducer } from '../store/within.js';

type SyncLookup = Pick<SyncProducer, 'workerClassServed' | 'workerServedClasses'>;

/** 'warn' (the default): one process warning per class; 'refuse': InvalidInputError, nothing written; 'ignore'. */
export type UnknownClassRule = 'warn' | 'refuse' | 'ignore';

export const UNSERVED_WARNING_CODE = 'LEASEHOLD_CLASS_UNSERVED';

/** How many served classes a warning names, at most. */
const NAMED = 20;

/** Classes warned about in this process, by any Queue. */
const warned = new Set<string>();

/** Asks the store at most until a class is seen served (it stays served) or, under 'warn', warned about. */
export class UnknownClassCheck {
  private readonly served: Set<string>;

  /** `known`: classes of a config, taken as served. */
  constructor(
    private readonly store: Pick<ProducerStore, 'workerClassServed' | 'workerServedClasses'>,
    private readonly rule: UnknownClassRule,
    known: Iterable<string> = [],
  ) {
    this.served = new Set(known);
  }

  async check(classes: Iterable<string>): Promise<void> {
    for (const name of this.unsettled(classes)) {
      if (await this.store.workerClassServed({ class: name })) this.served.add(name);
      else this.judge(name, await this.store.workerServedClasses({ limit: NAMED + 1 }));
    }
  }

  /** The same, asking an application's Database (enqueueSync cannot wait). */
  checkSync(classes: Iterable<string>, lookup: SyncLookup): void {
    for (const name of this.unsettled(classes)) {
      if (lookup.workerClassServed({ class: name })) this.served.add(name);
      else this.judge(name, lookup.workerServedClasses({ limit: NAMED + 1 }));
    }
  }

  /** The classes the store must be asked about. */
  private unsettled(classes: Iterable<string>): string[] {
    if (this.rule === 'ignore') return [];
    return [...new Set(classes)].filter(
      (name) => !this.served.has(name) && !(this.rule === 'warn' && warned.has(name)),
    );
  }

  /** A class never served, among `others` that were. */
  private judge(name: string, others: string[]): void {
    if (others.length === 0 && this.rule === 'warn') return; // nothing served yet: asked again next time
    const message = unservedMessage(name, others);
    if (this.rule === 'refuse') throw new InvalidInputError('UNKNOWN_CLASS', message);
    warned.add(name);
    process.emitWarning(message, { code: UNSERVED_WARNING_CODE });
  }
}

function unservedMessage(name: string, others: string[]): string {
  if (others.length === 0)
    return `class "${name}" has never been served: no supervisor has run a worker of it (a typo, or a class in no config yet?)`;
  const listed = others.length > NAMED ? `${others.slice(0, NAMED).join(', ')}, …` : others.join(', ');
  const meant = closest(name, others);
  return `class "${name}" has never been served: the supervisors on this database have served ${listed} (${meant === undefined ? 'a typo, or a class in no config yet?' : `did you mean "${meant}"?`})`;
}
