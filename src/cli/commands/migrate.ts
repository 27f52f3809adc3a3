/** `leasehold migrate`: create the database or bring its schema up to date. */
import type { Argv, CommandModule } from 'yargs';
import { action, output, resolveTarget, withStore, type GlobalArgs } from '../context.js';

export const migrateCommand: CommandModule<GlobalArgs, GlobalArgs> = {
  command: 'migrate',
  describe: 'create the database, or upgrade its schema',
  builder: (yargs: Argv<GlobalArgs>) => yargs,
  handler: action(async (args: GlobalArgs) => {
    await withStore(resolveTarget(args), args, { create: true }, async ({ store, database, created }) => {
      await store.migrate();
      const version = await store.schemaVersion();
      output(args.json, { database, created, version }, () => `${database}: ${created ? 'created, ' : ''}schema at version ${version}`);
    });
  }),
};
