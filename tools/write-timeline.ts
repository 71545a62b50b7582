// A preload of the bench (`node --import ./dist-tools/write-timeline.js dist/main.js`): where the time of
// a facade write goes, one write at a time. For each facade request it notes the moments of its arrival,
// of each PostgreSQL statement sent and answered, of the provider's listener (the in-process sandbox)
// receiving and answering the call, and of the answer; on SIGUSR2 it writes the median of each step of
// the most common sequence to WRITE_TIMELINE_FILE (JSON) and starts again. Only meaningful while one
// request runs at a time: a statement is the current request's. Measurement only: never loaded by
// Portico itself.
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createRequire } from 'node:module';

type Timeline = [event: string, at: number][];

export interface TimelineStep {
  /** `from → to`: two consecutive events of the sequence. */
  step: string;
  p50Ms: number;
}

export interface TimelineSummary {
  /** Requests with the most common sequence of events, and all requests seen. */
  requests: number;
  seen: number;
  steps: TimelineStep[];
}

const file = process.env.WRITE_TIMELINE_FILE;
let current: Timeline | undefined;
const finished: Timeline[] = [];
const note = (event: string) => current?.push([event, performance.now()]);

function patchServer(
  server: typeof http.Server,
  onRequest: (url: string, res: http.ServerResponse) => void,
) {
  const emit = server.prototype.emit;
  server.prototype.emit = function (this: http.Server, event: string, ...args: unknown[]) {
    if (event === 'request') {
      const [request, response] = args as [http.IncomingMessage, http.ServerResponse];
      onRequest(request.url ?? '', response);
    }
    return Reflect.apply(emit, this, [event, ...args]) as boolean;
  } as typeof emit;
}

if (file) {
  // The facade (plain HTTP): a timeline per request under /v1/.
  patchServer(http.Server, (url, response) => {
    if (!url.startsWith('/v1/')) return;
    const timeline: Timeline = [['request in', performance.now()]];
    current = timeline;
    response.once('finish', () => {
      timeline.push(['answer out', performance.now()]);
      finished.push(timeline);
      if (current === timeline) current = undefined;
    });
  });
  // The provider's listeners (TLS): the call as the provider sees it.
  patchServer(https.Server, (_url, response) => {
    note('provider received');
    response.once('finish', () => note('provider answered'));
  });
  // Every statement, by its name (PlainSql's) or the start of its text.
  const require = createRequire(`${process.cwd()}/package.json`);
  const pg = require('pg') as typeof import('pg');
  const query = pg.Client.prototype.query;
  Reflect.set(pg.Client.prototype, 'query', function (this: unknown, ...args: unknown[]) {
    const [config] = args as [string | { name?: string; text?: string; callback?: unknown }];
    const label = (typeof config === 'string' ? config : (config?.name ?? config?.text ?? ''))
      .replace(/\s+/g, ' ')
      .replace(/:[0-9a-f]{12}$/, '')
      .slice(0, 48);
    note(`sent ${label}`);
    const answered = () => note(`answered ${label}`);
    const last = args.length - 1;
    if (typeof args[last] === 'function') {
      const callback = args[last] as (...a: unknown[]) => unknown;
      args[last] = (...a: unknown[]) => {
        answered();
        return callback(...a);
      };
    } else if (typeof config === 'object' && typeof config?.callback === 'function') {
      const callback = config.callback as (...a: unknown[]) => unknown;
      config.callback = (...a: unknown[]) => {
        answered();
        return callback(...a);
      };
    }
    const result = Reflect.apply(query, this, args) as unknown;
    if (result instanceof Promise) result.then(answered, () => undefined);
    return result;
  });
  process.on('SIGUSR2', () => {
    writeFileSync(file, JSON.stringify(summarise(finished.splice(0))));
  });
}

/** The median of each step of the most common sequence of events. */
function summarise(timelines: Timeline[]): TimelineSummary {
  const signature = (timeline: Timeline) => timeline.map(([event]) => event).join('|');
  const counts = new Map<string, number>();
  for (const timeline of timelines)
    counts.set(signature(timeline), (counts.get(signature(timeline)) ?? 0) + 1);
  const [common] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? [''];
  const alike = timelines.filter((timeline) => signature(timeline) === common);
  const steps: TimelineStep[] = [];
  for (let i = 1; alike.length > 0 && i < alike[0].length; i++) {
    const durations = alike
      .map((timeline) => timeline[i][1] - timeline[i - 1][1])
      .sort((a, b) => a - b);
    steps.push({
      step: `${alike[0][i - 1][0]} → ${alike[0][i][0]}`,
      p50Ms: durations[Math.floor(durations.length / 2)],
    });
  }
  return { requests: alike.length, seen: timelines.length, steps };
}
