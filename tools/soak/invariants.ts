// The invariants the soak proves, as pure checks over what it collected (collect.ts): each answers how
// many things it looked at and every violation, so that a unit test can hand it fabricated rows and
// see it fail (test/soak/invariants.test.ts).

export interface SentRow {
  id: string;
  requestId: string | null;
  /** The call's operation (for the report). */
  operation?: string;
  createdAt: number;
  /** Whether the process that wrote it still holds its writer lease (null: no lease known). */
  writerAlive: boolean | null;
  /** Whether its call may still be in flight when the soak looked (a background job's, after waiting). */
  inFlight?: boolean;
}

export interface KillRecord {
  replica: string;
  at: number;
  inFlight: string[];
}

export interface RecordPair {
  kind: string;
  id: string;
  portico: { status: string; amount: number | null };
  /** Undefined: the provider has no such record. */
  provider?: { status: string; amount: number | null };
}

export interface Transition {
  subjectId: string;
  from: string;
  to: string;
}

export interface EventRow {
  id: string;
  resourceId: string;
  previousStatus: string;
  status: string;
  createdAt: number;
}

export interface EndpointRow {
  id: string;
  tenant: string;
  kind: 'healthy' | 'flaky' | 'dead' | 'removed';
  removedAt: number | null;
  pausedAt: number | null;
}

export interface Snapshot {
  chain: { ok: boolean; detail: string };
  sentRows: SentRow[];
  kills: KillRecord[];
  inDoubt: {
    table: string;
    id: string;
    status: string;
    /**
     * An open-banking payment whose bank id never arrived (no lookup exists): the bank's status of the
     * payment with its remittance, null when the bank holds none.
     */
    noLookup?: { bankStatus: string | null };
  }[];
  records: RecordPair[];
  transitions: Transition[];
  events: EventRow[];
  /** event id -> tenant slug (the events of the apps' tenants). */
  eventTenant: Map<string, string>;
  endpoints: EndpointRow[];
  /** `${kind}/${tenant}` -> event ids received. */
  received: Map<string, Set<string>>;
  /** Attempts started after the endpoint was paused or removed. */
  attemptsAfterStop: { endpointId: string; startedAt: number }[];
  /** `${eventId}/${endpointId}` -> where an undelivered delivery stands (a diagnostic). */
  deliveryNotes?: Map<string, string>;
  fiveHundreds: string[];
  unexpectedExits: string[];
  crossTenant: string[];
}

export interface CheckResult {
  invariant: string;
  checked: number;
  violations: string[];
}

const sample = (violations: string[]) => violations;

export function checkChain(s: Snapshot): CheckResult {
  return {
    invariant: 'the chain and its checkpoints verify',
    checked: 1,
    violations: s.chain.ok ? [] : [s.chain.detail],
  };
}

/**
 * A `sent` row is excused only as a call of a process that died with it: its writer's lease lapsed (the
 * soak kills one replica; any other death fails its own invariant), or its request was in flight on the
 * killed replica at the kill instant, or its call is still in flight (a background job's, still within
 * its deadline after the soak waited). A row whose writer lives had its outcome to write.
 */
export function checkSentRows(s: Snapshot): CheckResult {
  const violations: string[] = [];
  for (const row of s.sentRows) {
    const excused =
      row.inFlight === true ||
      (s.kills.length > 0 && row.writerAlive === false) ||
      s.kills.some((kill) => row.requestId !== null && kill.inFlight.includes(row.requestId));
    if (!excused)
      violations.push(
        `access_log ${row.id} (${row.operation ?? 'operation ?'} at ${new Date(row.createdAt).toISOString()}, request ${row.requestId ?? '-'}, writer ${row.writerAlive === null ? 'unknown' : 'alive'}) left sent`,
      );
  }
  return {
    invariant: "no access-log row is sent but the killed process's in-flight calls",
    checked: s.sentRows.length,
    violations: sample(violations),
  };
}

/**
 * Statuses of a payment at the bank that moved no money and never will without the user's SCA (which
 * needed the link the lost answer held): received, or ended unexecuted.
 */
const UNEXECUTED = new Set(['RCVD', 'RJCT', 'CANC']);

/**
 * Nothing in doubt, with one exact exception (docs/decisions.md): an open-banking payment whose bank id
 * never arrived stays in doubt until its lifetime, by design, and is excused only while the bank holds
 * no such payment or holds it unexecuted.
 */
export function checkInDoubt(s: Snapshot): CheckResult {
  const violations: string[] = [];
  for (const row of s.inDoubt) {
    const bank = row.noLookup?.bankStatus;
    if (!row.noLookup) violations.push(`${row.table} ${row.id} still ${row.status}`);
    else if (bank !== null && bank !== undefined && !UNEXECUTED.has(bank))
      violations.push(`${row.table} ${row.id} still ${row.status}, the bank's is ${bank}`);
  }
  const excused = s.inDoubt.length - violations.length;
  return {
    invariant: `no row left in doubt after settling (${excused} without a bank id excused)`,
    checked: s.inDoubt.length,
    violations,
  };
}

