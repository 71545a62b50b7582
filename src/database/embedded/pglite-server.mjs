// Child process that serves the embedded PostgreSQL engine (PGlite) on a loopback port.
// Run by embedded-postgres.ts; it exits when its parent goes away, so no engine is left orphaned.
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

const [dataDir, portArg, maxConnectionsArg] = process.argv.slice(2);
const db = await PGlite.create(dataDir === 'memory://' ? undefined : dataDir);
const server = new PGLiteSocketServer({
  db,
  host: '127.0.0.1',
  port: Number(portArg ?? 0),
  maxConnections: Number(maxConnectionsArg ?? 100),
});
await server.start();
const address = server.getServerConn();
const port = Number(String(address).split(':').pop());

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  await server.stop().catch(() => undefined);
  await db.close().catch(() => undefined);
  process.exit(0);
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.on('disconnect', stop);
process.send?.({ ready: true, port });
