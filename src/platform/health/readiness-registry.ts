import { Global, Injectable, Module } from '@nestjs/common';
import type { CheckResult, ReadinessChecks } from './readiness-report.js';

/** The checks a module may register (the database and the lifecycle are readiness's own). */
export type RegisteredCheckName = Exclude<keyof ReadinessChecks, 'database' | 'lifecycle'>;

/**
 * The readiness checks of the modules that own what they check (the certificate and each upstream):
 * they register here, so that readiness depends on no capability and reports each one that runs.
 */
@Injectable()
export class ReadinessRegistry {
  private readonly checks = new Map<
    RegisteredCheckName,
    () => Promise<CheckResult> | CheckResult
  >();

  register(name: RegisteredCheckName, check: () => Promise<CheckResult> | CheckResult): void {
    this.checks.set(name, check);
  }

  /** Every registered check, run side by side; one that throws is a failed check, not a failed report. */
  async run(): Promise<Partial<Record<RegisteredCheckName, CheckResult>>> {
    const entries = await Promise.all(
      [...this.checks].map(async ([name, check]) => {
        try {
          return [name, await check()] as const;
        } catch (error) {
          return [
            name,
            { status: 'fail', detail: String((error as Error)?.message ?? error).slice(0, 500) },
          ] as const;
        }
      }),
    );
    return Object.fromEntries(entries);
  }
}

@Global()
@Module({ providers: [ReadinessRegistry], exports: [ReadinessRegistry] })
export class ReadinessModule {}
