/**
 * node sqlite-lock-holder.js <database> <hold ms>
 *
 * Another process that holds a SQLite database's write lock for a while, as
 * an operator's `sqlite3` shell left in `BEGIN EXCLUSIVE` does: it prints
 * "locked" once it holds the lock, and lets go (rolls back) after the hold.
 */
import Database from 'better-sqlite3';

const [path, holdArg] = process.argv.slice(2);
const holdMs = Number(holdArg);
if (path === undefined || !Number.isFinite(holdMs)) {
  console.error('usage: sqlite-lock-holder <database> <hold ms>');
  process.exit(2);
}
// Getting the lock may take a moment (the queue's writers hold it briefly); holding it is the point.
const db = new Database(path, { timeout: 30_000 });
db.exec('BEGIN EXCLUSIVE');
console.log('locked');
setTimeout(() => {
  db.exec('ROLLBACK');
  db.close();
}, holdMs);
