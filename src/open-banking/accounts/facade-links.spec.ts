import { describe, expect, it } from '@jest/globals';
import { facadeLinks } from './facade-links.js';

describe('facadeLinks', () => {
  it("gives a bank's date-time with an offset as RFC 3339 in UTC, and leaves calendar days alone", () => {
    const sut = facadeLinks({
      balances: [
        {
          lastChangeDateTime: '2026-11-28T07:56:01+02:00',
          referenceDate: '2026-11-28',
          _links: { account: { href: '/danube-bank/bg/v1/accounts/acc-1' } },
        },
      ],
    });
    expect(sut.balances[0]).toEqual({
      lastChangeDateTime: '2026-11-28T05:56:01Z',
      referenceDate: '2026-11-28',
      _links: { account: { href: '/v1/accounts/acc-1' } },
    });
  });
});
