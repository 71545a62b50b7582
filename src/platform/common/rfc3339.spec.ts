import { describe, expect, it } from '@jest/globals';
import { RFC3339_UTC, toRfc3339Utc } from './rfc3339.js';

describe('toRfc3339Utc', () => {
  it.each([
    ['2026-11-28T05:56:01+0000', '2026-11-28T05:56:01Z'],
    ['2026-11-28T07:56:01+0200', '2026-11-28T05:56:01Z'],
    ['2026-11-28T00:30:00-01:30', '2026-11-28T02:00:00Z'],
    ['2026-11-28 05:56:01', '2026-11-28T05:56:01Z'],
    ['2026-11-28 05:58:15 AM', '2026-11-28T05:58:15Z'],
    ['2026-11-28 12:05:00 AM', '2026-11-28T00:05:00Z'],
    ['2026-11-28 12:05:00 PM', '2026-11-28T12:05:00Z'],
    ['2026-11-28 01:05:00 PM', '2026-11-28T13:05:00Z'],
    ['2026-11-28T05:56:01.123Z', '2026-11-28T05:56:01.123Z'],
    ['2026-11-28T05:56:01.000Z', '2026-11-28T05:56:01Z'],
    ['2026-12-31T23:30:00-0100', '2027-01-01T00:30:00Z'],
  ])('reads %s as %s', (provider, facade) => {
    expect(toRfc3339Utc(provider)).toBe(facade);
    expect(toRfc3339Utc(provider)).toMatch(RFC3339_UTC);
  });

  it('passes a text that is no timestamp on unchanged', () => {
    expect(toRfc3339Utc('soon')).toBe('soon');
    expect(toRfc3339Utc('2026-11-28 13:05:00 PM')).toBe('2026-11-28 13:05:00 PM');
  });
});
