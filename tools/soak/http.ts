// Every request the soak sends goes through one client: it picks a live replica, names the request
// (X-Request-ID, so that an access-log row can be traced to it), and records what the invariants need:
// the answers per capability, every 500, the calls in flight on a replica when it was killed, and any
// answer that carried an id another tenant owns.
import { randomUUID } from 'node:crypto';
import type { Replica } from './rig.js';

export interface Tally {
  requests: number;
  ok: number;
  /** 502/503/504 and connection errors: correct answers while a fault is injected. */
  faulted: number;
  status500: number;
  other: number;
  /** The first 4xx answers (status and problem title), to tell a refusal by design from a driver's error. */
  samples: string[];
}

export interface Answer {
  status: number;
  body: Record<string, unknown> & Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  headers: Headers;
}

/** Ids Portico hands out (its UUIDs and the provider's tokens) as they appear in an answer's text. */
const ID_PATTERN =
  /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b(?:pmt|ref|cus|pnt|src|sel|tra|rev|ctn|wlt|pay)_[A-Za-z0-9]{8,}\b/g;

export class SoakHttp {
  readonly tallies = new Map<string, Tally>();
  readonly fiveHundreds: string[] = [];
  readonly crossTenant: string[] = [];
  /** id -> the tenant that created it. */
  private readonly owners = new Map<string, string>();
  /** In flight now: request id -> replica name. */
  private readonly inFlight = new Map<string, string>();
  /** Every request id the soak sent, with its replica. */
  readonly sent = new Map<string, string>();
  private turn = 0;

  constructor(private readonly replicas: () => Replica[]) {}

  tally(capability: string): Tally {
    let tally = this.tallies.get(capability);
    if (!tally) {
      tally = { requests: 0, ok: 0, faulted: 0, status500: 0, other: 0, samples: [] };
      this.tallies.set(capability, tally);
    }
    return tally;
  }

  /** Registers ids as the tenant's own (from its create answers); an id already another's is a leak. */
  own(tenant: string, ...ids: unknown[]): void {
    for (const id of ids) {
      if (typeof id !== 'string' || !id) continue;
      const owner = this.owners.get(id);
      if (owner && owner !== tenant)
        this.crossTenant.push(`${id} created for ${tenant}, ${owner}'s`);
      else this.owners.set(id, tenant);
    }
  }

  /** The request ids in flight on a replica: taken at the instant it is killed. */
  inFlightOn(replica: string): string[] {
    return [...this.inFlight].filter(([, name]) => name === replica).map(([id]) => id);
  }

  async call(
    capability: string,
    tenant: { slug: string; key: string },
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Answer | undefined> {
    const tally = this.tally(capability);
    const live = this.replicas().filter((replica) => replica.child && !replica.child.killed);
    if (live.length === 0) return undefined;
    const replica = live[this.turn++ % live.length];
    const requestId = randomUUID();
    tally.requests++;
    this.inFlight.set(requestId, replica.name);
    this.sent.set(requestId, replica.name);
    try {
      const response = await fetch(`${replica.base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${tenant.key}`,
          'x-request-id': requestId,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: 'manual',
        signal: AbortSignal.timeout(60_000),
      });
      const text = await response.text();
      if (response.status === 500) {
        tally.status500++;
        this.fiveHundreds.push(
          `${method} ${path} (${replica.name}, ${requestId}): ${text.slice(0, 200)}`,
        );
      } else if (response.status < 400) tally.ok++;
      else if ([502, 503, 504].includes(response.status)) tally.faulted++;
      else {
        tally.other++;
        if (tally.samples.length < 3)
          tally.samples.push(
            `${response.status} ${method} ${path.replace(/[0-9a-f-]{36}|[a-z]{3}_\w+/g, ':id')}: ${text.slice(0, 160)}`,
          );
      }
      this.scan(tenant.slug, `${method} ${path}`, text);
      let parsed: Answer['body'] = {};
      try {
        parsed = text ? (JSON.parse(text) as Answer['body']) : {};
      } catch {
        parsed = { text };
      }
      return { status: response.status, body: parsed, headers: response.headers };
    } catch {
      tally.faulted++;
      return undefined;
    } finally {
      this.inFlight.delete(requestId);
    }
  }

  private scan(tenant: string, what: string, text: string): void {
    for (const id of text.match(ID_PATTERN) ?? []) {
      const owner = this.owners.get(id);
      if (owner && owner !== tenant)
        this.crossTenant.push(`${what} answered ${tenant} ${owner}'s ${id}`);
    }
  }
}
