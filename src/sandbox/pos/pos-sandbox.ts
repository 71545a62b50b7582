import { createHash, randomBytes } from 'node:crypto';
import type { PosContract } from '#src/shared/contracts/pos-contract.js';
import { newId } from '../card/card-context.js';
import { checkCashRegister } from './pos-cash-register.js';
import { invalidParam, PosError, type PosAnswer } from './pos-errors.js';
import {
  isFinal,
  type PayerAction,
  type PosMerchant,
  type PosTransaction,
  type Terminal,
} from './pos-state.js';
import { fixtureProblem, newTerminal, type TerminalFixture } from './pos-terminals.js';
import { terminalView, transactionView } from './pos-views.js';
import { erpPendingOf, pageOf } from './pos-pending.js';
import { PosJournal, type PosStateRow, type PosStateStore } from './pos-journal.js';

/** The seed's hold: the client waits at least 180 s for the terminal. */
export const SEED_HOLD_MS = 180_000;
const VOID_MAX_AGE_MS = 24 * 3600_000;
const SCHEMES = ['VISA', 'MASTERCARD', 'MAESTRO'];

export interface PosRequest {
  operationId: string;
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: Record<string, unknown>;
}

const ok = (body: unknown): PosAnswer => ({ status: 200, body });

/** A payment waiting for its terminal: settled when decided; `hold` ends a shown one as CANCELLED. */
interface Decision {
  promise: Promise<void>;
  decide: () => void;
  hold?: NodeJS.Timeout;
}

/**
 * The provider's POS terminal interface as in-memory state: merchants with their POS keys, terminals
 * built from fixtures, transactions held until the terminal decides (the payer control, the terminal's
 * default outcome, or the hold running out: CANCELLED; 10004 for a terminal that never acknowledged). Time is the card side's sandbox clock, so that its
 * clock control ages transactions (void after 24 hours).
 */
export class PosSandbox {
  private readonly merchants = new Map<string, PosMerchant>();
  private readonly keys = new Map<string, string>();
  private readonly terminals = new Map<string, Terminal>();
  private readonly transactions = new Map<string, PosTransaction>();
  /** transactionId -> the settling of its hold. */
  private readonly decisions = new Map<string, Decision>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private seq = 0;
  private closing = false;
  private readonly journal: PosJournal;

  constructor(
    private readonly contract: PosContract,
    private readonly options: {
      now: () => Date;
      holdMs?: number;
      store?: PosStateStore;
      storedState?: readonly PosStateRow[];
    },
  ) {
    this.journal = new PosJournal(options.store);
    this.restore(options.storedState ?? []);
  }

  /** Settles when every change so far is stored; rejects when the latest write failed. */
  persisted(): Promise<void> {
    return this.journal.persisted();
  }

  /**
   * Rebuilds the state from stored rows. A payment that was in flight when the sandbox stopped is
   * cancelled (the terminal lost it), so that its terminal is free and a GET tells the outcome.
   */
  private restore(rows: readonly PosStateRow[]): void {
    for (const row of rows) {
      if (row.kind === 'merchant') {
        const merchant = row.data as PosMerchant;
        this.merchants.set(merchant.merchantId, merchant);
        this.keys.set(merchant.posKey, merchant.merchantId);
      } else if (row.kind === 'terminal') {
        const terminal = { ...(row.data as Terminal), current: undefined };
        this.terminals.set(terminal.token, terminal);
        this.seq = Math.max(this.seq, terminal.seq);
      } else {
        const tx = row.data as PosTransaction;
        if (tx.status === 'INITIATING' || tx.status === 'PENDING') {
          Object.assign(tx, { status: 'CANCELLED', decidedAt: this.now() });
          this.journal.note('transaction', tx.transactionId, tx);
        }
        this.transactions.set(tx.transactionId, tx);
      }
    }
  }

  private now(): number {
    return this.options.now().getTime();
  }

  /** A merchant's POS key (made once): `merchantId` is the card side's merchant. */
  provisionMerchant(merchantId: string): PosMerchant {
    const known = this.merchants.get(merchantId);
    if (known) return known;
    const merchant: PosMerchant = {
      merchantId,
      posKey: `p_sandbox_${randomBytes(18).toString('base64url')}`,
      mid: String(100_000_000 + (randomBytes(4).readUInt32BE() % 900_000_000)),
      company: newId('com'),
    };
    this.merchants.set(merchantId, merchant);
    this.keys.set(merchant.posKey, merchantId);
    this.journal.note('merchant', merchantId, merchant);
    return merchant;
  }

