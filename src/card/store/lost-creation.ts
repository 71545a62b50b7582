import type { CardKind, CardKinds, CardRow, CardStore } from './card-store.service.js';

/** What a lookup needs of a provider object found in a list. */
interface Listed {
  token: string;
  date_created: string;
}

/** A window of the provider's list by creation day, one page of it (card.yaml Count, Offset). */
export interface ListWindow {
  date_from: string;
  date_to: string;
  count: number;
  offset: number;
}

/**
 * How far the provider's date_created of a lost creation may lie before its row's creation or after
 * its call's deadline (clocks apart).
 */
export const LOST_CREATION_CLOCK_SKEW_MS = 5 * 60_000;

/** The provider's largest page (card.yaml Count). */
const PAGE = 20;

/** The UTC day of an instant, as the provider's date filters take it. */
const utcDay = (at: number) => new Date(at).toISOString().slice(0, 10);

/** How the resolver looks for one kind's lost creation in the provider's list of that kind. */
export interface LostCreationLookup<K extends CardKind, T extends Listed & CardKinds[K]> {
  /** One page of the provider's list (most recent first), called about the row. */
  list: (query: ListWindow) => Promise<{ items: T[] }>;
  /** Whether a listed object carries what Portico sent (the row's fingerprint, kept in parentToken). */
  matches: (item: T, fingerprint: string) => boolean;
  /** The row's status once found. */
  statusOf: (item: T) => string;
}

/**
 * Settles a creation whose answer was lost, for a kind the provider takes no reference of ours on but
 * lists by creation day: the oldest object of the call's window carrying the row's fingerprint that no
 * row of the tenant holds is the one made (the resolver takes identical rows oldest first); none means
 * not made (failed). While an identical creation is still in its call the row waits for its answer. A
 * list that cannot be read throws: the row stays in doubt for the next pass.
 */
export async function settleLostCreation<K extends CardKind, T extends Listed & CardKinds[K]>(
  store: CardStore,
  row: CardRow<K>,
  callMs: number,
  lookup: LostCreationLookup<K, T>,
): Promise<void> {
  const fingerprint = row.parentToken;
  // A row begun before its fingerprint was kept cannot be recognised: it stays in doubt.
  if (!fingerprint) return;
  // An identical creation still in its call may have made what the list would show: its answer names
  // it first (else this row would take it, and that answer would find its object held).
  if (await store.twinInFlight(row, callMs)) return;
  const from = row.createdAt.getTime() - LOST_CREATION_CLOCK_SKEW_MS;
  const to = row.createdAt.getTime() + callMs + LOST_CREATION_CLOCK_SKEW_MS;
  const window = { date_from: utcDay(from), date_to: utcDay(to), count: PAGE };
  const matching: T[] = [];
  // Most recent first: read back until the window's start (new ones only push the rest further).
  for (let offset = 0; ; offset += PAGE) {
    const page = await lookup.list({ ...window, offset });
    for (const item of page.items) {
      const at = Date.parse(item.date_created);
      if (at >= from && at <= to && lookup.matches(item, fingerprint)) matching.push(item);
    }
    const oldest = page.items.at(-1);
    if (page.items.length < PAGE || !oldest || Date.parse(oldest.date_created) < from) break;
  }
  const held = await store.heldTokens(
    row.tenantId,
    matching.map((item) => item.token),
  );
  const found = matching.reverse().find((item) => !held.has(item.token));
  if (found) await store.settle(row, found, lookup.statusOf(found), 'resolver:found-at-provider');
  else await store.transition(row, 'failed', 'resolver:not-at-provider');
}
