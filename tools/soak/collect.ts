// Gathers what the invariants check, after the settling period: the database's rows, the provider's
// record (the sandbox's state, read in this process), the receivers' arrivals, the soak's own tallies.
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import type { RunningSandbox } from '#src/sandbox/sandbox.js';
import { STATUS_CHANGE_EVENTS } from '#src/webhooks/webhook-event-types.js';
import type { SubjectKind } from '#src/audit/trail/status-change.entity.js';
import type { SoakTenant } from './drivers.js';
import type { Kill } from './faults.js';
import type { SoakHttp } from './http.js';
import type { EndpointRow, RecordPair, Snapshot } from './invariants.js';
import type { Receiver } from './receivers.js';
import { query, type Replica } from './rig.js';

/** The organizationIdentifier of certs/dev/tpp.pem: the bank keeps consents and payments per TPP. */
const TPP_ID = 'PSDGR-BOG-123456';
const LOCAL_STATUSES = new Set(['creating', 'unknown', 'failed']);

/** The longest a call without a deadline of its own stays in flight (the soak's longest read deadline, with room). */
const IN_FLIGHT_MS = 20_000;
/** The longest the soak waits for an event written just before its snapshot to arrive. */
const DELIVERY_WAIT_MS = 60_000;

export interface CollectInput {
  url: string;
  sandbox: RunningSandbox;
  tenants: SoakTenant[];
  endpoints: { id: string; tenant: string; kind: EndpointRow['kind'] }[];
  receivers: Receiver[];
  http: SoakHttp;
  replicas: Replica[];
  kills: Kill[];
  /** When the soak moved the provider's clock ahead (real time), if it did. */
  clockMovedAt?: number;
}

type Book = ReturnType<RunningSandbox['card']['merchantBook']>;

/**
 * Statuses compared as one where no API tells them apart: an IRIS session has no read at the provider,
 * so a payment form whose answer was lost may have `initiated` it there while Portico keeps `created`;
 * both are the open, unpaid session (docs/operations.md, the soak's invariants).
 */
const OBSERVABLE: Record<string, (status: string) => string> = {
  iris_session: (status) => (status === 'created' || status === 'initiated' ? 'open' : status),
};
type ProviderView = { status: string; amount: number | null } | undefined;

/**
 * The provider's record of each kind, in the words Portico keeps (its status vocabulary where the
 * provider's API spells it otherwise: a marketplace transfer's status follows from its fields, a
 * customer is active or deleted, a wallet tokenisation is done at the provider once its card token is).
 */
const PROVIDER_VIEW: Record<
  string,
  (sandbox: RunningSandbox, book: Book, token: string, at: SnapshotClock) => ProviderView
> = {
  payment: (_, book, token) => pick(book?.payments.get(token)),
  refund: (_, book, token) => pick(book?.refunds.get(token)),
  // The provider answers a voided payment CAPTURED (its void is a transaction of its own); Portico
  // holds it VOIDED once the void is captured.
  pos_payment: (sandbox, _, token) => {
    const payment = sandbox.pos.transaction(token);
    if (!payment) return undefined;
    return { status: payment.voidedBy ? 'VOIDED' : payment.status, amount: payment.amount };
  },
  pos_void: (sandbox, _, token) => pick(sandbox.pos.transaction(token)),
  notification: (_, book, token) => pick(book?.notifications.get(token)),
  iris_session: (_, book, token, at) => {
    const session = book?.irisSessions.get(token);
    return session && { status: providerIrisStatus(session, at), amount: session.amount };
  },
  seller: (_, book, token) => {
    const seller = book?.sellers.get(token);
    return seller && { status: seller.status, amount: null };
  },
  customer: (_, book, token) => {
    const customer = book?.customers.get(token);
    return customer && { status: customer.active ? 'active' : 'deleted', amount: null };
  },
  transfer: (_, book, token) => {
    const transfer = book?.transfers.get(token);
    if (!transfer) return undefined;
    const status =
      transfer.reversedAmount === transfer.amount
        ? 'reversed'
        : transfer.payout
          ? 'paid_out'
          : transfer.onHold
            ? 'on_hold'
            : 'pending';
    return { status, amount: transfer.amount };
  },
  // A tokenisation's row is keyed by the card token it made: verified until charged (then used).
  wallet_token: (_, book, token) => {
    const card = book?.tokens.get(token);
    return card && { status: card.used ? 'charged' : 'verified', amount: card.amount ?? null };
  },
  reversal: (_, book, token) => {
    const reversal = book?.reversals.get(token);
    return (
      reversal && { status: reversal.payout ? 'paid_out' : 'pending', amount: reversal.amount }
    );
  },
};

