import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ScaSession } from './sca-session.entity.js';
import { ScaSessionRepository } from './sca-session.repository.js';
import { ScaSessionsService } from './sca-sessions.service.js';

/** Single-use return addresses for the bank's SCA redirect, bound to a consent or payment. */
@Module({
  imports: [TypeOrmModule.forFeature([ScaSession])],
  providers: [ScaSessionRepository, ScaSessionsService],
  exports: [ScaSessionsService],
})
export class ScaSessionsModule {}
