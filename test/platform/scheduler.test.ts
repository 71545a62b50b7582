import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Writable } from 'node:stream';
import { createLogger } from '#src/platform/logging/logger.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { Scheduler } from '#src/platform/scheduler/scheduler.js';

function sutWithLines(): { sut: Scheduler; metrics: Metrics; lines: string[] } {
  const lines: string[] = [];
  const logger = createLogger(
    'info',
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString());
        done();
      },
    }),
  );
  const metrics = new Metrics();
  return { sut: new Scheduler(logger, metrics), metrics, lines };
}

async function runs(metrics: Metrics, job: string, outcome: string): Promise<number> {
  const metric = await metrics.registry.getSingleMetric('portico_job_runs_total')!.get();
  return (
    metric.values.find((v) => v.labels.job === job && v.labels.outcome === outcome)?.value ?? 0
  );
}

/** Runs that last until the test ends them, oldest first. */
function runsHeld() {
  const ends: (() => void)[] = [];
  return {
    hold: () => new Promise<void>((done) => ends.push(done)),
    end: () => ends.shift()!(),
    get open() {
      return ends.length;
    },
  };
}

/** Moves the scheduler's clock (fake timers), running what falls due and what follows from it. */
const advance = (ms: number) => jest.advanceTimersByTimeAsync(ms);

