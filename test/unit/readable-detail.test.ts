/** An event's detail as the timeline shows it: the fields that are times read as times. */
import { describe, expect, it } from 'vitest';
import { readableDetail } from '../../src/reports/job-view.js';

const AT = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

describe('readableDetail', () => {
  it('shows *_at and ts fields as times, nested ones too, and leaves the rest', () => {
    expect(readableDetail(JSON.stringify({ run_at: AT, priority: 3 }))).toBe(
      '{"run_at":"2026-01-02 03:04:05Z","priority":3}',
    );
    expect(readableDetail(JSON.stringify({ next: { claimed_at: AT, ts: AT }, list: [{ at: AT }], attempt: 2 }))).toBe(
      '{"next":{"claimed_at":"2026-01-02 03:04:05Z","ts":"2026-01-02 03:04:05Z"},"list":[{"at":"2026-01-02 03:04:05Z"}],"attempt":2}',
    );
  });

  it('keeps a time field that holds no time, and anything that is not a JSON object, as stored', () => {
    expect(readableDetail('{"run_at":null,"format":7,"stats":1}')).toBe('{"run_at":null,"format":7,"stats":1}');
    expect(readableDetail('not json')).toBe('not json');
    expect(readableDetail('[1,2]')).toBe('[1,2]');
    expect(readableDetail(null)).toBeNull();
  });
});
