/** `leasehold migrate`: create the database or bring its schema up to date. */
import { defineCommand, output, resolveTarget, withStore, type GlobalArgs } from '../context.js';

export const migrateCommand = defineCommand<GlobalArgs>({
  command: 'migrate',
  describe: 'create the database, or upgrade its schema',
  run: async (args) => {
    await withStore(await resolveTarget(args), args, { create: true }, async ({ store, database, created }) => {
      await store.migrate();
      const version = await store.schemaVersion();
      output(
        args.json,
        { database, created, version },
        () => `${database}: ${created ? 'created, ' : ''}schema at version ${version}`,
      );
    });
  },
});
