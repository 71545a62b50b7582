import { Column, Entity, PrimaryColumn } from 'typeorm';

/** Unattended reads per consent per UTC day: the daily budget, shared by every replica. */
@Entity({ name: 'consent_usage' })
export class ConsentUsage {
  @PrimaryColumn({ name: 'consent_id', type: 'uuid' })
  consentId: string;

  @PrimaryColumn({ type: 'date' })
  day: string;

  @Column({ type: 'integer' })
  count: number;
}
