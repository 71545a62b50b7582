import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import type { Logger } from 'pino';
import type { AppConfig, OpenBankingService } from '#src/platform/config/app-config.js';
import { APP_CONFIG } from '#src/platform/config/config.module.js';
import { LOGGER } from '#src/platform/logging/logging.module.js';
import { checkClientCertificate, type ClientCertificateCheck } from './certificate-check.js';
import { ClientCredentials } from './client-credentials.js';
import type { Psd2Role } from '#src/shared/qwac/qwac-reader.js';

export const ROLE_OF_SERVICE: Record<OpenBankingService, Psd2Role> = {
  ais: 'PSP_AI',
  cof: 'PSP_IC',
  pis: 'PSP_PI',
};

/** Stops start-up in production mode when the QWAC cannot work; names what is wrong. */
export class CertificateStartupError extends Error {
  constructor(problems: string[]) {
    super(
      `the client certificate (QWAC) cannot be used:\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
    this.name = 'CertificateStartupError';
  }
}

/**
 * Checks the client certificate at boot (key, chain, validity, PSD2 roles for the enabled services)
 * and again for readiness, so that a certificate about to expire shows before a bank refuses it.
 */
@Injectable()
export class CertificateStatusService implements OnModuleInit {
  constructor(
    private readonly credentials: ClientCredentials,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  onModuleInit(): void {
    const result = this.check();
    const { info } = result;
    const summary = {
      subject: info.subject,
      organizationIdentifier: info.organizationIdentifier,
      roles: info.roles,
      daysToExpiry: info.daysToExpiry,
    };
    if (!result.ok && this.config.mode === 'production')
      throw new CertificateStartupError(result.problems);
    if (!result.ok)
      this.logger.warn(
        { ...summary, problems: result.problems },
        'client certificate check failed (sandbox mode continues)',
      );
    else if (result.warnings.length)
      this.logger.warn(
        { ...summary, warnings: result.warnings },
        'client certificate check passed with warnings',
      );
    else this.logger.info(summary, 'client certificate check passed');
  }

  check(now = new Date()): ClientCertificateCheck {
    const material = this.credentials.current(now.getTime());
    const result = checkClientCertificate({
      certPem: material.cert,
      keyPem: material.key,
      keyPassphrase: material.passphrase,
      caPem: material.clientCa,
      requiredRoles: this.config.openBankingServices.map((service) => ROLE_OF_SERVICE[service]),
      now,
    });
    const reloadProblem = this.credentials.reloadProblem();
    if (reloadProblem) result.warnings.push(reloadProblem);
    return result;
  }
}
