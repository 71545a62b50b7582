import { describe, expect, it } from '@jest/globals';
import {
  porticoIrisStatus,
  providerIrisStatus,
  type SnapshotClock,
} from '../../tools/soak/collect.js';

// Both sides of an IRIS session are judged at the snapshot's moment: the sandbox expires an untouched
// session only when something reads it, Portico's background job on its interval, and the soak moves
// the provider's clock two hours ahead halfway through.
const MIN = 60_000;
const T0 = Date.parse('2026-11-23T10:00:00Z');
const OFFSET = 2 * 60 * MIN;
const iso = (ms: number) => new Date(ms).toISOString();
/** A session made at `madeAt` on the provider's clock, with the provider's 15-minute lifetime. */
const session = (status: string, madeAt: number) => ({
  status,
  created: iso(madeAt),
  expires: iso(madeAt + 15 * MIN),
});

describe("the soak's view of an IRIS session", () => {
  const unmoved: SnapshotClock = { at: T0 + 20 * MIN, providerOffsetMs: 0 };
  const moved: SnapshotClock = {
    at: T0 + 20 * MIN,
    providerOffsetMs: OFFSET,
    movedAt: T0 + 10 * MIN,
  };

  it('reads an untouched open session past its lifetime as expired at the provider', () => {
    expect(providerIrisStatus(session('created', T0), unmoved)).toBe('expired');
    expect(providerIrisStatus(session('initiated', T0 + 10 * MIN), unmoved)).toBe('initiated');
  });

  it('keeps open a session expired only on the moved clock, until its lifetime passes in real time', () => {
    // Made before the move at T0 + 8 min: expired at the provider by the move, open in real time.
    expect(providerIrisStatus(session('expired', T0 + 8 * MIN), moved)).toBe('created');
    expect(providerIrisStatus(session('expired', T0 + 2 * MIN), moved)).toBe('expired');
  });

  it("judges a session made after the move by the provider's own (moved) lifetime", () => {
    // Made at real T0 + 12 min, dated T0 + 2 h 12 min by the provider.
    expect(providerIrisStatus(session('created', T0 + 12 * MIN + OFFSET), moved)).toBe('created');
    const later = { ...moved, at: T0 + 28 * MIN };
    expect(providerIrisStatus(session('created', T0 + 12 * MIN + OFFSET), later)).toBe('expired');
  });

  it('leaves a session the payer approved as it is', () => {
    expect(providerIrisStatus(session('authorized', T0), unmoved)).toBe('authorized');
  });

  it("reads Portico's open session past its lifetime as expired, as its facade answers it", () => {
    expect(porticoIrisStatus({ status: 'created', expiresAt: iso(T0 + 15 * MIN) }, unmoved)).toBe(
      'expired',
    );
    expect(porticoIrisStatus({ status: 'initiated', expiresAt: iso(T0 + 25 * MIN) }, unmoved)).toBe(
      'initiated',
    );
    expect(porticoIrisStatus({ status: 'captured', expiresAt: iso(T0) }, unmoved)).toBe('captured');
  });
});
