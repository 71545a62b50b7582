import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import type { EntityTarget, Repository } from 'typeorm';
import { builtStatementName, PlainSql } from '#src/platform/database/plain-sql.js';
import { currentRequestId } from '#src/platform/logging/request-context.js';
import { AccessLogService } from './access-log.service.js';
import { StatusChange, type SubjectKind } from './status-change.entity.js';
import { StatusTransitionListeners, type StatusTransition } from './status-transition-listeners.js';

/** What a status change moves: a row of a table with a status (consents, payments, provider resources). */
export interface StatusSubject {
  id: string;
  tenantId: string;
  status: string;
}

/** The table a subject's row is in: its name in SQL and its entity (for its columns). */
export interface StatusTable {
  name: string;
  entity: EntityTarget<StatusSubject>;
}

/** Columns written with a change (by their property names): the provider's answer taken with it. */
export type ColumnValues = Record<string, unknown>;

/** A CTE and its parameters, for a statement that writes more than one thing. */
export interface StatementPart {
  cte: string;
  params: unknown[];
}

const HISTORY_COLUMNS =
  'status_changes (subject_kind, subject_id, tenant_id, from_status, to_status, cause, request_id)';

/** The history entry of the row in `changed`: $2 from, $3 to, $4 kind, $5 cause, $6 request id. */
const HISTORY_OF_CHANGED = `history AS (INSERT INTO ${HISTORY_COLUMNS} SELECT $4, id, tenant_id, $2, $3, $5, $6 FROM changed)`;

/** The access-log rows a change's statement completed (the completions it carried). */
const COMPLETED = `${AccessLogService.completedIdsSql('completions')} AS completed`;
interface Completed {
  completed: string[];
}

/**
 * Appends to the status history of every provider resource: the one place status changes are written.
 * A change is one statement (one round-trip, one commit): the compare-and-set of the row's status, the
 * columns taken with it, its history entry, what its listeners write (the webhook outbox: the event and
 * its deliveries), and the access-log completions waiting to be written (AccessLogService.completeSoon).
 */
@Injectable()
export class StatusHistoryService {
  private readonly sql: PlainSql;

  constructor(
    @InjectRepository(StatusChange) private readonly changes: Repository<StatusChange>,
    private readonly listeners: StatusTransitionListeners,
    private readonly accessLog: AccessLogService,
  ) {
    this.sql = new PlainSql(changes.manager.connection);
  }

  /**
   * The first history entry of a row (from no status), as a CTE named `name` for the statement that
   * writes the row, its parameters numbered from `first` on.
   */
  firstEntry(
    name: string,
    subject: StatusSubject & { kind: SubjectKind },
    first: number,
  ): StatementPart {
    const $ = (offset: number) => `$${first + offset}`;
    return {
      cte: `${name} AS (INSERT INTO ${HISTORY_COLUMNS}
              VALUES (${$(0)}, ${$(1)}::uuid, ${$(2)}::uuid, NULL, ${$(3)}, 'created', ${$(4)}::uuid))`,
      params: [
        subject.kind,
        subject.id,
        subject.tenantId,
        subject.status,
        currentRequestId() ?? null,
      ],
    };
  }

  /**
   * Moves a row to `to` and records it (history, listeners' writes), with `columns` written too, in one
   * statement, as a compare-and-set on the status the caller saw: when another request or replica
   * moved it first, the status and history stay (the columns are written all the same), `subject.status`
   * becomes the stored one, and the answer is false.
   */
  async transition<T extends StatusSubject>(
    table: StatusTable,
    kind: SubjectKind,
    subject: T,
    to: string,
    cause: string,
    columns: ColumnValues = {},
  ): Promise<boolean> {
    const from = subject.status;
    if (from === to) {
      const update = this.sets(table, columns, 2);
      if (update.clauses)
        await this.run(
          `trail:update:${table.name}`,
          (completions) => `WITH ${completions},
             updated AS (UPDATE ${table.name} SET ${update.clauses} WHERE id = $1)
             SELECT ${COMPLETED}`,
          [subject.id],
          update.params,
        );
      return true;
    }
    const sets = this.sets(table, columns, 7);
    // With columns, the row is written whatever its status; without, only when the status is `from`.
    const changedCte = sets.clauses
      ? `prior AS (SELECT id, status FROM ${table.name} WHERE id = $1 FOR UPDATE),
         updated AS (
           UPDATE ${table.name} t SET status = CASE WHEN p.status = $2 THEN $3 ELSE t.status END, ${sets.clauses}
             FROM prior p WHERE t.id = p.id
           RETURNING t.id, t.tenant_id, p.status = $2 AS moved),
         changed AS (SELECT id, tenant_id FROM updated WHERE moved)`
      : `changed AS (
           UPDATE ${table.name} SET status = $3${this.touched(table)} WHERE id = $1 AND status = $2
           RETURNING id, tenant_id)`;
    const transition = this.transitionOf(kind, subject, from, to, cause, columns);
    const [row] = await this.run<{ moved: boolean; stored: string | null }>(
      `trail:transition:${table.name}`,
      (completions, listeners) => `WITH ${changedCte},
         ${HISTORY_OF_CHANGED},
         ${completions}${listeners}
         SELECT EXISTS (SELECT 1 FROM changed) AS moved,
                (SELECT status FROM ${table.name} WHERE id = $1) AS stored, ${COMPLETED}`,
      [subject.id, from, to, kind, cause, currentRequestId() ?? null],
      sets.params,
      transition,
    );
    // `stored` is read from the statement's snapshot: the status before it, when it moved nothing.
    const moved = row?.moved === true;
    subject.status = moved ? to : (row?.stored ?? from);
    if (moved) this.listeners.heard(transition);
    return moved;
  }