/** The moment both sides are compared at, and how the provider's clock stood against the real one. */
export interface SnapshotClock {
  /** The database snapshot's time (real clock). */
  at: number;
  /** How far the provider's clock is ahead of the real one now (0 when it was never moved). */
  providerOffsetMs: number;
  /** When the provider's clock was moved ahead (real time); a record dated after it was made on the moved clock. */
  movedAt?: number;
}

const OPEN_IRIS = new Set(['created', 'initiated']);

/**
 * An IRIS session as the provider answers it at the snapshot's moment. The sandbox expires an open
 * session only when something touches it, so an untouched one is expired here once its lifetime passed.
 * Its lifetime is judged on the real clock: the soak moved the provider's clock two hours ahead, which
 * expires at the provider every session made before the move, while Portico (on its own clock) keeps
 * it open until its 15 minutes pass; such a session is the open session Portico holds until then.
 */
export function providerIrisStatus(
  session: { status: string; created: string; expires: string },
  clock: SnapshotClock,
): string {
  const madeOnMovedClock =
    clock.movedAt !== undefined && Date.parse(session.created) > clock.movedAt;
  const expiresReal = Date.parse(session.expires) - (madeOnMovedClock ? clock.providerOffsetMs : 0);
  const open = OPEN_IRIS.has(session.status) || session.status === 'expired';
  if (!open) return session.status;
  if (clock.at >= expiresReal) return 'expired';
  return session.status === 'expired' ? 'created' : session.status;
}

/** An IRIS session as Portico answers it at the snapshot's moment: an open one past its lifetime reads expired. */
export function porticoIrisStatus(
  row: { status: string; expiresAt: string | null },
  clock: SnapshotClock,
): string {
  return OPEN_IRIS.has(row.status) && row.expiresAt && clock.at >= Date.parse(row.expiresAt)
    ? 'expired'
    : row.status;
}

/** `${kind}/${tenant}` -> the ids of the events each receiver got. */
function receivedEvents(receivers: Receiver[]): Map<string, Set<string>> {
  const received = new Map<string, Set<string>>();
  for (const receiver of receivers)
    for (const [tenant, arrivals] of receiver.arrivals)
      received.set(
        `${receiver.kind}/${tenant}`,
        new Set(arrivals.map((arrival) => arrival.eventId)),
      );
  return received;
}

function deliveredEverywhere(
  eventId: string,
  eventTenant: Map<string, string>,
  received: Map<string, Set<string>>,
): boolean {
  const tenant = eventTenant.get(eventId);
  return ['healthy', 'flaky'].every((kind) => received.get(`${kind}/${tenant}`)?.has(eventId));
}

/** One REPEATABLE READ transaction: every read sees the database as it stood at `at`. */
class DatabaseSnapshot {
  private constructor(
    private readonly client: pg.Client,
    readonly at: number,
  ) {}

  static async open(url: string): Promise<DatabaseSnapshot> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    // The snapshot is taken by the transaction's first statement: this one.
    const [{ at }] = (await client.query<{ at: Date }>('SELECT clock_timestamp() AS at')).rows;
    return new DatabaseSnapshot(client, at.getTime());
  }

  async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.client.query(sql, params)).rows as T[];
  }

  async close(): Promise<void> {
    await this.client.query('ROLLBACK').catch(() => undefined);
    await this.client.end();
  }
}

function pick(record: { status: string; amount: number } | undefined): ProviderView {
  return record && { status: record.status, amount: record.amount };
}

