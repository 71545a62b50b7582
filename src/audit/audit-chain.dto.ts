import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsBoolean, IsOptional } from 'class-validator';
import { PRINTABLE_TEXT_SOURCE } from '../platform/common/text.js';

const HASH = { pattern: '^[0-9a-f]{64}$', minLength: 64, maxLength: 64 } as const;
const SEQ = { pattern: '^[0-9]{1,19}$', maxLength: 19, example: '1042' } as const;
const BREAKS = [
  'gap',
  'row-deleted',
  'row-edited',
  'link-altered',
  'row-unsealed',
  'late-seal',
  'checkpoint-mismatch',
  'checkpoint-signature',
  'checkpoint-unknown-key',
  'cut-too-early',
  'cut-unsigned',
] as const;

export class ChainLinkRef {
  @ApiProperty({ description: 'The link number', ...SEQ })
  seq: string;

  @ApiProperty({ description: 'The link hash', ...HASH })
  chainHash: string;
}

export class CheckpointView extends ChainLinkRef {
  @ApiProperty({ format: 'date-time', maxLength: 40 })
  signedAt: string;

  @ApiProperty({ description: 'Which key signed it', pattern: '^[0-9a-f]{16}$', maxLength: 16 })
  keyId: string;
}

export class SignedCheckpointView extends CheckpointView {
  @ApiProperty({
    description:
      'Ed25519 signature (base64) of `portico-audit-checkpoint/v1 <seq> <chainHash> <signedAt>`',
    maxLength: 200,
    pattern: '^[A-Za-z0-9+/=]+$',
  })
  signature: string;
}

export class ChainBreakView {
  @ApiProperty({ enum: BREAKS, description: 'What is wrong' })
  problem: (typeof BREAKS)[number];

  @ApiPropertyOptional({ description: 'The first link that does not verify', ...SEQ })
  seq?: string;

  @ApiPropertyOptional({ enum: ['status_change', 'access_log'] })
  entryKind?: 'status_change' | 'access_log';

  @ApiPropertyOptional({ description: 'The row id in its table', ...SEQ })
  entryId?: string;

  @ApiProperty({
    maxLength: 500,
    pattern: PRINTABLE_TEXT_SOURCE,
    example: 'access_log 1042 differs from what was sealed',
  })
  detail: string;
}

export class CheckpointSummary {
  @ApiProperty({ format: 'int32', minimum: 0 })
  count: number;

  @ApiPropertyOptional({ type: CheckpointView, nullable: true })
  latest: CheckpointView | null;
}

export class VerificationReportView {
  @ApiProperty({ description: 'True when every link, row and checkpoint verifies' })
  ok: boolean;

  @ApiProperty({ format: 'date-time', maxLength: 40 })
  verifiedAt: string;

  @ApiProperty({
    description:
      "True: walked from the chain's first link (or its retention cut); false: from `from`, the newest signed checkpoint a verification passed before",
  })
  full: boolean;

  @ApiPropertyOptional({
    type: ChainLinkRef,
    nullable: true,
    description: 'The checkpoint the walk started after (null: a full walk)',
  })
  from: ChainLinkRef | null;

  @ApiProperty({ description: 'Links verified', format: 'int64', minimum: 0 })
  links: number;

  @ApiPropertyOptional({
    type: ChainLinkRef,
    nullable: true,
    description: 'The last link verified',
  })
  head: ChainLinkRef | null;

  @ApiProperty({ type: CheckpointSummary })
  checkpoints: CheckpointSummary;

  @ApiPropertyOptional({ type: ChainBreakView, nullable: true })
  firstBreak: ChainBreakView | null;
}

export class VerificationQuery {
  @ApiPropertyOptional({
    description:
      'Walk the whole chain from its first link (or its retention cut) instead of from the newest checkpoint a verification passed',
    type: Boolean,
    default: false,
  })
  @IsOptional()
  @Transform(({ value }) => value === 'true' || value === true)
  @IsBoolean()
  full?: boolean;
}

const PUBLIC_KEY_PEM = {
  maxLength: 500,
  pattern: '^-----BEGIN PUBLIC KEY-----[A-Za-z0-9+/=\\s]+-----END PUBLIC KEY-----\\s*$',
} as const;

export class TrustedKeyView {
  @ApiProperty({
    description: 'The key id checkpoints name',
    pattern: '^[0-9a-f]{16}$',
    maxLength: 16,
  })
  keyId: string;

  @ApiProperty({ description: 'The public key (SPKI PEM)', ...PUBLIC_KEY_PEM })
  publicKeyPem: string;
}

export class CheckpointList {
  @ApiPropertyOptional({
    description:
      'The public key (SPKI PEM) that verifies the signatures made now; null when none is configured',
    nullable: true,
    type: String,
    ...PUBLIC_KEY_PEM,
  })
  publicKeyPem: string | null;

  /** How many checkpoints there are, the newest 100 of them listed. */
  @ApiProperty({ format: 'int32', minimum: 0, maximum: 100000000 })
  totalCount: number;

  @ApiProperty({
    description:
      'Every key whose checkpoints verify: the signing key and the retired ones (AUDIT_TRUSTED_KEYS_FILE), by the key id each checkpoint names',
    type: [TrustedKeyView],
    maxItems: 100,
  })
  trustedKeys: TrustedKeyView[];

  @ApiProperty({
    description: 'Newest first, at most 100',
    type: [SignedCheckpointView],
    maxItems: 100,
  })
  items: SignedCheckpointView[];
}
