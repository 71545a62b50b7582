import { Module } from '@nestjs/common';
import { ConsentsModule } from '../consents/consents.module.js';
import { PaymentsModule } from '../payments/payments.module.js';
import { ScaSessionsModule } from '../sca-sessions/sca-sessions.module.js';
import { ScaCallbackController } from './sca-callback.controller.js';
import { ScaCallbackService } from './sca-callback.service.js';

/** The user's browser back from the bank: outcome recorded, browser sent on to the app. */
@Module({
  imports: [ScaSessionsModule, ConsentsModule, PaymentsModule],
  controllers: [ScaCallbackController],
  providers: [ScaCallbackService],
})
export class ScaCallbackModule {}
