import { randomBytes } from 'node:crypto';
import type { CardState, MerchantBook } from './card-state.js';

/** A refusal: the HTTP status, the catalogue code and the values its message is filled with. */
export class CardError extends Error {
  readonly values: (string | number)[];
  constructor(
    readonly status: number,
    readonly code: number,
    ...values: (string | number)[]
  ) {
    super(`card error ${status}/${code}`);
    this.values = values;
  }
}

/** A parameter with an invalid value (80002), naming it. */
export const invalid = (field: string) => new CardError(400, 80002, field);

export interface CardRequest {
  operationId: string;
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
}

export interface CardAnswer {
  status: number;
  body: unknown;
}

/** What every card operation needs: the caller's merchant, the state and the sandbox clock. */
export interface CardContext {
  readonly state: CardState;
  readonly book: MerchantBook;
  readonly now: Date;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A new id with the resource's prefix (`pmt_`, `ref_`, ...) and 24 random characters. */
export function newId(prefix: string): string {
  const bytes = randomBytes(24);
  let id = '';
  for (const byte of bytes) id += ALPHABET[byte % ALPHABET.length];
  return `${prefix}_${id}`;
}

export const ok = (body: unknown): CardAnswer => ({ status: 200, body });

/** The list envelope of one page: most recent first, date filters inclusive on the creation day. */
export function page<T extends { seq: number; created: string }>(
  records: Iterable<T>,
  query: Record<string, unknown>,
  view: (record: T) => unknown,
): CardAnswer {
  const from = query.date_from as string | undefined;
  const to = query.date_to as string | undefined;
  if (from && to && to < from) throw invalid('date_to');
  const matching = [...records]
    .filter((record) => {
      const day = record.created.slice(0, 10);
      return (!from || day >= from) && (!to || day <= to);
    })
    .sort((a, b) => b.seq - a.seq);
  const offset = (query.offset as number | undefined) ?? 0;
  const count = (query.count as number | undefined) ?? 10;
  return ok({
    total_count: matching.length,
    items: matching.slice(offset, offset + count).map(view),
  });
}
