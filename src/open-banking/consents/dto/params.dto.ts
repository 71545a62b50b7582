import { ApiProperty } from '@nestjs/swagger';
import { IsUUID } from 'class-validator';

export class ConsentParams {
  @ApiProperty({ description: "Portico's consent id", format: 'uuid', maxLength: 36 })
  @IsUUID(undefined, { message: 'consentId must be a consent id (UUID) from Portico' })
  consentId: string;
}
