// SQL for the audit log.
import type { Db } from '../database/connect.js';

/** One entry to write. */
export interface AuditInsert {
  orgId: string | null;
  livemode: boolean;
  actor: string;
  action: string;
  target: string | null;
  address: string | null;
  at: Date;
}

/** Appends one entry. */
export async function insertAuditEntry(db: Db, entry: AuditInsert): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      org_id: entry.orgId,
      livemode: entry.livemode,
      actor: entry.actor,
      action: entry.action,
      target: entry.target,
      address: entry.address,
      at: entry.at,
    })
    .execute();
}

/** Appends one entry to each org on the plan `planId` (its org id in place of `entry.orgId`). */
export async function insertAuditEntryPerOrgOnPlan(db: Db, planId: string, entry: AuditInsert): Promise<void> {
  await db
    .insertInto('audit_log')
    .columns(['org_id', 'livemode', 'actor', 'action', 'target', 'address', 'at'])
    .expression(
      db
        .selectFrom('orgs')
        .select((eb) => [
          'id',
          eb.val(entry.livemode).as('livemode'),
          eb.val(entry.actor).as('actor'),
          eb.val(entry.action).as('action'),
          eb.val(entry.target).as('target'),
          eb.val(entry.address).as('address'),
          eb.val(entry.at).as('at'),
        ])
        .where('plan_id', '=', planId)
        .where('live_org_id', 'is', null),
    )
    .execute();
}

/** The org's newest `limit` entries, newest first. */
export async function listAuditRows(db: Db, orgId: string, limit: number) {
  return db
    .selectFrom('audit_log')
    .select(['id', 'livemode', 'actor', 'action', 'target', 'address', 'at'])
    .where('org_id', '=', orgId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Deletes up to `limit` entries older than `before`; returns how many went. */
export async function deleteOldAuditRows(db: Db, before: Date, limit: number): Promise<number> {
  const result = await db
    .deleteFrom('audit_log')
    .where('id', 'in', (sub) => sub.selectFrom('audit_log').select('id').where('at', '<', before).limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
