// The faults injected while the load runs, at fixed fractions of the load's duration: sandbox chaos
// (5xx, resets, hangs, slow answers, answers lost after the provider acted), kill -9 of a replica and
// its restart, every database session terminated several times, a PostgreSQL restart, the sandbox clock
// moved. Chaos ends before the load does, so that the settling period starts from a provider that answers.
import { setTimeout as sleep } from 'node:timers/promises';
import type { RunningSandbox } from '#src/sandbox/sandbox.js';
import type { SoakHttp } from './http.js';
import { query, type Replica, type SoakDatabase } from './rig.js';

export interface FaultRecord {
  at: number;
  what: string;
}

export interface Kill {
  replica: string;
  pid: number;
  at: number;
  /** The soak's requests in flight on it at that instant. */
  inFlight: string[];
}

export interface FaultPlan {
  sandbox: RunningSandbox;
  database: SoakDatabase;
  replicas: Replica[];
  http: SoakHttp;
  seed: string;
  embedded: boolean;
  start: number;
  loadMs: number;
}

export async function runFaults(plan: FaultPlan, log: (line: string) => void) {
  const faults: FaultRecord[] = [];
  const kills: Kill[] = [];
  const note = (what: string) => {
    faults.push({ at: Date.now(), what });
    log(`fault: ${what}`);
  };
  const at = async (fraction: number) => {
    const wait = plan.start + plan.loadMs * fraction - Date.now();
    if (wait > 0) await sleep(wait);
  };
  const { chaos } = plan.sandbox;
  let restarted: Promise<void> = Promise.resolve();
  const terminate = async () => {
    const url = await plan.database.url();
    const rows = await query<{ n: string }>(
      url,
      `SELECT count(*) AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE pid <> pg_backend_pid() AND backend_type = 'client backend') t`,
    );
    note(`every database session terminated (${rows[0]?.n ?? 0})`);
  };

  await at(0.1);
  const rules = [
    { operation: '*', fault: 'status', status: 503, probability: 0.03, seed: `${plan.seed}-503` },
    { operation: '*', fault: 'status', status: 500, probability: 0.02, seed: `${plan.seed}-500` },
    { operation: '*', fault: 'reset', probability: 0.02, seed: `${plan.seed}-reset` },
    { operation: '*', fault: 'hang', probability: 0.01, seed: `${plan.seed}-hang` },
    { operation: '*', fault: 'delay', delayMs: 1500, probability: 0.05, seed: `${plan.seed}-slow` },
    {
      operation: 'createPayment',
      fault: 'act-then-fail',
      then: 'reset',
      probability: 0.05,
      seed: `${plan.seed}-lost`,
    },
    {
      operation: 'initiatePayment',
      fault: 'act-then-fail',
      then: 'status',
      status: 503,
      probability: 0.05,
      seed: `${plan.seed}-lost-pis`,
    },
  ];
  for (const rule of rules) chaos.add(rule as never);
  note(
    `sandbox chaos on: ${rules.length} rules (503, 500, resets, hangs, 1.5 s answers, lost answers)`,
  );

  if (!plan.embedded) {
    await at(0.2);
    await terminate();
  }

  await at(0.3);
  {
    const victim = plan.replicas[plan.replicas.length - 1];
    const pid = plan.embedded ? victim.workerPids()[0] : victim.pid;
    if (pid !== undefined) {
      const inFlight = plan.http.inFlightOn(victim.name);
      kills.push({ replica: victim.name, pid, at: Date.now(), inFlight });
      await victim.kill(pid);
      note(
        `kill -9 of ${plan.embedded ? 'a gateway worker of ' : ''}${victim.name} (pid ${pid}, ${inFlight.length} requests in flight)`,
      );
      // Restarted in the background: the schedule goes on while it starts (a start takes a while here).
      if (!plan.embedded)
        restarted = sleep(5000)
          .then(() => victim.start())
          .then(
            () => note(`${victim.name} restarted`),
            // Its exit is one the soak did not cause (the table shows it); the run goes on to its checks.
            (error: Error) =>
              note(
                `${victim.name} did not restart: ${error.message.split('\n').slice(0, 3).join(' ')}`,
              ),
          );
    }
  }

  if (!plan.embedded) {
    await at(0.45);
    await terminate();
  }

  await at(0.5);
  const moved = await fetch(`${plan.sandbox.scaUrl}/sandbox/card/clock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ advanceSeconds: 7200 }),
  });
  note(`sandbox clock moved 2 h ahead (${moved.status})`);

  if (!plan.embedded) {
    await at(0.6);
    await terminate();
    await at(0.7);
    plan.database.restart?.();
    note('PostgreSQL restarted (pg_ctl restart -m fast)');
  }

  await at(0.85);
  chaos.clear();
  note('sandbox chaos off');
  await restarted;
  return { faults, kills };
}
