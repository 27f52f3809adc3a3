import { existsSync } from 'node:fs';

/**
 * libfaketime, for a process whose wall clock the test sets: LD_PRELOAD it
 * with FAKETIME (and FAKETIME_DONT_FAKE_MONOTONIC=1, so that only the wall
 * clock is off, as on a host with broken NTP).
 */
export const FAKETIME_LIBRARY = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';

// A missing library is only the loader's warning, and the process would run
// on the true clock: a clock test would pass without testing anything.
if (!existsSync(FAKETIME_LIBRARY)) {
  throw new Error(`${FAKETIME_LIBRARY} is missing: apt-get install libfaketime (.ci/run does)`);
}
