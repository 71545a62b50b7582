import type { IrisDeliveryPlan } from './iris-record.js';
import { callbackPage, closePage } from './iris-pages-html.js';
import type { IrisMessages } from './iris-messages.js';

/**
 * A webhook not answered 2xx is sent again after these delays (card.yaml IrisCallback): doubling from
 * 1 s, then every minute, about five minutes in all, so that a merchant's server restarting or its
 * database failing over does not lose a payer's approval.
 */
export const WEBHOOK_RETRY_DELAYS_MS = [
  1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000, 60_000, 60_000,
];
/** In the order callback then webhook, the webhook waits this long unless released earlier. */
export const DEFAULT_WEBHOOK_HOLD_MS = 1_000;

export interface WebhookAttempt {
  copy: number;
  attempt: number;
  /** The HTTP status answered, or 0 when the request failed. */
  status: number;
  at: string;
}

/**
 * Sends the result of a session the way its delivery plan says: the browser's callback (an HTML
 * page that posts the form to callback_url, once per copy) and the JSON webhook (once per copy,
 * the copies at the same time, each retried until it is answered 2xx). Webhooks are not stored: a
 * sandbox restart forgets the ones still pending.
 */
export class IrisMessenger {
  private readonly held = new Map<string, () => void>();
  private readonly attempts = new Map<string, WebhookAttempt[]>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly holdMs = DEFAULT_WEBHOOK_HOLD_MS) {}

  /** Delivers a result; answers the HTML the payer's browser gets from the bank page. */
  async deliver(
    sessionId: string,
    plan: IrisDeliveryPlan,
    callbackUrl: string,
    webhookUrl: string | undefined,
    messages: IrisMessages,
  ): Promise<string> {
    const webhooks = () =>
      webhookUrl === undefined
        ? Promise.resolve()
        : Promise.all(
            Array.from({ length: plan.copies }, (_, copy) =>
              this.send(sessionId, copy + 1, webhookUrl, messages.webhook),
            ),
          ).then(() => undefined);
    if (plan.order === 'webhook-only') {
      await webhooks();
      return closePage();
    }
    if (plan.order === 'webhook-callback') {
      await webhooks();
      return callbackPage(callbackUrl, messages.callback, plan.copies);
    }
    this.hold(sessionId, plan.holdMs ?? this.holdMs, () => void webhooks());
    return callbackPage(callbackUrl, messages.callback, plan.copies);
  }

  /** Sends a held webhook now (order callback then webhook); false when none is held. */
  release(sessionId: string): boolean {
    const send = this.held.get(sessionId);
    if (!send) return false;
    send();
    return true;
  }

  attemptsOf(sessionId: string): WebhookAttempt[] {
    return [...(this.attempts.get(sessionId) ?? [])];
  }

  close(): void {
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.held.clear();
  }

  private hold(sessionId: string, holdMs: number, send: () => void): void {
    let timer: NodeJS.Timeout | undefined = undefined;
    const once = () => {
      if (!this.held.delete(sessionId)) return;
      if (timer) this.forget(timer);
      send();
    };
    this.held.set(sessionId, once);
    timer = this.after(holdMs, once);
  }

  private async send(
    sessionId: string,
    copy: number,
    url: string,
    body: Record<string, unknown>,
  ): Promise<void> {
    for (
      let attempt = 1;
      attempt <= WEBHOOK_RETRY_DELAYS_MS.length + 1 && !this.closed;
      attempt++
    ) {
      let status = 0;
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        });
        status = response.status;
        await response.arrayBuffer().catch(() => undefined);
      } catch {
        status = 0;
      }
      const log = this.attempts.get(sessionId) ?? [];
      log.push({ copy, attempt, status, at: new Date().toISOString() });
      this.attempts.set(sessionId, log);
      if (status >= 200 && status < 300) return;
      const delay = WEBHOOK_RETRY_DELAYS_MS[attempt - 1];
      if (delay === undefined) return;
      await new Promise<void>((resolve) => this.after(delay, resolve));
    }
  }

  private after(ms: number, run: () => void): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      run();
    }, ms);
    this.timers.add(timer);
    return timer;
  }

  private forget(timer: NodeJS.Timeout): void {
    clearTimeout(timer);
    this.timers.delete(timer);
  }
}
