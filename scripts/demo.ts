/**
 * npm run demo — the supervisor on config.example.yaml (SQLite, the demo
 * handlers, the dashboard on loopback), with a trickle of demo jobs so there
 * is something to watch, and the dashboard's URL printed once it answers.
 * Ctrl-C drains and stops it, as with `supervise`.
 */
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../src/config/load.js';
import { openQueue } from '../src/queue/queue.js';
import { migrate } from '../src/store/open.js';

const CONFIG = fileURLToPath(new URL('../../config.example.yaml', import.meta.url));
const SUPERVISE = fileURLToPath(new URL('../supervisor/main.js', import.meta.url));
const CLASSES = ['email', 'flaky', 'report'];

const config = loadConfig(CONFIG);
const supervisor = execa(process.execPath, [SUPERVISE, '--config', CONFIG], { stdio: 'inherit', reject: false });
// The terminal's Ctrl-C reaches the supervisor too: stop enqueueing and wait for its drain.
let stopping = false;
process.on('SIGINT', () => (stopping = true));
process.on('SIGTERM', () => {
  stopping = true;
  supervisor.kill('SIGTERM');
});

/** The dashboard's URL, printed once the supervisor's HTTP port answers (a newcomer's first look). */
async function announceDashboard(): Promise<void> {
  if (config.http?.dashboard !== true) return;
  const url = `http://${config.http.host}:${config.http.port}/`;
  for (let tries = 0; tries < 100 && !stopping && supervisor.exitCode === null; tries++) {
    const up = await fetch(`${url}healthz`).then(
      () => true,
      () => false,
    );
    if (up) return void process.stdout.write(`\ndemo: the dashboard is at ${url}\n\n`);
    await sleep(100);
  }
}

void announceDashboard();
// Migrated here too: the supervisor, started alongside, may not have created the tables yet.
await migrate({ database: config.database });
// The demo's classes are the config's: never taken for typos, even before the supervisor's children register.
const queue = await openQueue({
  database: config.database,
  actor: 'demo',
  classes: config.classes.map((cls) => cls.name),
});
for (let n = 1; !stopping && supervisor.exitCode === null; n++) {
  const jobClass = CLASSES[n % CLASSES.length] ?? 'email';
  await queue.enqueue({ class: jobClass, payload: { to: `user${n}@example.com`, n } });
  await sleep(300 + Math.random() * 700);
}
await queue.close();
const { exitCode } = await supervisor;
process.exit(exitCode ?? 0);
