import { Column, Entity, Index, PrimaryColumn, PrimaryGeneratedColumn } from 'typeorm';

/** The audited tables whose rows the chain seals. */
export const CHAINED_KINDS = ['status_change', 'access_log'] as const;
export type ChainedKind = (typeof CHAINED_KINDS)[number];

/**
 * One link of the tamper-evident chain: an audited row (a status change or an access-log row), the
 * hash of its content when it was sealed, and the hash of the chain up to and including it. Links are
 * numbered without gaps by a single sealer at a time (a database lock), so there is one chain, never a
 * fork. Append-only (a trigger refuses UPDATE and DELETE).
 */
@Entity({ name: 'audit_chain' })
@Index(['entryKind', 'entryId', 'entryAt'], { unique: true })
export class AuditChainLink {
  @PrimaryColumn({ type: 'bigint' })
  seq: string;

  @Column({ name: 'entry_kind', type: 'varchar', length: 16 })
  entryKind: ChainedKind;

  @Column({ name: 'entry_id', type: 'bigint' })
  entryId: string;

  /**
   * The sealed row's date (an access-log row's created_at, a status change's changed_at): the chain is
   * partitioned by month on it, beside its rows, and a link finds its row in one partition.
   */
  @PrimaryColumn({ name: 'entry_at', type: 'timestamptz' })
  entryAt: Date;

  @Column({ name: 'tenant_id', type: 'uuid' })
  tenantId: string;

  /** sha256 (hex) of the row's canonical JSON (non-null columns, UTC timestamps). */
  @Column({ name: 'row_hash', type: 'char', length: 64 })
  rowHash: string;

  /** sha256 (hex) of the previous link's chain hash, this link's number, kind, id and row hash. */
  @Column({ name: 'chain_hash', type: 'char', length: 64 })
  chainHash: string;

  @Column({ name: 'sealed_at', type: 'timestamptz', default: () => 'now()' })
  sealedAt: Date;
}

/** A signed statement of the chain's head, for an auditor to keep outside Portico. Append-only. */
@Entity({ name: 'audit_checkpoints' })
export class AuditCheckpoint {
  /** The number of the last link it covers. */
  @PrimaryColumn({ type: 'bigint' })
  seq: string;

  @Column({ name: 'chain_hash', type: 'char', length: 64 })
  chainHash: string;

  @Column({ name: 'signed_at', type: 'timestamptz' })
  signedAt: Date;

  /** The first 16 hex digits of sha256 of the signing key's public key (SPKI DER). */
  @Column({ name: 'key_id', type: 'varchar', length: 16 })
  keyId: string;

  /** Ed25519 signature (base64) of `checkpointStatement(seq, chainHash, signedAt)`. */
  @Column({ type: 'text' })
  signature: string;
}

/** The sealer's progress per kind: every row with an id at or below `floor` is sealed. */
@Entity({ name: 'audit_seal_floors' })
export class AuditSealFloor {
  @PrimaryColumn({ name: 'entry_kind', type: 'varchar', length: 16 })
  entryKind: ChainedKind;

  @Column({ type: 'bigint' })
  floor: string;
}

/**
 * A process writing the trail, alive while its lease is renewed (WriterLeaseService): the sealer leaves
 * the rows it wrote ahead `sent` unsealed until then, since it may still hold their completions.
 */
@Entity({ name: 'writer_leases' })
export class WriterLease {
  @PrimaryColumn({ type: 'uuid' })
  writer: string;

  /** Since when the lease has been renewed without lapsing. */
  @Column({ name: 'held_since', type: 'timestamptz' })
  heldSince: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}

/**
 * A retention cut: the links up to `seq` and the rows they sealed were removed once older than the
 * retention period; verification starts from this link's hash. Append-only.
 */
@Entity({ name: 'audit_retention_cuts' })
export class AuditRetentionCut {
  /** The last link removed. */
  @PrimaryColumn({ type: 'bigint' })
  seq: string;

  /** That link's hash: the chain's start from now on. */
  @Column({ name: 'chain_hash', type: 'char', length: 64 })
  chainHash: string;

  /** Every removed row was dated before this. */
  @Column({ name: 'removed_before', type: 'timestamptz' })
  removedBefore: Date;

  @Column({ name: 'cut_at', type: 'timestamptz' })
  cutAt: Date;

  @Column({ name: 'rows_removed', type: 'integer' })
  rowsRemoved: number;
}

/**
 * One verification of the chain, as it started and, once done, how it ended: the next verification
 * starts from the newest checkpoint an ok one verified (a full walk on request). Written by whoever
 * verifies (the scheduled job, the CLI, an auditor's request); the job's claim across replicas is its
 * row without `finished_at`.
 */
@Entity({ name: 'audit_verifications' })
@Index(['finishedAt'])
export class AuditVerification {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'started_at', type: 'timestamptz', default: () => 'now()' })
  startedAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;

  /** `scheduled`, `cli` or `api`. */
  @Column({ type: 'varchar', length: 16 })
  trigger: string;

  /** Walked from the chain's start (or its retention cut) rather than from a verified checkpoint. */
  @Column({ type: 'boolean' })
  full: boolean;

  @Column({ type: 'boolean', nullable: true })
  ok: boolean | null;

  /** The checkpoint the walk started after (null: a full walk). */
  @Column({ name: 'from_seq', type: 'bigint', nullable: true })
  fromSeq: string | null;

  @Column({ type: 'bigint', default: 0 })
  links: string;

  @Column({ name: 'head_seq', type: 'bigint', nullable: true })
  headSeq: string | null;

  @Column({ name: 'head_hash', type: 'char', length: 64, nullable: true })
  headHash: string | null;

  /** The newest signed checkpoint verified: where the next walk starts. */
  @Column({ name: 'checkpoint_seq', type: 'bigint', nullable: true })
  checkpointSeq: string | null;

  @Column({ name: 'checkpoint_hash', type: 'char', length: 64, nullable: true })
  checkpointHash: string | null;

  /** The first break's kind (BreakKind), when not ok. */
  @Column({ type: 'varchar', length: 32, nullable: true })
  problem: string | null;
}

/**
 * The archive of a closed month (AuditArchiveService): one gzip-compressed JSON Lines file holding the
 * month's links with their rows and the checkpoints that cover them. Retention drops a month's
 * partitions only once its archive is recorded here and still reads back with this sha256.
 */
@Entity({ name: 'audit_archives' })
export class AuditArchive {
  /** `YYYY-MM` (UTC). */
  @PrimaryColumn({ type: 'varchar', length: 7 })
  month: string;

  /** The file's name in AUDIT_ARCHIVE_DIR. */
  @Column({ name: 'file_name', type: 'text' })
  fileName: string;

  /** sha256 (hex) of the file as written (its compressed bytes). */
  @Column({ type: 'char', length: 64 })
  sha256: string;

  /** The first link it holds (the previous archive's last plus one). */
  @Column({ name: 'first_seq', type: 'bigint' })
  firstSeq: string;

  /** Its last link: a signed checkpoint's. */
  @Column({ name: 'last_seq', type: 'bigint' })
  lastSeq: string;

  /** Links (one row each) it holds. */
  @Column({ type: 'bigint' })
  rows: string;

  @Column({ type: 'bigint' })
  bytes: string;

  @Column({ name: 'written_at', type: 'timestamptz' })
  writtenAt: Date;

  /** When the file was last read back whole and verified (after writing, before a drop). */
  @Column({ name: 'verified_at', type: 'timestamptz', nullable: true })
  verifiedAt: Date | null;
}
