import type { CheckResult } from '#src/platform/health/readiness-report.js';
import type { CertificateStatusService } from './certificate-status.service.js';

/** The QWAC's readiness check: usable for the enabled services, warned of under 30 days to expiry. */
export function certificateCheck(certificates: CertificateStatusService): CheckResult {
  try {
    const { ok, problems, warnings, info } = certificates.check();
    const summary = `${info.organizationIdentifier ?? info.subject}; roles ${info.roles.join(', ') || 'none'}; expires ${info.validTo.toISOString().slice(0, 10)} (${info.daysToExpiry} days)`;
    if (!ok)
      return {
        status: 'fail',
        detail: `${problems.join('; ')} [${summary}]`.slice(0, 500),
        daysToExpiry: info.daysToExpiry,
      };
    return {
      status: warnings.length ? 'warn' : 'ok',
      detail: [...warnings, summary].join('; ').slice(0, 500),
      daysToExpiry: info.daysToExpiry,
    };
  } catch (error) {
    return {
      status: 'fail',
      detail: `cannot read the client certificate: ${(error as Error).message}`.slice(0, 500),
    };
  }
}
