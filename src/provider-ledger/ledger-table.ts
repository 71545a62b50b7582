import type { EntityTarget } from 'typeorm';
import type { AccessSubject } from '../audit/trail/access-log.service.js';
import type { SubjectKind } from '../audit/trail/status-change.entity.js';

/** What the ledger reads and writes of any row it keeps: whose it is and its status. */
export interface LedgerRow {
  id: string;
  tenantId: string;
  status: string;
}

/**
 * A table the ledger keeps rows in: the shared provider_resources, or a capability's own (open banking's
 * consents and payments, whose rich columns auditors read). The capability describes it once.
 */
export interface LedgerTable<R extends LedgerRow> {
  entity: EntityTarget<R>;
  /** Its name in SQL (the lease over rows in doubt). */
  name: string;
  /** The kind of a row's status history (status_changes.subject_kind), which names its webhook event. */
  subjectKind(row: R): SubjectKind;
  /** The access-log column that names the row a call is about (`{ paymentId: row.id }`). */
  accessSubject(row: R): Pick<AccessSubject, 'consentId' | 'paymentId' | 'cardResourceId'>;
}
