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
