import { describe, expect, it } from '@jest/globals';
import pino from 'pino';
import { isDatabaseUnavailable, whileDatabaseUnavailable } from './database-unavailable.js';

const quiet = pino({ level: 'silent' });
const terminated = Object.assign(new Error('terminating connection due to administrator command'), {
  code: '57P01',
});

describe('a start-up step while the database cannot serve', () => {
  it('tells a terminated session and a refused connection from a wrong request', () => {
    expect(isDatabaseUnavailable(terminated)).toBe(true);
    expect(isDatabaseUnavailable({ driverError: { code: 'ECONNREFUSED' } })).toBe(true);
    expect(
      isDatabaseUnavailable(Object.assign(new Error('duplicate key'), { code: '23505' })),
    ).toBe(false);
  });

  it('tries the step again until the database serves', async () => {
    let calls = 0;
    const sut = await whileDatabaseUnavailable(
      'step',
      async () => {
        if (++calls < 3) throw terminated;
        return 'done';
      },
      quiet,
    );
    expect(sut).toBe('done');
    expect(calls).toBe(3);
  });

  it('stops at once on any other failure, and after its time on this one', async () => {
    let calls = 0;
    const wrong = new Error('no such tenant');
    await expect(
      whileDatabaseUnavailable('step', () => Promise.reject((calls++, wrong)), quiet),
    ).rejects.toBe(wrong);
    expect(calls).toBe(1);
    await expect(
      whileDatabaseUnavailable('step', () => Promise.reject(terminated), quiet, 600),
    ).rejects.toBe(terminated);
  });
});
