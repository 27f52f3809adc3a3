/**
 * Write turns: the supervisor's line opens when writers meet, serves one
 * holder at a time in the order asked (its own writes in the same line),
 * lets a child that leaves give up its place and its turn, and closes once
 * writers have not met for a while; a child writes at once while it is closed,
 * with no message, and noting when it began.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TurnsFromSupervisor } from '../../child/write-turns.js';
import type { ChildToSupervisor } from '../../src/ipc/protocol.js';
import { LINE_IDLE_MS, WriteTurnQueue, type TurnTaker } from '../../supervisor/write-turns.js';

interface Member extends TurnTaker {
  lines: boolean[];
}

function member(name: string, granted: string[]): Member {
  const lines: boolean[] = [];
  return { lines, turnGranted: () => void granted.push(name), lineChanged: (open) => void lines.push(open) };
}

describe('WriteTurnQueue', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('while closed, its own writes go at once and nobody is told anything', () => {
    const turns = new WriteTurnQueue();
    const a = member('a', []);
    turns.join(a);
    expect(turns.take(false)).toBeUndefined();
    expect(turns.give()).toBe(false);
    expect(a.lines).toEqual([]);
  });

  it('opens when a writer found the lock taken, then grants one turn at a time, first come first served', async () => {
    const turns = new WriteTurnQueue();
    const granted: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((name) => member(name, granted));
    for (const m of [a!, b!, c!]) turns.join(m);
    turns.request(a!);
    expect(a!.lines).toEqual([true]);
    expect(c!.lines).toEqual([true]);
    turns.request(b!);
    const own = turns.take(false)!.then(() => void granted.push('supervisor'));
    turns.request(c!);
    expect(granted).toEqual(['a']);

    turns.release(b!); // not the holder: nothing moves
    expect(granted).toEqual(['a']);
    turns.release(a!);
    expect(granted).toEqual(['a', 'b']);
    turns.release(b!);
    await own;
    expect(granted).toEqual(['a', 'b', 'supervisor']);
    expect(turns.give()).toBe(true);
    expect(granted).toEqual(['a', 'b', 'supervisor', 'c']);
  });

  it('closes once empty and children have not met for LINE_IDLE_MS; a lone child or the supervisor does not keep it open', async () => {
    const turns = new WriteTurnQueue();
    const granted: string[] = [];
    const [a, b] = ['a', 'b'].map((name) => member(name, granted));
    turns.join(a!);
    turns.request(a!); // found the lock taken: the line opens
    turns.request(b!); // b asks while a holds: writers met
    turns.release(a!);
    vi.advanceTimersByTime(LINE_IDLE_MS / 2);
    turns.release(b!);
    expect(a!.lines).toEqual([true]);
    // a alone, turn after turn: nobody meets it
    for (let i = 0; i < 3; i++) {
      turns.request(a!);
      turns.release(a!);
      vi.advanceTimersByTime(LINE_IDLE_MS / 10);
    }
    // nor the supervisor's own writes
    const own = turns.take(false)!;
    turns.request(a!);
    await own;
    turns.give();
    turns.release(a!);
    expect(a!.lines).toEqual([true]);
    // LINE_IDLE_MS after children met, though a asked moments ago
    vi.advanceTimersByTime(LINE_IDLE_MS - LINE_IDLE_MS / 2 - (3 * LINE_IDLE_MS) / 10);
    expect(a!.lines).toEqual([true, false]);
    expect(turns.take(false)).toBeUndefined();

    const late = member('late', granted);
    turns.request(a!);
    turns.join(late); // a child that starts while the line is open hears so
    expect(late.lines).toEqual([true]);
  });

  it('a child that leaves gives up its turn and its place in line', () => {
    const turns = new WriteTurnQueue();
    const granted: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((name) => member(name, granted));
    turns.request(a!);
    turns.request(b!);
    turns.request(c!);
    turns.leave(b!);
    turns.leave(a!);
    expect(granted).toEqual(['a', 'c']);
  });
});

describe('TurnsFromSupervisor', () => {
  function child(connected = true) {
    const sent: ChildToSupervisor['type'][] = [];
    const notes: number[] = [];
    const turns = new TurnsFromSupervisor(
      (message) => void sent.push(message.type),
      () => connected,
    );
    turns.noteWritesIn({ writing: (since) => void notes.push(since) });
    return { turns, sent, notes };
  }

  it('while the line is closed, writes at once with no message, noting when its write began and ended', () => {
    const { turns, sent, notes } = child();
    expect(turns.take(false)).toBeUndefined();
    expect(turns.give()).toBe(false); // a busy try: the next waits in line, no pause
    expect(sent).toEqual([]);
    expect(notes).toHaveLength(2);
    expect(notes[0]).toBeGreaterThan(0);
    expect(notes[1]).toBe(0);
  });

  it('after a busy try, and while the line is open, asks for its turn and gives it back', async () => {
    const { turns, sent, notes } = child();
    const first = turns.take(true);
    expect(first).toBeInstanceOf(Promise);
    turns.granted();
    await first;
    expect(turns.give()).toBe(true); // a busy try in its turn: held outside the line, pause
    turns.lineChanged(true);
    const second = turns.take(false);
    turns.granted();
    await second;
    turns.give();
    turns.lineChanged(false);
    expect(turns.take(false)).toBeUndefined();
    expect(sent).toEqual(['turn-take', 'turn-give', 'turn-take', 'turn-give']);
    expect(notes).toHaveLength(1); // only the last write went without a turn
  });

  it('without a supervisor there is no line: writes go at once, and a busy try pauses', () => {
    const { turns, sent } = child(false);
    turns.lineChanged(true);
    expect(turns.take(true)).toBeUndefined();
    expect(turns.give()).toBe(true);
    expect(sent).toEqual([]);
  });
});
