import type { Logger } from 'pino';

/** SQLSTATE classes and pool errors that mean "the database cannot serve now", not "this request is wrong". */
const DATABASE_UNAVAILABLE_STATES = new Set(['53300', '57P01', '57P02', '57P03', '55P03', '40P01']);
const DATABASE_UNAVAILABLE_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'Client has encountered a connection error',
];

/** The database is overloaded or unreachable (a session terminated, a restart, a failover): try again later. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const candidate = error as { code?: unknown; message?: unknown; driverError?: unknown };
  const driver = (candidate?.driverError ?? candidate) as { code?: unknown; message?: unknown };
  const code = typeof driver?.code === 'string' ? driver.code : '';
  if (code.startsWith('08') || DATABASE_UNAVAILABLE_STATES.has(code)) return true;
  if (code === 'ECONNREFUSED' || code === 'ECONNRESET') return true;
  const message = typeof driver?.message === 'string' ? driver.message : '';
  return DATABASE_UNAVAILABLE_MESSAGES.some((text) => message.includes(text));
}

/**
 * A start-up step that reads or writes the database, tried again while the database cannot serve (its
 * sessions terminated, a restart): a replica starting beside a database fault starts once it is over,
 * as a running one outlives it. Any other failure, or one past `withinMs`, stops the start.
 */
export async function whileDatabaseUnavailable<T>(
  what: string,
  step: () => Promise<T>,
  logger: Logger,
  withinMs = 60_000,
): Promise<T> {
  const until = Date.now() + withinMs;
  for (let wait = 250; ; wait = Math.min(wait * 2, 4_000)) {
    try {
      return await step();
    } catch (error) {
      if (!isDatabaseUnavailable(error) || Date.now() + wait > until) throw error;
      logger.warn(
        { err: error, retryInMs: wait },
        `${what}: the database cannot serve; trying again`,
      );
      await new Promise((done) => setTimeout(done, wait));
    }
  }
}
