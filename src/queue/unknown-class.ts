/**
 * The library's rule for a class no supervisor has ever served (no child of
 * it in `workers`, ever): a typo, or a class not yet in any config. The CLI
 * checks against its config instead (SPEC "Bad input").
 */
import { InvalidInputError } from '../errors.js';
import type { ProducerStore } from '../store/types.js';

/** 'warn' (the default): one process warning per class; 'refuse': InvalidInputError, nothing written; 'ignore'. */
export type UnknownClassRule = 'warn' | 'refuse' | 'ignore';

export const UNSERVED_WARNING_CODE = 'LEASEHOLD_CLASS_UNSERVED';

/** Classes warned about in this process, by any Queue. */
const warned = new Set<string>();

/** Asks the store at most until a class is seen served (it stays served) or, under 'warn', warned about. */
export class UnknownClassCheck {
  private readonly served = new Set<string>();

  constructor(
    private readonly store: Pick<ProducerStore, 'workerClassServed'>,
    private readonly rule: UnknownClassRule,
  ) {}

  async check(classes: Iterable<string>): Promise<void> {
    if (this.rule === 'ignore') return;
    for (const name of new Set(classes)) {
      if (this.served.has(name) || (this.rule === 'warn' && warned.has(name))) continue;
      if (await this.store.workerClassServed({ class: name })) {
        this.served.add(name);
        continue;
      }
      const message = `class "${name}" has never been served: no supervisor has run a worker of it (a typo, or a class in no config yet?)`;
      if (this.rule === 'refuse') throw new InvalidInputError('UNKNOWN_CLASS', message);
      warned.add(name);
      process.emitWarning(message, { code: UNSERVED_WARNING_CODE });
    }
  }
}
