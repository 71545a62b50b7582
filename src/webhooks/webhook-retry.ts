import type { SendResult } from './webhook-sender.js';

/** The pause before the attempt after `attempt` failed: the schedule's entry (the last repeats) ± jitter. */
export function retryDelayMs(
  attempt: number,
  schedule: readonly number[],
  jitterPercent: number,
  random = Math.random,
): number {
  const base = schedule[Math.min(attempt - 1, schedule.length - 1)] ?? 0;
  const jitter = (base * jitterPercent * (2 * random() - 1)) / 100;
  return Math.max(0, Math.round(base + jitter));
}

/**
 * The pause before the next attempt: the schedule's, or longer when the receiver asked for it with
 * Retry-After (429, 503), though never longer than the schedule's longest pause.
 */
export function nextAttemptDelayMs(
  attempt: number,
  result: Pick<SendResult, 'retryAfterMs'>,
  schedule: readonly number[],
  jitterPercent: number,
  random = Math.random,
): number {
  const scheduled = retryDelayMs(attempt, schedule, jitterPercent, random);
  if (result.retryAfterMs === undefined) return scheduled;
  return Math.max(scheduled, Math.min(result.retryAfterMs, Math.max(0, ...schedule)));
}
