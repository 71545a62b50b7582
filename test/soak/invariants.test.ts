import { describe, expect, it } from '@jest/globals';
import {
  checkAll,
  checkEvents,
  checkInDoubt,
  checkSentRows,
  renderTable,
  type Snapshot,
} from '../../tools/soak/invariants.js';
import { plantViolations } from '../../tools/soak/tamper.js';

// The soak's checks over fabricated rows: a clean snapshot passes, and each check fails on a violation
// of its own kind (an invariant that can never fail is a defect).
const T0 = Date.parse('2026-11-23T10:00:00Z');

function clean(): Snapshot {
  return {
    chain: { ok: true, detail: '' },
    sentRows: [],
    kills: [{ replica: 'replica-2', at: T0, inFlight: ['req-cut'] }],
    inDoubt: [],
    records: [
      {
        kind: 'payment',
        id: 'pmt_1',
        portico: { status: 'Captured', amount: 100 },
        provider: { status: 'Captured', amount: 100 },
      },
    ],
    transitions: [{ subjectId: 'p1', from: 'creating', to: 'Captured' }],
    events: [
      { id: 'e1', resourceId: 'p1', previousStatus: 'creating', status: 'Captured', createdAt: T0 },
    ],
    eventTenant: new Map([['e1', 'acme']]),
    endpoints: [
      { id: 'h', tenant: 'acme', kind: 'healthy', removedAt: null, pausedAt: null },
      { id: 'f', tenant: 'acme', kind: 'flaky', removedAt: null, pausedAt: null },
      { id: 'd', tenant: 'acme', kind: 'dead', removedAt: null, pausedAt: T0 },
      { id: 'r', tenant: 'acme', kind: 'removed', removedAt: T0 - 1, pausedAt: null },
    ],
    received: new Map([
      ['healthy/acme', new Set(['e1'])],
      ['flaky/acme', new Set(['e1'])],
    ]),
    attemptsAfterStop: [],
    fiveHundreds: [],
    unexpectedExits: [],
    crossTenant: [],
  };
}

describe('the soak invariants', () => {
  it('hold on a clean snapshot', () => {
    expect(checkAll(clean()).flatMap((result) => result.violations)).toEqual([]);
    expect(renderTable(checkAll(clean())).ok).toBe(true);
  });

  it('each fails on the violation planted for it (the --tamper self-test)', () => {
    const planted = checkAll(plantViolations(clean()));
    expect(planted.map((result) => result.violations.length > 0)).toEqual(planted.map(() => true));
    expect(renderTable(planted).ok).toBe(false);
  });

  const iso = (ms: number) => new Date(ms).toISOString();

  it('excuses a sent row only as a call of a process that died with it, or one still in flight', () => {
    const s = clean();
    s.sentRows = [
      { id: '1', requestId: 'req-cut', createdAt: T0 - 100, writerAlive: true },
      { id: '2', requestId: null, createdAt: T0 - 1000, writerAlive: false },
      {
        id: '3',
        requestId: 'req-other',
        operation: 'getAccounts',
        createdAt: T0 - 100,
        writerAlive: true,
      },
      { id: '4', requestId: null, createdAt: T0 + 1000, writerAlive: true },
      { id: '5', requestId: null, createdAt: T0 - 100, writerAlive: null },
      // A background job's call still within its deadline when the soak looked.
      { id: '6', requestId: null, createdAt: T0 + 2000, writerAlive: true, inFlight: true },
    ];
    expect(checkSentRows(s).violations).toEqual([
      `access_log 3 (getAccounts at ${iso(T0 - 100)}, request req-other, writer alive) left sent`,
      `access_log 4 (operation ? at ${iso(T0 + 1000)}, request -, writer alive) left sent`,
      `access_log 5 (operation ? at ${iso(T0 - 100)}, request -, writer unknown) left sent`,
    ]);
  });

  it('counts a second event for one transition, a delivery to a removed endpoint, an attempt after a pause', () => {
    const s = clean();
    s.events.push({
      id: 'e2',
      resourceId: 'p1',
      previousStatus: 'creating',
      status: 'Captured',
      createdAt: T0,
    });
    s.eventTenant.set('e2', 'acme');
    s.received.get('healthy/acme')!.add('e2');
    s.received.get('flaky/acme')!.add('e2');
    s.received.set('removed/acme', new Set(['e2']));
    s.attemptsAfterStop.push({ endpointId: 'd', startedAt: T0 + 5 });
    expect(checkEvents(s).violations).toEqual([
      'p1 creating→Captured: 1 transition(s), 2 event(s)',
      "event e2 delivered to acme's removed endpoint",
      'an attempt to the paused or removed endpoint d',
    ]);
  });

  it('excuses a row in doubt only as a payment without a bank id that the bank holds unexecuted or not at all', () => {
    const s = clean();
    s.inDoubt = [
      {
        table: 'payments',
        id: 'no-id-received',
        status: 'unknown',
        noLookup: { bankStatus: 'RCVD' },
      },
      { table: 'payments', id: 'no-id-absent', status: 'unknown', noLookup: { bankStatus: null } },
      {
        table: 'payments',
        id: 'no-id-executed',
        status: 'unknown',
        noLookup: { bankStatus: 'ACSC' },
      },
      { table: 'payments', id: 'with-id', status: 'unknown' },
      { table: 'consents', id: 'consent', status: 'unknown' },
    ];
    const result = checkInDoubt(s);
    expect(result.violations).toEqual([
      "payments no-id-executed still unknown, the bank's is ACSC",
      'payments with-id still unknown',
      'consents consent still unknown',
    ]);
    expect(result.invariant).toContain('2 without a bank id excused');
  });

  it('sees an event the flaky endpoint never got after it recovered', () => {
    const s = clean();
    s.received.set('flaky/acme', new Set());
    expect(checkEvents(s).violations).toEqual([
      'event e1 never delivered to the flaky endpoint of acme',
    ]);
  });
});
