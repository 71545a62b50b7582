import pg from 'pg';

/**
 * Counts the statements this process sends to PostgreSQL (each `pg` query is one round-trip), for the
 * metric `portico_db_statements_total` and the bench's "database round-trips per read". Installed once,
 * on the `pg` client every pool of the process uses; the cost is one increment per statement.
 */
let sent = 0;
const marker = Symbol.for('portico.statementCounter');
const proto = pg.Client.prototype;
if (!Reflect.get(proto, marker)) {
  const original = proto.query;
  // Every overload of `query` passes through unchanged: only counted.
  Reflect.set(proto, 'query', function countedQuery(this: pg.Client, ...args: unknown[]): unknown {
    sent++;
    return Reflect.apply(original, this, args);
  });
  Reflect.set(proto, marker, true);
}

export function statementsSent(): number {
  return sent;
}