// The scheduler's timers run on a fake clock, and each run lasts until the test ends it: what must
// not happen is checked at a known instant, not after a wait.
describe('the scheduler', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('runs a job every interval (with at most a tenth of jitter), one run at a time', async () => {
    const { sut, metrics } = sutWithLines();
    const held = runsHeld();
    let active = 0;
    let most = 0;
    let started = 0;
    sut.register({
      name: 'slow',
      intervalMs: 20,
      run: async () => {
        started++;
        most = Math.max(most, ++active);
        await held.hold();
        active--;
      },
    });
    sut.onApplicationBootstrap();
    await advance(19);
    expect(started).toBe(0);
    await advance(3); // 22 ms: the interval and at most a tenth of it
    expect(started).toBe(1);
    await advance(1_000); // the run lasts: no second one meanwhile
    expect(started).toBe(1);
    held.end();
    // The next interval counts from the end of the run.
    await advance(19);
    expect(started).toBe(1);
    await advance(3);
    expect(started).toBe(2);
    held.end();
    await sut.beforeApplicationShutdown();
    expect(most).toBe(1);
    expect(await runs(metrics, 'slow', 'ok')).toBe(2);
  });

  it('keeps jobs of one group from running at the same time, each turn run after the run it met', async () => {
    const { sut } = sutWithLines();
    const held = runsHeld();
    const started: string[] = [];
    let active = 0;
    let most = 0;
    const job = (name: string, intervalMs: number) => ({
      name,
      group: 'chain',
      intervalMs,
      run: async () => {
        started.push(name);
        most = Math.max(most, ++active);
        await held.hold();
        active--;
      },
    });
    sut.register(job('seal', 5));
    sut.register(job('checkpoint', 7));
    sut.onApplicationBootstrap();
    await advance(5);
    expect(started).toEqual(['seal']);
    await advance(2); // the checkpoint's turn, while the seal runs: it waits for it
    expect(started).toEqual(['seal']);
    held.end(); // at 7 ms: the checkpoint runs now; the seal's next turn at 12
    await advance(0);
    expect(started).toEqual(['seal', 'checkpoint']);
    await advance(5); // the seal's turn, while the checkpoint runs
    expect(started).toEqual(['seal', 'checkpoint']);
    held.end(); // at 12 ms: the seal runs now; the checkpoint's next turn at 19
    await advance(0);
    expect(started).toEqual(['seal', 'checkpoint', 'seal']);
    held.end(); // at 12 ms the seal's run ends: its next turn at 17
    await advance(5);
    expect(started).toEqual(['seal', 'checkpoint', 'seal', 'seal']);
    await advance(2); // at 19 ms the checkpoint's turn, while the seal runs
    expect(started).toEqual(['seal', 'checkpoint', 'seal', 'seal']);
    held.end();
    await advance(0);
    expect(started).toEqual(['seal', 'checkpoint', 'seal', 'seal', 'checkpoint']);
    const stopping = sut.beforeApplicationShutdown();
    held.end();
    await stopping;
    expect(most).toBe(1);
    expect(held.open).toBe(0);
  });

  it('logs and counts a failed run, and runs the job again at its next turn', async () => {
    const { sut, metrics, lines } = sutWithLines();
    let calls = 0;
    sut.register({
      name: 'flaky',
      intervalMs: 10,
      run: async () => {
        calls++;
        if (calls === 1) throw new Error('database away');
      },
    });
    sut.onApplicationBootstrap();
    await advance(10);
    expect(calls).toBe(1);
    await advance(20);
    await sut.beforeApplicationShutdown();
    expect(calls).toBe(3);
    expect(await runs(metrics, 'flaky', 'failed')).toBe(1);
    expect(await runs(metrics, 'flaky', 'ok')).toBe(2);
    expect(lines.join('')).toMatch(
      /"job":"flaky".*"msg":"periodic job failed; the next run tries again"/,
    );
  });

  it('at shutdown waits for the run under way and starts no other', async () => {
    const { sut } = sutWithLines();
    const held = runsHeld();
    let finished = 0;
    let started = 0;
    sut.register({
      name: 'long',
      intervalMs: 1,
      runAtStart: true,
      run: async () => {
        started++;
        await held.hold();
        finished++;
      },
    });
    sut.onApplicationBootstrap();
    expect(started).toBe(1);
    let stopped = false;
    const stopping = sut.beforeApplicationShutdown().then(() => (stopped = true));
    await advance(100);
    expect({ stopped, started }).toEqual({ stopped: false, started: 1 });
    held.end();
    await stopping;
    expect(finished).toBe(1);
    await advance(100);
    expect(started).toBe(1);
  });

  it('runs a job at start only when asked, and never when its interval is 0', async () => {
    const { sut } = sutWithLines();
    const calls: string[] = [];
    sut.register({ name: 'off', intervalMs: 0, run: async () => void calls.push('off') });
    sut.register({
      name: 'start-only',
      intervalMs: 0,
      runAtStart: true,
      run: async () => void calls.push('start-only'),
    });
    sut.onApplicationBootstrap();
    await advance(60_000);
    await sut.beforeApplicationShutdown();
    expect(calls).toEqual(['start-only']);
  });

  it('runNow joins the run under way instead of starting a second', async () => {
    const { sut } = sutWithLines();
    const held = runsHeld();
    let started = 0;
    sut.register({
      name: 'once',
      intervalMs: 0,
      run: async () => {
        started++;
        await held.hold();
      },
    });
    const both = Promise.all([sut.runNow('once'), sut.runNow('once')]);
    expect(started).toBe(1);
    held.end();
    await both;
    const again = sut.runNow('once');
    expect(started).toBe(2);
    held.end();
    await again;
    expect(() => sut.runNow('missing')).toThrow(/no periodic job named missing/);
  });

  it('wake brings the next turn forward: now when waiting, at the end of the turn under way, never for a job that is off', async () => {
    const { sut } = sutWithLines();
    const held = runsHeld();
    const started: number[] = [];
    sut.register({
      name: 'worker',
      intervalMs: 60_000,
      run: async () => {
        started.push(Date.now());
        await held.hold();
      },
    });
    let offRuns = 0;
    sut.register({ name: 'off', intervalMs: 0, run: async () => void offRuns++ });
    sut.wake('worker'); // not started yet: nothing
    await advance(1_000);
    expect(started).toHaveLength(0);
    sut.onApplicationBootstrap();
    sut.wake('worker');
    sut.wake('worker');
    await advance(0);
    expect(started).toHaveLength(1);
    // Woken twice during its turn: one more turn, as soon as this one ends.
    sut.wake('worker');
    sut.wake('worker');
    await advance(1_000);
    expect(started).toHaveLength(1);
    const ended = Date.now();
    held.end();
    await advance(0);
    expect(started).toEqual([expect.any(Number), ended]);
    held.end();
    await advance(1_000); // not woken during this turn: the next is an interval away
    expect(started).toHaveLength(2);
    sut.wake('off');
    await advance(1_000);
    expect(offRuns).toBe(0);
    const stopping = sut.beforeApplicationShutdown();
    sut.wake('worker');
    await stopping;
    await advance(120_000);
    expect(started).toHaveLength(2);
  });
});
