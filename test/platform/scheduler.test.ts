import { describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { createLogger } from '#src/platform/logging/logger.js';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { Scheduler } from '#src/platform/scheduler/scheduler.js';
import { until } from '../support/chaos.js';

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

describe('the scheduler', () => {
  it('runs a job every interval (with at most a tenth of jitter), one run at a time', async () => {
    const { sut, metrics } = sutWithLines();
    let active = 0;
    let most = 0;
    let count = 0;
    sut.register({
      name: 'slow',
      intervalMs: 20,
      run: async () => {
        most = Math.max(most, ++active);
        await sleep(30);
        active--;
        count++;
      },
    });
    sut.onApplicationBootstrap();
    await sleep(400);
    await sut.beforeApplicationShutdown();
    expect(most).toBe(1);
    // Each run takes 30 ms and waits 20–22 ms before the next: about 8 in 400 ms.
    expect(count).toBeGreaterThanOrEqual(2);
    expect(count).toBeLessThanOrEqual(9);
    expect(await runs(metrics, 'slow', 'ok')).toBe(count);
  });

  it('keeps jobs of one group from running at the same time', async () => {
    const { sut } = sutWithLines();
    let active = 0;
    let most = 0;
    const job = (name: string) => ({
      name,
      group: 'chain',
      intervalMs: 5,
      run: async () => {
        most = Math.max(most, ++active);
        await sleep(15);
        active--;
      },
    });
    sut.register(job('seal'));
    sut.register(job('checkpoint'));
    sut.onApplicationBootstrap();
    await sleep(200);
    await sut.beforeApplicationShutdown();
    expect(most).toBe(1);
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
    await sleep(150);
    await sut.beforeApplicationShutdown();
    expect(calls).toBeGreaterThan(2);
    expect(await runs(metrics, 'flaky', 'failed')).toBe(1);
    expect(await runs(metrics, 'flaky', 'ok')).toBe(calls - 1);
    expect(lines.join('')).toMatch(
      /"job":"flaky".*"msg":"periodic job failed; the next run tries again"/,
    );
  });

  it('at shutdown waits for the run under way and starts no other', async () => {
    const { sut } = sutWithLines();
    let finished = 0;
    let started = 0;
    sut.register({
      name: 'long',
      intervalMs: 1,
      runAtStart: true,
      run: async () => {
        started++;
        await sleep(100);
        finished++;
      },
    });
    sut.onApplicationBootstrap();
    await sleep(20);
    await sut.beforeApplicationShutdown();
    expect(finished).toBe(started);
    await sleep(50);
    expect(started).toBe(finished);
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
    await sleep(30);
    await sut.beforeApplicationShutdown();
    expect(calls).toEqual(['start-only']);
  });

  it('runNow joins the run under way instead of starting a second', async () => {
    const { sut } = sutWithLines();
    let started = 0;
    sut.register({
      name: 'once',
      intervalMs: 0,
      run: async () => {
        started++;
        await sleep(30);
      },
    });
    await Promise.all([sut.runNow('once'), sut.runNow('once')]);
    expect(started).toBe(1);
    await sut.runNow('once');
    expect(started).toBe(2);
    expect(() => sut.runNow('missing')).toThrow(/no periodic job named missing/);
  });

  it('wake brings the next turn forward: now when waiting, at the end of the turn under way, never for a job that is off', async () => {
    const { sut } = sutWithLines();
    const started: number[] = [];
    let release = () => {};
    sut.register({
      name: 'worker',
      intervalMs: 60_000,
      run: async () => {
        started.push(Date.now());
        await new Promise<void>((resolve) => (release = resolve));
      },
    });
    let offRuns = 0;
    sut.register({ name: 'off', intervalMs: 0, run: async () => void offRuns++ });
    sut.wake('worker');
    await sleep(20);
    expect(started).toHaveLength(0);
    sut.onApplicationBootstrap();
    sut.wake('worker');
    sut.wake('worker');
    await until(() => started.length === 1);
    // Woken twice during its turn: one more turn, as soon as this one ends.
    sut.wake('worker');
    sut.wake('worker');
    await sleep(20);
    expect(started).toHaveLength(1);
    const ended = Date.now();
    release();
    await until(() => started.length === 2);
    expect(started[1]! - ended).toBeLessThan(100);
    release();
    await sleep(50);
    expect(started).toHaveLength(2);
    sut.wake('off');
    await sleep(20);
    expect(offRuns).toBe(0);
    const stopping = sut.beforeApplicationShutdown();
    sut.wake('worker');
    await stopping;
    await sleep(20);
    expect(started).toHaveLength(2);
  });
});
