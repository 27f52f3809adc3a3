import { classModuleProblem } from '../src/config/deployment.js';
import type { Logger } from '../src/log.js';
import type { PoolChild } from './supervised-child.js';
import type { ClassPool } from './class-pool.js';
import type { RetireOptions } from './retire.js';

/**
 * The modules of these classes changed on disk (`--watch`): each class's
 * modules are checked as a reload checks them, in a probe process, and its
 * children replaced one at a time; a module that cannot load leaves the
 * class's children serving, and says why (the rule of a reload).
 */
export async function replaceEditedClasses<C extends PoolChild>(
  pools: readonly ClassPool<C>[],
  names: ReadonlySet<string>,
  options: { logger: Logger; retire: Omit<RetireOptions, 'logger' | 'reason'> },
): Promise<void> {
  const { logger, retire } = options;
  for (const pool of pools.filter((p) => names.has(p.config.name))) {
    const name = pool.config.name;
    const found = await classModuleProblem(pool.config);
    const failure = found?.problem ?? (await replaced(pool, name, logger, retire));
    if (failure !== undefined)
      logger.error(`class ${name} keeps its children: ${failure}`, {
        event: 'MODULES_CHANGE_REFUSED',
        class: name,
        ...(found === undefined ? {} : { file: found.file }),
        reason: failure,
      });
  }
}

async function replaced<C extends PoolChild>(
  pool: ClassPool<C>,
  name: string,
  logger: Logger,
  retire: Omit<RetireOptions, 'logger' | 'reason'>,
): Promise<string | undefined> {
  logger.info(`class ${name}'s modules changed: replacing its children`, { event: 'MODULES_CHANGED', class: name });
  const failure = await pool.replaceChildren(retire);
  return failure === undefined ? undefined : `a new child did not start: ${failure}`;
}
