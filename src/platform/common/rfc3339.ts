/**
 * The facade's one timestamp format: RFC 3339 in UTC (`2026-11-28T05:56:01Z`), milliseconds only where
 * Portico's own clock stamped the time (`2026-11-28T05:56:01.123Z`).
 */
export const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

/** The schema every facade timestamp is documented with. */
export const RFC3339_UTC_SCHEMA = {
  type: 'string',
  format: 'date-time',
  maxLength: 24,
  pattern: RFC3339_UTC.source,
  example: '2026-11-28T05:56:01Z',
} as const;

/**
 * The spellings providers send: `2026-11-28T05:56:01+0200` (card), `2026-11-28 05:56:01` (card mandates,
 * POS terminals; UTC), `2026-11-28 05:58:15 AM` (POS transactions; UTC), and any ISO 8601 date-time.
 */
const PROVIDER_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?: ?(AM|PM))?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * A provider's timestamp as the facade gives it (RFC 3339, UTC, whole seconds as the provider sent them).
 * A text that is no timestamp is passed on unchanged: an answer is never refused for its date's spelling.
 */
export function toRfc3339Utc(value: string): string {
  const match = PROVIDER_TIME.exec(value.trim());
  if (!match) return value;
  const [, year, month, day, hh, mm, ss, fraction, meridiem, zone] = match;
  let hours = Number(hh);
  if (meridiem) {
    if (hours < 1 || hours > 12) return value;
    hours = (hours % 12) + (meridiem.toUpperCase() === 'PM' ? 12 : 0);
  }
  const offset = zone && zone.toUpperCase() !== 'Z' ? zone.replace(':', '') : '+0000';
  const offsetMinutes =
    (offset.startsWith('-') ? -1 : 1) *
    (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(3, 5)));
  const millis =
    Date.UTC(Number(year), Number(month) - 1, Number(day), hours, Number(mm), Number(ss)) +
    Math.floor(Number(fraction ?? 0) * 1000) -
    offsetMinutes * 60_000;
  if (Number.isNaN(millis)) return value;
  const iso = new Date(millis).toISOString();
  const keepMillis = Math.floor(Number(fraction ?? 0) * 1000) !== 0;
  return keepMillis ? iso : `${iso.slice(0, 19)}Z`;
}
