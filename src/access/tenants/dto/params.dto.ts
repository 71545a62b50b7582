import { ApiProperty } from '@nestjs/swagger';
import { IsUUID } from 'class-validator';

export class TenantParams {
  @ApiProperty({ format: 'uuid', maxLength: 36, description: 'Tenant id' })
  @IsUUID()
  tenantId: string;
}

export class ApiKeyParams extends TenantParams {
  @ApiProperty({ format: 'uuid', maxLength: 36, description: 'API key id' })
  @IsUUID()
  keyId: string;
}