  merchantOfKey(key: string): string | undefined {
    return this.keys.get(key);
  }

  /** Terminals from a fixture (see TerminalFixture); a string is the fixture's problem. */
  addTerminals(
    merchantId: string,
    input: Record<string, unknown>,
  ): (Record<string, unknown> & { cash_registry_secret?: string })[] | string {
    const merchant = this.merchants.get(merchantId);
    if (!merchant) return `no POS merchant ${merchantId}`;
    const problem = fixtureProblem(input);
    if (problem) return problem;
    const fixture = input as TerminalFixture & { count?: number };
    const made = [];
    for (let i = 0; i < (fixture.count ?? 1); i++) {
      const terminal = newTerminal(
        merchant,
        fixture,
        ++this.seq,
        this.now(),
        this.options.holdMs ?? SEED_HOLD_MS,
      );
      this.terminals.set(terminal.token, terminal);
      this.journal.note('terminal', terminal.token, terminal);
      for (const tx of erpPendingOf(terminal, fixture.erpPendingTransactions ?? 0, this.now()))
        this.saveTransaction(tx);
      made.push({
        ...terminalView(terminal),
        ...(terminal.cashRegister ? { cash_registry_secret: terminal.cashRegister.secret } : {}),
      });
    }
    return made;
  }

  /** Changes a terminal's fixture (connected, status, busy, outcome, holdMs). */
  changeTerminal(token: string, input: Record<string, unknown>): Terminal | string {
    const terminal = this.terminals.get(token);
    if (!terminal) return `no terminal ${token}`;
    const problem = fixtureProblem(input);
    if (problem) return problem;
    if (input.cashRegisterValidation !== undefined || input.erpPendingTransactions !== undefined)
      return 'cash register and ERP link are set when the terminal is made';
    Object.assign(terminal, input);
    this.journal.note('terminal', terminal.token, terminal);
    return terminal;
  }

  terminal(token: string): Terminal | undefined {
    return this.terminals.get(token);
  }

  transaction(transactionId: string): PosTransaction | undefined {
    return this.transactions.get(transactionId);
  }

  /**
   * The provider changes a decided transaction outside the merchant's integrations (its support
   * corrects an amount, marks it failed) or loses it (`forget`); a string when there is none.
   */
  actOnTransaction(
    transactionId: string,
    change: { status?: 'CAPTURED' | 'FAILED'; amount?: number } | 'forget',
  ): PosTransaction | string {
    const tx = this.transactions.get(transactionId);
    if (!tx) return `no transaction ${transactionId}`;
    if (change === 'forget') {
      this.transactions.delete(transactionId);
      this.journal.forget('transaction', transactionId);
      return tx;
    }
    if (!isFinal(tx.status)) return `transaction ${transactionId} is not decided`;
    if (change.status) tx.status = change.status;
    if (change.amount !== undefined) tx.amount = change.amount;
    this.saveTransaction(tx);
    return tx;
  }

  /** The payer at the terminal acts on the payment it shows; a string when none is waiting. */
  payer(token: string, action: PayerAction): PosTransaction | string {
    const terminal = this.terminals.get(token);
    if (!terminal) return `no terminal ${token}`;
    const tx = terminal.current ? this.transactions.get(terminal.current) : undefined;
    if (!tx) return `terminal ${token} shows no payment`;
    this.decide(tx, action);
    return tx;
  }

  /** Closes the terminal's open batch: its captured payments are settled (a void is then 10012). */
  closeBatch(token: string): number | string {
    const terminal = this.terminals.get(token);
    if (!terminal) return `no terminal ${token}`;
    const closed = terminal.batch++;
    this.journal.note('terminal', terminal.token, terminal);
    return closed;
  }

  /** Answers one POS operation for a merchant; refusals come back as PosError. */
  async handle(merchantId: string, request: PosRequest): Promise<PosAnswer> {
    switch (request.operationId) {
      case 'createPosTransaction':
        return this.create(merchantId, request.body);
      case 'getPosTransaction':
        return this.get(merchantId, request.params.transactionId);
      case 'listPendingPosTransactions':
        return this.pending(merchantId, request.params.terminalToken, request.query);
      case 'listPosTerminals':
        return ok(
          pageOf(
            [...this.terminals.values()]
              .filter((t) => t.merchantId === merchantId)
              .sort((a, b) => a.seq - b.seq)
              .map(terminalView),
            request.query,
          ),
        );
      default:
        throw new Error(`pos.yaml operation ${request.operationId} has no implementation`);
    }
  }