export function checkRecords(s: Snapshot): CheckResult {
  const violations: string[] = [];
  for (const pair of s.records) {
    if (!pair.provider) violations.push(`${pair.kind} ${pair.id}: the provider has no such record`);
    else if (pair.provider.status !== pair.portico.status)
      violations.push(
        `${pair.kind} ${pair.id}: Portico ${pair.portico.status}, provider ${pair.provider.status}`,
      );
    else if (
      pair.portico.amount !== null &&
      pair.provider.amount !== null &&
      pair.portico.amount !== pair.provider.amount
    )
      violations.push(
        `${pair.kind} ${pair.id}: Portico amount ${pair.portico.amount}, provider ${pair.provider.amount}`,
      );
  }
  return {
    invariant: "Portico's record equals the provider's (status, amount)",
    checked: s.records.length,
    violations,
  };
}

export function checkEvents(s: Snapshot): CheckResult {
  const violations: string[] = [];
  const keyOf = (subject: string, from: string, to: string) => `${subject} ${from}→${to}`;
  const events = new Map<string, EventRow[]>();
  for (const event of s.events) {
    const key = keyOf(event.resourceId, event.previousStatus, event.status);
    events.set(key, [...(events.get(key) ?? []), event]);
  }
  const transitions = new Map<string, number>();
  for (const t of s.transitions) {
    const key = keyOf(t.subjectId, t.from, t.to);
    transitions.set(key, (transitions.get(key) ?? 0) + 1);
  }
  for (const [key, count] of transitions) {
    const found = events.get(key)?.length ?? 0;
    if (found !== count) violations.push(`${key}: ${count} transition(s), ${found} event(s)`);
  }
  for (const [key, list] of events)
    if (!transitions.has(key)) violations.push(`${key}: ${list.length} event(s) for no transition`);
  // Delivered at least once to every healthy endpoint of its tenant registered before it.
  let deliveries = 0;
  for (const event of s.events) {
    const tenant = s.eventTenant.get(event.id);
    if (!tenant) continue;
    for (const endpoint of s.endpoints) {
      if (endpoint.tenant !== tenant) continue;
      const got = s.received.get(`${endpoint.kind}/${tenant}`)?.has(event.id) ?? false;
      if (endpoint.kind === 'healthy' || endpoint.kind === 'flaky') {
        deliveries++;
        if (!got)
          violations.push(
            `event ${event.id} never delivered to the ${endpoint.kind} endpoint of ${tenant}` +
              (s.deliveryNotes?.has(`${event.id}/${endpoint.id}`)
                ? ` (${s.deliveryNotes.get(`${event.id}/${endpoint.id}`)})`
                : ''),
          );
      } else if (
        endpoint.kind === 'removed' &&
        endpoint.removedAt !== null &&
        event.createdAt > endpoint.removedAt &&
        got
      )
        violations.push(`event ${event.id} delivered to ${tenant}'s removed endpoint`);
    }
  }
  for (const attempt of s.attemptsAfterStop)
    violations.push(`an attempt to the paused or removed endpoint ${attempt.endpointId}`);
  for (const endpoint of s.endpoints)
    if (endpoint.kind === 'dead' && endpoint.pausedAt === null)
      violations.push(`the dead endpoint of ${endpoint.tenant} was never paused`);
  return {
    invariant: 'one event per transition; delivered to healthy endpoints only',
    checked: s.transitions.length + deliveries,
    violations,
  };
}

export function checkProcesses(s: Snapshot): CheckResult {
  return {
    invariant: "no 500, no death but the kill, no other tenant's data",
    checked: 1,
    violations: [
      ...s.fiveHundreds.map((line) => `500: ${line}`),
      ...s.unexpectedExits,
      ...s.crossTenant.map((line) => `leak: ${line}`),
    ],
  };
}

export const CHECKS = [
  checkChain,
  checkSentRows,
  checkInDoubt,
  checkRecords,
  checkEvents,
  checkProcesses,
];

export function checkAll(s: Snapshot): CheckResult[] {
  return CHECKS.map((check) => check(s));
}

/** The results as a table (first violations of each shown), and whether all held. */
export function renderTable(results: CheckResult[], shown = 5): { text: string; ok: boolean } {
  const width = Math.max(...results.map((r) => r.invariant.length));
  const lines = [`| ${'invariant'.padEnd(width)} | checked | violations | verdict |`];
  lines.push(`| ${'-'.repeat(width)} | ------- | ---------- | ------- |`);
  for (const r of results)
    lines.push(
      `| ${r.invariant.padEnd(width)} | ${String(r.checked).padStart(7)} | ${String(r.violations.length).padStart(10)} | ${r.violations.length ? 'FAIL   ' : 'ok     '} |`,
    );
  for (const r of results.filter((result) => result.violations.length))
    lines.push(
      `\n${r.invariant}:`,
      ...r.violations.slice(0, shown).map((v) => `  - ${v}`),
      ...(r.violations.length > shown ? [`  … and ${r.violations.length - shown} more`] : []),
    );
  return { text: lines.join('\n'), ok: results.every((r) => r.violations.length === 0) };
}
