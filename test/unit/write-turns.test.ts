/**
 * The supervisor's write-turn queue: one holder at a time, served in the
 * order asked, the supervisor's own writes in the same line, and a child
 * that leaves (exits) gives up its place and its turn.
 */
import { describe, expect, it } from 'vitest';
import { WriteTurnQueue, type TurnTaker } from '../../supervisor/write-turns.js';

function taker(name: string, granted: string[]): TurnTaker {
  return { turnGranted: () => void granted.push(name) };
}

describe('WriteTurnQueue', () => {
  it('grants one turn at a time, first come first served, the supervisor in the same line', async () => {
    const turns = new WriteTurnQueue();
    const granted: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((name) => taker(name, granted));
    turns.request(a!);
    turns.request(b!);
    const own = turns.take().then(() => void granted.push('supervisor'));
    turns.request(c!);
    expect(granted).toEqual(['a']);

    turns.release(b!); // not the holder: nothing moves
    expect(granted).toEqual(['a']);
    turns.release(a!);
    expect(granted).toEqual(['a', 'b']);
    turns.release(b!);
    await own;
    expect(granted).toEqual(['a', 'b', 'supervisor']);
    turns.give();
    expect(granted).toEqual(['a', 'b', 'supervisor', 'c']);
  });

  it('a child that leaves gives up its turn and its place in line', () => {
    const turns = new WriteTurnQueue();
    const granted: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((name) => taker(name, granted));
    turns.request(a!);
    turns.request(b!);
    turns.request(c!);
    turns.leave(b!);
    turns.leave(a!);
    expect(granted).toEqual(['a', 'c']);
  });
});
