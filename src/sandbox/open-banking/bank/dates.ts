/** Calendar arithmetic in UTC: consent validity, daily counters and booking dates are all UTC days. */

const DAY_MS = 86_400_000;

/** YYYY-MM-DD of the instant, in UTC. */
export function utcDay(instant: Date): string {
  return instant.toISOString().slice(0, 10);
}

export function startOfUtcDay(instant: Date): Date {
  return new Date(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth(), instant.getUTCDate()));
}

export function addDays(instant: Date, days: number): Date {
  return new Date(instant.getTime() + days * DAY_MS);
}

/** Seconds until 00:00 UTC of the next day; 86400 exactly at midnight. */
export function secondsUntilNextUtcDay(instant: Date): number {
  const next = addDays(startOfUtcDay(instant), 1);
  return Math.ceil((next.getTime() - instant.getTime()) / 1000);
}

/** ISO date-time without milliseconds, as the sample bodies of psd2.yaml show. */
export function isoDateTime(instant: Date): string {
  return instant.toISOString().replace(/\.\d{3}Z$/, 'Z');
}