  /** Ends every hold (the listener is closing). */
  close(): void {
    this.closing = true;
    for (const timer of this.timers) clearTimeout(timer);
    for (const decision of this.decisions.values()) decision.decide();
  }

  private terminalFor(merchantId: string, token: string): Terminal {
    const terminal = this.terminals.get(token);
    if (!terminal || terminal.status === 'disabled') throw new PosError(10003);
    if (terminal.merchantId !== merchantId) throw new PosError(10002);
    return terminal;
  }

  private async create(merchantId: string, body: Record<string, unknown>): Promise<PosAnswer> {
    const started = Date.now();
    const terminal = this.terminalFor(merchantId, body.terminal as string);
    const id = body.transaction_id as string;
    const earlier = this.transactions.get(id);
    if (earlier) {
      if (earlier.merchantId !== merchantId) throw new PosError(10005);
      return this.resultOf(earlier, started);
    }
    const tx: PosTransaction = {
      transactionId: id,
      merchantId,
      terminal: terminal.token,
      type: body.type as 'payment' | 'void',
      status: 'INITIATING',
      amount: (body.amount as number | undefined) ?? 0,
      tip: (body.tip as number | undefined) ?? 0,
      currency: 'EUR',
      metadata: body.metadata as Record<string, string> | undefined,
      originalTransactionId: body.original_transaction_id as string | undefined,
      receivedAt: this.now(),
    };
    if (!terminal.connected) {
      this.saveTransaction({ ...tx, status: 'DEVICE_NOT_CONNECTED' });
      throw new PosError(10006);
    }
    if (terminal.busy || terminal.current) throw new PosError(10008);
    if (tx.type === 'void') return ok(this.voidOf(tx, terminal, body));
    checkCashRegister(this.contract, terminal, tx.metadata, tx.amount + tx.tip);
    terminal.current = id;
    let decide = () => undefined as void;
    const promise = new Promise<void>((resolve) => (decide = resolve));
    const decision: Decision = { promise, decide };
    this.decisions.set(id, decision);
    if (!terminal.unresponsive) {
      // Shown to the payer at once; when the hold runs out the terminal ends it (seed 001: a timed-out
      // transaction is CANCELLED), so that a payer cannot approve what the merchant was told is over.
      tx.status = 'PENDING';
      decision.hold = this.later(terminal.holdMs, () => this.decide(tx, 'cancel'));
    }
    this.saveTransaction(tx);
    this.journal.note('terminal', terminal.token, terminal);
    const { action, afterMs } = terminal.outcome;
    if (action !== 'never') this.later(afterMs, () => this.decide(tx, action));
    return this.resultOf(tx, started);
  }

  /**
   * The transaction's result once decided (a shown payment is decided by its hold at the latest), or
   * 10004 when an unacknowledged one (INITIATING) is still so when the hold from `started` runs out.
   */
  private async resultOf(tx: PosTransaction, started: number): Promise<PosAnswer> {
    if (tx.status === 'DEVICE_NOT_CONNECTED') throw new PosError(10006);
    const decision = this.decisions.get(tx.transactionId);
    if (tx.status === 'PENDING' && decision) await decision.promise;
    if (tx.status === 'INITIATING' && decision) {
      const hold = (this.terminals.get(tx.terminal) as Terminal).holdMs;
      const remaining = started + hold - Date.now();
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<void>((resolve) => {
        timer = this.later(Math.max(0, remaining), resolve);
      });
      await Promise.race([decision.promise, timeout]);
      if (timer) this.cancel(timer);
    }
    if (!isFinal(tx.status)) throw new PosError(10004);
    return ok(transactionView(tx, this.terminals.get(tx.terminal) as Terminal));
  }

