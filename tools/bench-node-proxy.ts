// The bench's second reference (tools/bench.ts): a bare Node reverse proxy made of the parts Portico's read
// is made of, and nothing of Portico's own: node:http in front, undici's pool with the TPP certificate
// behind (mTLS, keep-alive), the answer's JSON parsed and written again as a gateway that checks and
// renames it must. No authentication, consent, audit, database or framework: what a read through Node
// costs at the least, so that Portico's ratio to nginx can be split into Node's share and Portico's own.
//
//   node dist-tools/bench-node-proxy.js <port> <upstream origin> <certificates folder>
//   node dist-tools/bench-node-proxy.js 18721 https://localhost:18710 certs/dev
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { Agent } from 'undici';

const [port, origin, certs] = process.argv.slice(2);
const upstream = new URL(origin);
const agent = new Agent({
  connect: {
    cert: readFileSync(join(certs, 'tpp.pem')),
    key: readFileSync(join(certs, 'tpp.key')),
    ca: readFileSync(join(certs, 'ca.pem')),
    servername: 'localhost',
    rejectUnauthorized: true,
  },
  keepAliveTimeout: 60_000,
  keepAliveMaxTimeout: 60_000,
});

const forwarded = ['consent-id', 'x-request-id', 'psu-ip-address'];

createServer((request, reply) => {
  const headers: Record<string, string> = {};
  for (const name of forwarded) {
    const value = request.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  agent
    .request({ origin: upstream.origin, path: request.url ?? '/', method: 'GET', headers })
    .then(async (answer) => {
      const body: unknown = await answer.body.json();
      const text = JSON.stringify(body);
      reply.writeHead(answer.statusCode, {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
      });
      reply.end(text);
    })
    .catch((error: unknown) => {
      reply.writeHead(502, { 'content-type': 'text/plain' });
      reply.end(String(error));
    });
}).listen(Number(port), '127.0.0.1', () =>
  process.stdout.write(`node proxy listening on ${port}\n`),
);
