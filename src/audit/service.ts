// The audit log: who changed what (keys, webhook endpoints, members, plans) and every sign-in, from
// the dashboard or the CLI, kept under the retention job's rule.
import type { Db } from '../database/connect.js';
import { deleteInBatches } from '../database/batches.js';
import * as audit from './queries.js';

/** Who acts for entries written by the operator CLI. */
export const CLI_ACTOR = 'cli';

/** One change or sign-in to record; `at` defaults to now. */
export interface AuditEntry {
  orgId: string | null;
  /** Whether the change was made in live mode (the default) or test mode. */
  livemode?: boolean;
  actor: string;
  action: string;
  target?: string | null;
  address?: string | null;
  at?: Date;
}

/** The row an entry is stored as: unset target and address as null, `at` now by default. */
function rowOf(entry: AuditEntry): audit.AuditInsert {
  return {
    orgId: entry.orgId,
    livemode: entry.livemode ?? true,
    actor: entry.actor,
    action: entry.action,
    target: entry.target ?? null,
    address: entry.address ?? null,
    at: entry.at ?? new Date(),
  };
}

/** Appends an entry to the audit log. */
export async function recordAudit(db: Db, entry: AuditEntry): Promise<void> {
  await audit.insertAuditEntry(db, rowOf(entry));
}

/**
 * Records a change to a plan shared by orgs: once for the operator (no org) and once in the log of each
 * org on the plan, so its admins see what changed their limits.
 */
export async function recordPlanAudit(db: Db, planId: string, entry: Omit<AuditEntry, 'orgId'>): Promise<void> {
  const row = rowOf({ ...entry, orgId: null });
  await audit.insertAuditEntry(db, row);
  await audit.insertAuditEntryPerOrgOnPlan(db, planId, row);
}

/** The org's newest `limit` entries of both modes (each with `livemode`), newest first. */
export async function listAudit(db: Db, orgId: string, limit: number) {
  return audit.listAuditRows(db, orgId, limit);
}

/** Removes entries older than `before`, in batches of `batchSize`; returns how many went. */
export async function pruneAudit(db: Db, before: Date, batchSize: number): Promise<number> {
  return deleteInBatches(() => audit.deleteOldAuditRows(db, before, batchSize), batchSize);
}
