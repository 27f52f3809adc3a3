/** The "did you mean" rule: edit distance with swaps, and how close counts as meant. */
import { describe, expect, it } from 'vitest';
import { closest, editDistance } from '../../src/closest.js';

describe('editDistance', () => {
  it('counts insertions, deletions, changes and neighbour swaps as one edit each', () => {
    expect(editDistance('', '')).toBe(0);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('abc', '')).toBe(3);
    expect(editDistance('lease', 'lease')).toBe(0);
    expect(editDistance('lease', 'leas')).toBe(1);
    expect(editDistance('lease', 'please')).toBe(1);
    expect(editDistance('lease', 'leese')).toBe(1);
    expect(editDistance('procesess', 'processes')).toBe(1);
    expect(editDistance('emial', 'email')).toBe(1);
    expect(editDistance('kitten', 'sitting')).toBe(3);
  });
});

describe('closest', () => {
  const keys = ['processes', 'lease_seconds', 'heartbeat_seconds', 'max_retries', 'name', 'handler'];

  it('finds the name meant by a typo', () => {
    expect(closest('procesess', keys)).toBe('processes');
    expect(closest('lease_second', keys)).toBe('lease_seconds');
    expect(closest('max_retires', keys)).toBe('max_retries');
    expect(closest('Handler', keys)).toBe('handler');
  });

  it('suggests nothing when no name is near, or for the name itself', () => {
    expect(closest('colour', keys)).toBeUndefined();
    expect(closest('sms', ['email'])).toBeUndefined();
    expect(closest('name', ['name'])).toBeUndefined();
    expect(closest('x', [])).toBeUndefined();
  });

  it('takes the nearest, and the first listed on a tie', () => {
    expect(closest('abcd', ['abxy', 'abcx'])).toBe('abcx');
    expect(closest('ab', ['ax', 'ay'])).toBe('ax');
  });
});
