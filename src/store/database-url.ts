/** What a `database` setting names: a postgres:// (or postgresql://) URL, else a SQLite file. */
export function isPostgresUrl(database: string): boolean {
  return /^postgres(ql)?:\/\//i.test(database);
}

/** A `database` setting fit for a log or a report: a postgres:// URL's password replaced by ***. */
export function redactDatabase(database: string): string {
  return database.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
}