export async function collect(input: CollectInput): Promise<Snapshot> {
  const { url } = input;

  const verify = spawnSync(
    process.execPath,
    ['dist/cli/main.js', 'audit:verify', '--seal', '--json'],
    {
      env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'error' },
      encoding: 'utf8',
      timeout: 300_000,
    },
  );
  const chain = {
    ok: verify.status === 0,
    detail: `audit:verify exited ${verify.status}: ${(verify.stdout || verify.stderr).slice(0, 400).replace(/\s+/g, ' ')}`,
  };

  // The replicas' background jobs go on calling the provider while the soak collects: a row whose call
  // may still be in flight (its deadline, or the longest a read has, not yet past) is looked at again
  // once it is, and excused only if still in flight after that.
  const readSent = async () =>
    (
      await query<{
        id: string;
        request_id: string | null;
        operation: string;
        created_at: Date;
        alive: boolean | null;
        in_flight: boolean;
      }>(
        url,
        `SELECT a.id, a.request_id, a.operation, a.created_at, l.expires_at >= now() AS alive,
                coalesce(a.deadline_at, a.created_at + make_interval(secs => $1::double precision / 1000))
                  + interval '5 seconds' > now() AS in_flight
           FROM access_log a LEFT JOIN writer_leases l ON l.writer = a.writer
          WHERE a.outcome = 'sent'`,
        [IN_FLIGHT_MS],
      )
    ).map((row) => ({
      id: row.id,
      requestId: row.request_id,
      operation: row.operation,
      createdAt: row.created_at.getTime(),
      writerAlive: row.alive,
      inFlight: row.in_flight,
    }));
  let sentRows = await readSent();
  for (let waited = 0; sentRows.some((row) => row.inFlight) && waited < 40_000; waited += 2_000) {
    await new Promise((done) => setTimeout(done, 2_000));
    const again = new Map((await readSent()).map((row) => [row.id, row]));
    // A row in flight before may be completed now; a row that was not in flight keeps its verdict.
    sentRows = sentRows.flatMap((row) =>
      row.inFlight ? (again.has(row.id) ? [again.get(row.id)!] : []) : [row],
    );
  }

  // Everything below is read in one snapshot of the database (the replicas' background jobs go on
  // expiring sessions and writing events while the soak collects), and the provider's records are
  // judged at the snapshot's moment.
  const snapshot = await DatabaseSnapshot.open(url);
  try {
    return await collectSnapshot(input, snapshot, chain, sentRows);
  } finally {
    await snapshot.close();
  }
}

