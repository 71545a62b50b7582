import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Metrics } from '#src/platform/metrics/metrics.service.js';
import { stateGauge } from '#src/platform/metrics/state-gauge.js';
import { CertificateStatusService } from './certificate-status.service.js';

/**
 * `portico_client_certificate_expiry_timestamp_seconds`: when the QWAC in use expires, read at each
 * scrape (a renewed certificate shows once reloaded); days to expiry are `(value - time()) / 86400`.
 */
@Injectable()
export class CertificateMetrics implements OnModuleInit {
  constructor(
    private readonly certificates: CertificateStatusService,
    private readonly metrics: Metrics,
  ) {}

  onModuleInit(): void {
    stateGauge(this.metrics, {
      name: 'portico_client_certificate_expiry_timestamp_seconds',
      help: 'When the client certificate (QWAC) in use expires, in Unix seconds',
      read: () => [{ value: this.certificates.check().info.validTo.getTime() / 1000 }],
    });
  }
}