  /**
   * A change that keeps the status (an update, with `columns` written), recorded in the history and
   * told to the listeners all the same, in one statement.
   */
  async touch<T extends StatusSubject>(
    table: StatusTable,
    kind: SubjectKind,
    subject: T,
    cause: string,
    columns: ColumnValues = {},
  ): Promise<void> {
    const sets = this.sets(table, columns, 7);
    const changedCte = sets.clauses
      ? `changed AS (UPDATE ${table.name} SET ${sets.clauses} WHERE id = $1 RETURNING id, tenant_id)`
      : `changed AS (SELECT id, tenant_id FROM ${table.name} WHERE id = $1)`;
    const status = subject.status;
    const transition = this.transitionOf(kind, subject, status, status, cause, columns);
    await this.run(
      `trail:touch:${table.name}`,
      (completions, listeners) => `WITH ${changedCte},
         ${HISTORY_OF_CHANGED},
         ${completions}${listeners}
         SELECT ${COMPLETED}`,
      [subject.id, status, status, kind, cause, currentRequestId() ?? null],
      sets.params,
      transition,
    );
    this.listeners.heard(transition);
  }

  of(kind: SubjectKind, id: string): Promise<StatusChange[]> {
    return this.changes.find({ where: { subjectKind: kind, subjectId: id }, order: { id: 'ASC' } });
  }

  /**
   * Runs a change's statement: `base` parameters ($1…), then the columns', then the access-log
   * completions it carries (a CTE that `completions` builds in), then the listeners' (CTEs, each after
   * a comma, that `listeners` builds in after it).
   */
  private run<R extends object = object>(
    prefix: string,
    text: (completions: string, listeners: string) => string,
    base: unknown[],
    columnParams: unknown[],
    transition?: StatusTransition,
  ): Promise<R[]> {
    const completionsAt = base.length + columnParams.length + 1;
    const writes = transition
      ? this.listeners.writes(transition, completionsAt + 4)
      : { ctes: [], params: [] };
    const sql = text(
      AccessLogService.completionCte('completions', completionsAt, true),
      writes.ctes.map((cte) => `,\n${cte}`).join(''),
    );
    return this.accessLog.carryCompletions(
      (completions) =>
        this.sql.query<R & Completed>(builtStatementName(prefix, sql), sql, [
          ...base,
          ...columnParams,
          ...completions,
          ...writes.params,
        ]),
      (rows) => rows[0]?.completed ?? [],
    );
  }

  private transitionOf(
    kind: SubjectKind,
    subject: StatusSubject,
    fromStatus: string,
    toStatus: string,
    cause: string,
    columns: ColumnValues,
  ): StatusTransition {
    return {
      subject: { kind, id: subject.id, tenantId: subject.tenantId },
      fromStatus,
      toStatus,
      cause,
      // The row as the change leaves it: a provider id written with the change names it already.
      resource: { ...subject, ...columns } as StatusTransition['resource'],
    };
  }

  /** `col = $n, …` for the columns (by property name), and the table's update-date column if it has one. */
  private sets(
    table: StatusTable,
    columns: ColumnValues,
    first: number,
  ): { clauses: string; params: unknown[] } {
    const metadata = this.changes.manager.connection.getMetadata(table.entity);
    const params: unknown[] = [];
    const clauses = Object.entries(columns).map(([property, value]) => {
      const column = metadata.findColumnWithPropertyName(property);
      if (!column) throw new Error(`${table.name} has no column for ${property}`);
      params.push(this.changes.manager.connection.driver.preparePersistentValue(value, column));
      return `${column.databaseName} = $${first + params.length - 1}`;
    });
    if (clauses.length === 0) return { clauses: '', params };
    return { clauses: clauses.join(', ') + this.touched(table), params };
  }

  /** `, updated_at = now()` for a table with an update-date column (as TypeORM's updates write it). */
  private touched(table: StatusTable): string {
    const column = this.changes.manager.connection.getMetadata(table.entity).updateDateColumn;
    return column ? `, ${column.databaseName} = now()` : '';
  }
}