async function collectSnapshot(
  input: CollectInput,
  snapshot: DatabaseSnapshot,
  chain: Snapshot['chain'],
  sentRows: Snapshot['sentRows'],
): Promise<Snapshot> {
  const { sandbox } = input;
  const tenantIds = input.tenants.map((tenant) => tenant.id);
  const slugOf = new Map(input.tenants.map((tenant) => [tenant.id, tenant.slug]));
  const clock: SnapshotClock = {
    at: snapshot.at,
    providerOffsetMs: Math.max(0, sandbox.card.now().getTime() - Date.now()),
    movedAt: input.clockMovedAt,
  };
  const doubtful = await snapshot.query<{
    table: string;
    id: string;
    status: string;
    upstream: string | null;
    remittance: string | null;
  }>(`SELECT 'consents' AS table, id, status, upstream_consent_id AS upstream, NULL AS remittance
       FROM consents WHERE status IN ('creating', 'unknown')
     UNION ALL SELECT 'payments', id, status, upstream_payment_id,
            details->>'remittanceInformationUnstructured' FROM payments WHERE status IN ('creating', 'unknown')
     UNION ALL SELECT 'provider_resources ' || kind, id, status, token, NULL FROM provider_resources
       WHERE status IN ('creating', 'unknown')`);
  // The bank's payments by their (unique) remittance: the soak reads the sandbox's own state.
  const bankPayments = new Map<string, string>();
  const bankState = (
    sandbox.bank as unknown as {
      state?: {
        payments: Iterable<[string, { details: Record<string, unknown>; status: string }]>;
      };
    }
  ).state;
  for (const [, payment] of bankState?.payments ?? [])
    if (typeof payment.details.remittanceInformationUnstructured === 'string')
      bankPayments.set(payment.details.remittanceInformationUnstructured, payment.status);
  const inDoubt = doubtful.map((row) => ({
    table: row.table,
    id: row.id,
    status: row.status,
    // An open-banking payment whose id never arrived: Berlin Group has no other lookup.
    noLookup:
      row.table === 'payments' && !row.upstream
        ? {
            bankStatus: row.remittance
              ? (bankPayments.get(row.remittance) ?? null)
              : 'unknown (no remittance)',
          }
        : undefined,
  }));

  const records: RecordPair[] = [];
  const merchantOf = new Map(input.tenants.map((tenant) => [tenant.id, tenant.merchantId]));
  const resources = await snapshot.query<{
    id: string;
    tenant_id: string;
    kind: string;
    token: string | null;
    status: string;
    amount: number | null;
    expires_at: string | null;
  }>(
    `SELECT id, tenant_id, kind, token, status, amount, data->>'expires_at' AS expires_at FROM provider_resources
      WHERE tenant_id = ANY($1) AND kind = ANY($2)
        AND token IS NOT NULL AND status NOT IN ('creating', 'unknown', 'failed')`,
    [tenantIds, Object.keys(PROVIDER_VIEW)],
  );
  for (const row of resources) {
    const book = sandbox.card.merchantBook(merchantOf.get(row.tenant_id) ?? '');
    const provider = PROVIDER_VIEW[row.kind]?.(sandbox, book, row.token!, clock);
    const seen = OBSERVABLE[row.kind] ?? ((status: string) => status);
    const status =
      row.kind === 'iris_session'
        ? porticoIrisStatus({ status: row.status, expiresAt: row.expires_at }, clock)
        : row.status;
    records.push({
      kind: row.kind,
      id: row.token!,
      portico: {
        status: seen(status),
        amount: row.amount === null ? null : Number(row.amount),
      },
      provider: provider && { ...provider, status: seen(provider.status) },
    });
  }
  const bankCall = (operationId: string, params: Record<string, string>) =>
    sandbox.bank.handle({
      operationId,
      params,
      query: {},
      headers: {},
      body: undefined,
      tppId: TPP_ID,
    });
  for (const consent of await snapshot.query<{
    id: string;
    kind: string;
    brand_id: string;
    upstream_consent_id: string | null;
    status: string;
  }>(
    `SELECT id, kind, brand_id, upstream_consent_id, status FROM consents WHERE tenant_id = ANY($1)`,
    [tenantIds],
  )) {
    if (!consent.upstream_consent_id || LOCAL_STATUSES.has(consent.status)) continue;
    const answer = bankCall(consent.kind === 'cof' ? 'getCofConsentStatus' : 'getConsentStatus', {
      brandId: consent.brand_id,
      consentId: consent.upstream_consent_id,
    });
    const status = (answer.body as { consentStatus?: string } | undefined)?.consentStatus;
    records.push({
      kind: `consent (${consent.kind})`,
      id: consent.id,
      portico: { status: consent.status, amount: null },
      provider: answer.status === 200 && status ? { status, amount: null } : undefined,
    });
  }
  for (const payment of await snapshot.query<{
    id: string;
    brand_id: string;
    payment_product: string;
    upstream_payment_id: string | null;
    status: string;
  }>(
    `SELECT id, brand_id, payment_product, upstream_payment_id, status FROM payments WHERE tenant_id = ANY($1)`,
    [tenantIds],
  )) {
    if (!payment.upstream_payment_id || LOCAL_STATUSES.has(payment.status)) continue;
    const answer = bankCall('getPaymentStatus', {
      brandId: payment.brand_id,
      paymentProduct: payment.payment_product,
      paymentId: payment.upstream_payment_id,
    });
    const status = (answer.body as { transactionStatus?: string } | undefined)?.transactionStatus;
    records.push({
      kind: 'payment',
      id: payment.id,
      portico: { status: payment.status, amount: null },
      provider: answer.status === 200 && status ? { status, amount: null } : undefined,
    });
  }

  const eventful = Object.entries(STATUS_CHANGE_EVENTS)
    .filter(([, event]) => event)
    .map(([kind]) => kind as SubjectKind);
  const transitions = (
    await snapshot.query<{ subject_id: string; from_status: string; to_status: string }>(
      `SELECT subject_id, from_status, to_status FROM status_changes
        WHERE tenant_id = ANY($1) AND subject_kind = ANY($2) AND from_status IS NOT NULL`,
      [tenantIds, eventful],
    )
  ).map((row) => ({ subjectId: row.subject_id, from: row.from_status, to: row.to_status }));
  const eventRows = await snapshot.query<{
    id: string;
    tenant_id: string;
    resource_id: string;
    body: string;
    created_at: Date;
  }>(
    `SELECT id, tenant_id, resource_id, body, created_at FROM webhook_events
      WHERE tenant_id = ANY($1) AND type LIKE '%.status_changed'`,
    [tenantIds],
  );
  const eventTenant = new Map<string, string>();
  const events = eventRows.map((row) => {
    const data = (JSON.parse(row.body) as { data: { previousStatus: string; status: string } })
      .data;
    eventTenant.set(row.id, slugOf.get(row.tenant_id) ?? row.tenant_id);
    return {
      id: row.id,
      resourceId: row.resource_id,
      previousStatus: data.previousStatus,
      status: data.status,
      createdAt: row.created_at.getTime(),
    };
  });

  const endpointRows = await snapshot.query<{
    id: string;
    removed_at: Date | null;
    paused_at: Date | null;
  }>(`SELECT id, removed_at, paused_at FROM webhook_endpoints WHERE id = ANY($1)`, [
    input.endpoints.map((endpoint) => endpoint.id),
  ]);
  const endpoints: EndpointRow[] = input.endpoints.map((endpoint) => {
    const row = endpointRows.find((candidate) => candidate.id === endpoint.id);
    return {
      ...endpoint,
      removedAt: row?.removed_at?.getTime() ?? null,
      pausedAt: row?.paused_at?.getTime() ?? null,
    };
  });
  const attemptsAfterStop = (
    await snapshot.query<{ endpoint_id: string; started_at: Date }>(
      `SELECT a.endpoint_id, a.started_at FROM webhook_attempts a JOIN webhook_endpoints e ON e.id = a.endpoint_id
        WHERE e.id = ANY($1)
          AND ((e.paused_at IS NOT NULL AND a.started_at > e.paused_at)
            OR (e.removed_at IS NOT NULL AND a.started_at > e.removed_at))`,
      [input.endpoints.map((endpoint) => endpoint.id)],
    )
  ).map((row) => ({ endpointId: row.endpoint_id, startedAt: row.started_at.getTime() }));
  // Where each delivery to a healthy endpoint stands: named beside an event that never arrived.
  const deliveryNotes = new Map<string, string>();
  for (const row of await snapshot.query<{
    event_id: string;
    endpoint_id: string;
    status: string;
    next_attempt_at: Date | null;
    attempts: string;
    last_status: number | null;
  }>(
    `SELECT d.event_id, d.endpoint_id, d.status, d.next_attempt_at,
            (SELECT count(*) FROM webhook_attempts a WHERE a.delivery_id = d.id) AS attempts,
            (SELECT a.response_status FROM webhook_attempts a WHERE a.delivery_id = d.id
              ORDER BY a.started_at DESC LIMIT 1) AS last_status
       FROM webhook_deliveries d WHERE d.endpoint_id = ANY($1) AND d.delivered_at IS NULL`,
    [input.endpoints.filter((e) => e.kind === 'healthy' || e.kind === 'flaky').map((e) => e.id)],
  ))
    deliveryNotes.set(
      `${row.event_id}/${row.endpoint_id}`,
      `delivery ${row.status}, ${row.attempts} attempts (last ${row.last_status ?? '-'}), next ${row.next_attempt_at?.toISOString().slice(11, 19) ?? '-'}`,
    );
  // An event written just before the snapshot may still be on its way: its delivery is waited for
  // (up to DELIVERY_WAIT_MS) before an event not received counts.
  const owed = events.filter((event) => eventTenant.has(event.id));
  let received = receivedEvents(input.receivers);
  for (
    const until = Date.now() + DELIVERY_WAIT_MS;
    Date.now() < until &&
    owed.some((event) => !deliveredEverywhere(event.id, eventTenant, received));
    received = receivedEvents(input.receivers)
  )
    await new Promise((done) => setTimeout(done, 1_000));

  return {
    chain,
    sentRows,
    kills: input.kills,
    inDoubt,
    records,
    transitions,
    events,
    eventTenant,
    endpoints,
    received,
    attemptsAfterStop,
    deliveryNotes,
    fiveHundreds: input.http.fiveHundreds,
    unexpectedExits: input.replicas.flatMap((replica) => replica.unexpectedExits),
    crossTenant: input.http.crossTenant,
  };
}
