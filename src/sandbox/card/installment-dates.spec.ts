import { describe, expect, it } from '@jest/globals';
import { monthsAfter } from './card-payments.js';

const dates = (first: string, count: number) =>
  Array.from({ length: count }, (_, index) =>
    monthsAfter(new Date(`${first}T10:00:00Z`), index)
      .toISOString()
      .slice(0, 10),
  );

describe('installment due dates (monthsAfter)', () => {
  it('keeps the day of the first due date, a month apart', () => {
    expect(dates('2026-11-30', 3)).toEqual(['2026-11-30', '2026-12-30', '2027-01-30']);
  });

  it('takes the last day of a month without that day, and comes back to it after', () => {
    expect(dates('2027-01-31', 4)).toEqual([
      '2027-01-31',
      '2027-02-28',
      '2027-03-31',
      '2027-04-30',
    ]);
    expect(dates('2027-12-29', 3)).toEqual(['2027-12-29', '2028-01-29', '2028-02-29']);
    expect(dates('2028-01-30', 2)).toEqual(['2028-01-30', '2028-02-29']);
  });
});
