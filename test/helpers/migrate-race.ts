import { execa } from 'execa';

/** A process that opens the store named by its argument (which migrates it) and closes it again. */
const OPEN_AND_MIGRATE = `
  const { openStore } = await import(process.cwd() + '/dist/src/store/open.js');
  const store = await openStore(process.argv[1]);
  await store.close();
`;

/** `count` processes open (and so migrate) the same database at the same moment; their exit codes. */
export async function migrateAtOnce(database: string, count = 3): Promise<(number | undefined)[]> {
  const racers = Array.from({ length: count }, () =>
    execa('node', ['--input-type=module', '-e', OPEN_AND_MIGRATE, database]),
  );
  return (await Promise.all(racers)).map((result) => result.exitCode);
}
