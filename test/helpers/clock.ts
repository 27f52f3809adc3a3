import type { Clock } from '../../src/clock.js';

/** A clock the test moves by hand: pure logic, no fake timers. */
export class TestClock implements Clock {
  private current: number;

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  advance(ms: number): void {
    this.current += ms;
  }
}

/**
 * libfaketime, for a process whose wall clock the test sets: LD_PRELOAD it
 * with FAKETIME (and FAKETIME_DONT_FAKE_MONOTONIC=1, so that only the wall
 * clock is off, as on a host with broken NTP).
 */
export const FAKETIME_LIBRARY = '/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1';
