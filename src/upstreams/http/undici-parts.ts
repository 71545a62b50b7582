import { createRequire } from 'node:module';
import type { Agent as UndiciAgent, errors as undiciErrors } from 'undici';

/*
 * The parts of undici the upstream transport uses, loaded from their own modules: undici's index also
 * loads its fetch, WebSocket, EventSource, cache, mock and proxy modules, which no gateway call uses
 * (about 3 MiB of heap held for good). The classes are undici's own (the index re-exports these same
 * modules), so the types are the package's; the dispatchers get their request() as the index gives it.
 */
const require = createRequire(import.meta.url);

const Dispatcher = require('undici/lib/dispatcher/dispatcher.js') as { prototype: object };
Object.assign(Dispatcher.prototype, require('undici/lib/api/index.js') as object);

export const Agent = require('undici/lib/dispatcher/agent.js') as typeof UndiciAgent;
export type Agent = UndiciAgent;

export const errors = require('undici/lib/core/errors.js') as typeof undiciErrors;
