import {
  type DynamicModule,
  Global,
  Inject,
  Injectable,
  Module,
  Optional,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import type { Logger } from 'pino';
import { LOGGER } from '../logging/logging.module.js';
import { Metrics } from '../metrics/metrics.service.js';

/** A piece of periodic work, declared by the module that owns it. */
export interface PeriodicJob {
  /** Its name in logs and metrics (`resolver`, `audit-seal`). */
  name: string;
  /** Milliseconds between the end of one run and the start of the next; 0 turns the job off. */
  intervalMs: number;
  /** One run. Its errors are logged and counted; the next run comes as usual. */
  run(): Promise<unknown>;
  /** Also run once as the application starts. */
  runAtStart?: boolean;
  /**
   * Jobs of one group never run at the same time in a replica (the audit seal and its checkpoint).
   * Across replicas a job that must not overlap takes its lease in the database itself.
   */
  group?: string;
}

/** When true (the CLI), jobs are registered but never started: only runNow runs them. */
export const SCHEDULER_IDLE = Symbol('SCHEDULER_IDLE');

/** Each interval is stretched by up to this share, so that replicas started together drift apart. */
const JITTER = 0.1;

interface Scheduled {
  job: PeriodicJob;
  /** Set while the next turn waits; unset while a turn runs. */
  timer?: NodeJS.Timeout;
  /** Woken during its turn: the next turn follows at once. */
  woken: boolean;
}

/**
 * The one timer of every periodic job: interval with jitter, one run at a time (per job, and per group),
 * a metric per job, a wake for a job that knows work waits (its next turn at once, not an interval
 * later), and a shutdown that stops the timers and waits for the runs under way.
 */
@Injectable()
export class Scheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly jobs: Scheduled[] = [];
  /** The run under way per slot (the job's group, else its name), and whose it is. */
  private readonly running = new Map<string, { job: PeriodicJob; run: Promise<void> }>();
  private started = false;
  private stopped = false;

  constructor(
    @Inject(LOGGER) private readonly logger: Logger,
    @Optional() private readonly metrics?: Metrics,
    @Optional() @Inject(SCHEDULER_IDLE) private readonly idle = false,
  ) {}

  /** Declares a job; it starts with the application (or at once, when the application already runs). */
  register(job: PeriodicJob): void {
    const scheduled: Scheduled = { job, woken: false };
    this.jobs.push(scheduled);
    if (this.started) this.start(scheduled);
  }

  onApplicationBootstrap(): void {
    if (this.idle) return;
    this.started = true;
    for (const scheduled of this.jobs) this.start(scheduled);
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    for (const scheduled of this.jobs) clearTimeout(scheduled.timer);
    // A run under way may be followed by another job of its group that was waiting for it.
    while (this.running.size > 0)
      await Promise.all([...this.running.values()].map((entry) => entry.run));
  }

  /**
   * Runs a job now: a run of the same job under way is joined; a run of another job of its group is
   * waited for, and this job runs after it.
   */
  runNow(name: string): Promise<void> {
    const scheduled = this.jobs.find((entry) => entry.job.name === name);
    if (!scheduled) throw new Error(`no periodic job named ${name}`);
    return this.execute(scheduled.job);
  }

  /**
   * Brings a job's next turn forward to now (or, during its turn, to the moment it ends): for work the
   * job's owner knows is waiting, such as room freed while more is due. A job that is off (interval 0)
   * or not started stays as it is; wakes before a turn begins are one turn.
   */
  wake(name: string): void {
    const scheduled = this.jobs.find((entry) => entry.job.name === name);
    if (!scheduled || !this.started || this.stopped || scheduled.job.intervalMs <= 0) return;
    if (scheduled.timer === undefined) scheduled.woken = true;
    else this.schedule(scheduled, 0);
  }

  private start(scheduled: Scheduled): void {
    const { job } = scheduled;
    if (job.runAtStart) void this.execute(job);
    if (job.intervalMs > 0) this.schedule(scheduled);
  }

  private schedule(scheduled: Scheduled, delayMs?: number): void {
    if (this.stopped) return;
    const { intervalMs } = scheduled.job;
    clearTimeout(scheduled.timer);
    scheduled.timer = setTimeout(
      () => void this.turn(scheduled),
      delayMs ?? intervalMs + Math.floor(Math.random() * intervalMs * JITTER),
    );
    scheduled.timer.unref();
  }

  private async turn(scheduled: Scheduled): Promise<void> {
    scheduled.timer = undefined;
    scheduled.woken = false;
    await this.execute(scheduled.job);
    this.schedule(scheduled, scheduled.woken ? 0 : undefined);
  }

  private execute(job: PeriodicJob): Promise<void> {
    const slot = job.group ?? job.name;
    const under = this.running.get(slot);
    if (under?.job === job) return under.run;
    // Another job of the group runs: this one's turn follows it (else a job whose turns fall in its
    // group's runs would never run).
    if (under) return under.run.then(() => (this.stopped ? undefined : this.execute(job)));
    const started = performance.now();
    const run = (async () => {
      try {
        await job.run();
        this.metrics?.recordJobRun(job.name, 'ok', (performance.now() - started) / 1000);
      } catch (error) {
        this.metrics?.recordJobRun(job.name, 'failed', (performance.now() - started) / 1000);
        this.logger.error(
          { err: error, job: job.name },
          'periodic job failed; the next run tries again',
        );
      }
    })().finally(() => this.running.delete(slot));
    this.running.set(slot, { job, run });
    return run;
  }
}

@Global()
@Module({ providers: [Scheduler], exports: [Scheduler] })
export class SchedulerModule {
  /** A scheduler that starts nothing (the CLI drives its work itself). */
  static idle(): DynamicModule {
    return {
      module: SchedulerModule,
      providers: [{ provide: SCHEDULER_IDLE, useValue: true }, Scheduler],
      exports: [Scheduler],
    };
  }
}