  private decide(tx: PosTransaction, action: PayerAction): void {
    if (isFinal(tx.status) || this.closing) return;
    const terminal = this.terminals.get(tx.terminal) as Terminal;
    tx.decidedAt = this.now();
    tx.status = action === 'approve' ? 'CAPTURED' : action === 'decline' ? 'FAILED' : 'CANCELLED';
    if (action !== 'cancel') tx.card = cardRead(tx);
    if (tx.status === 'CAPTURED') tx.batch = terminal.batch;
    if (terminal.current === tx.transactionId) terminal.current = undefined;
    this.saveTransaction(tx);
    this.journal.note('terminal', terminal.token, terminal);
    const decision = this.decisions.get(tx.transactionId);
    if (decision?.hold) this.cancel(decision.hold);
    decision?.decide();
    this.decisions.delete(tx.transactionId);
  }

  private voidOf(
    tx: PosTransaction,
    terminal: Terminal,
    body: Record<string, unknown>,
  ): Record<string, unknown> {
    const original = this.transactions.get(tx.originalTransactionId as string);
    if (
      !original ||
      original.merchantId !== tx.merchantId ||
      original.type !== 'payment' ||
      original.status !== 'CAPTURED'
    )
      throw new PosError(10009);
    if (original.terminal !== terminal.token) throw new PosError(10011);
    if (original.voidedBy) throw new PosError(10013);
    if (this.now() - (original.decidedAt as number) > VOID_MAX_AGE_MS) throw new PosError(10010);
    if ((original.batch as number) < terminal.batch) throw new PosError(10012);
    if (body.amount !== undefined && body.amount !== original.amount)
      throw invalidParam('amount', `must equal the original's amount (${original.amount})`);
    checkCashRegister(this.contract, terminal, tx.metadata, original.amount + original.tip);
    Object.assign(tx, {
      status: 'CAPTURED',
      amount: original.amount,
      tip: original.tip,
      decidedAt: this.now(),
      card: original.card,
      batch: original.batch,
    });
    original.voidedBy = tx.transactionId;
    this.saveTransaction(original);
    this.saveTransaction(tx);
    return transactionView(tx, terminal);
  }

  private get(merchantId: string, id: string): PosAnswer {
    const tx = this.transactions.get(id);
    if (!tx || tx.merchantId !== merchantId) throw new PosError(10005);
    const terminal = this.terminals.get(tx.terminal) as Terminal;
    if (!isFinal(tx.status) && tx.status !== 'DEVICE_NOT_CONNECTED' && !terminal.connected)
      throw new PosError(10006);
    return ok(transactionView(tx, terminal));
  }

  private pending(merchantId: string, token: string, query: Record<string, unknown>): PosAnswer {
    const terminal = this.terminalFor(merchantId, token);
    if (!terminal.erpLinked) throw new PosError(10003);
    const from = query.from as string | undefined;
    const to = query.to as string | undefined;
    if (from && to && to < from) throw invalidParam('to', 'must not be before from');
    const items = [...this.transactions.values()]
      .filter((tx) => tx.terminal === token && tx.erpPending)
      .filter((tx) => {
        const day = new Date(tx.decidedAt as number).toISOString().slice(0, 10);
        return (!from || day >= from) && (!to || day <= to);
      })
      .sort((a, b) => (b.decidedAt as number) - (a.decidedAt as number))
      .map((tx) => transactionView(tx, terminal));
    return ok(pageOf(items, query));
  }

  private saveTransaction(tx: PosTransaction): void {
    this.transactions.set(tx.transactionId, tx);
    this.journal.note('transaction', tx.transactionId, tx);
  }

  private later(ms: number, run: () => void): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    this.timers.add(timer);
    return timer;
  }

  private cancel(timer: NodeJS.Timeout): void {
    clearTimeout(timer);
    this.timers.delete(timer);
  }
}

/** What the terminal read from the card (a made-up card of a test scheme). */
function cardRead(tx: PosTransaction): NonNullable<PosTransaction['card']> {
  const digits = [...randomBytes(10)].map((b) => String(b % 10)).join('');
  const rrn = digits.padEnd(12, '0');
  return {
    cardType: SCHEMES[randomBytes(1)[0] % SCHEMES.length],
    cardNumber: `${digits.slice(0, 6)}******${digits.slice(6, 10)}`,
    authorizationCode: randomBytes(3).toString('hex').toUpperCase(),
    aadeTransactionId: createHash('sha1').update(`${tx.transactionId}|${rrn}`).digest('hex'),
    acquirerId: 'SANDBOXACQ',
    rrn,
  };
}
