// One fabricated violation of each kind, added to a collected snapshot: `--tamper` and the unit test use
// it to show that no check is one that can never fail.
import type { Snapshot } from './invariants.js';

export function plantViolations(s: Snapshot): Snapshot {
  const now = Date.now();
  const tenant = s.endpoints[0]?.tenant ?? 'tenant-a';
  const eventId = '00000000-0000-4000-8000-00000000e001';
  const pausedDead = s.endpoints.find((e) => e.kind === 'dead');
  return {
    ...s,
    chain: { ok: false, detail: 'planted: row-edited at link 7' },
    sentRows: [
      ...s.sentRows,
      { id: 'planted', requestId: 'not-in-flight', createdAt: now, writerAlive: true },
    ],
    inDoubt: [...s.inDoubt, { table: 'payments', id: 'planted', status: 'unknown' }],
    records: [
      ...s.records,
      {
        kind: 'payment',
        id: 'planted',
        portico: { status: 'Captured', amount: 100 },
        provider: { status: 'Captured', amount: 99 },
      },
    ],
    // A transition with no event, and an event delivered to nobody healthy.
    transitions: [...s.transitions, { subjectId: 'planted', from: 'RCVD', to: 'ACSC' }],
    events: [
      ...s.events,
      { id: eventId, resourceId: 'planted-2', previousStatus: 'a', status: 'b', createdAt: now },
    ],
    eventTenant: new Map([...s.eventTenant, [eventId, tenant]]),
    endpoints: s.endpoints.length
      ? s.endpoints.map((e) => (e === pausedDead ? { ...e, pausedAt: null } : e))
      : [{ id: 'e1', tenant, kind: 'healthy', removedAt: null, pausedAt: null }],
    attemptsAfterStop: [...s.attemptsAfterStop, { endpointId: 'planted', startedAt: now }],
    fiveHundreds: [...s.fiveHundreds, 'planted GET /v1/me'],
  };
}
