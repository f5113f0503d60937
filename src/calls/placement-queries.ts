// SQL for call_placements: placements between their two transactions, and their recovery schedule.
import type { Insertable, Selectable } from 'kysely';
import type { Db } from '../database/connect.js';
import type { CallPlacementsTable } from '../../db/schema.js';

/** A placement as stored. */
export type PlacementRow = Selectable<CallPlacementsTable>;
/** A new placement; JSON columns are given as values. */
export type NewPlacement = Omit<Insertable<CallPlacementsTable>, 'metadata' | 'provider_settings'> & {
  metadata: PlacementRow['metadata'];
  provider_settings: PlacementRow['provider_settings'];
};

/** Stores a placement. */
export async function insertPlacement(db: Db, placement: NewPlacement): Promise<void> {
  await insertPlacements(db, [placement]);
}

/** Stores placements in one statement. */
export async function insertPlacements(db: Db, placements: NewPlacement[]): Promise<void> {
  if (placements.length === 0) return;
  await db
    .insertInto('call_placements')
    .values(
      placements.map((placement) => ({
        ...placement,
        metadata: JSON.stringify(placement.metadata),
        provider_settings: JSON.stringify(placement.provider_settings),
      })),
    )
    .execute();
}

/** Locks and returns the placement with this id, or undefined once it has become a call or nothing. */
export async function lockPlacement(db: Db, id: string): Promise<PlacementRow | undefined> {
  return db.selectFrom('call_placements').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** Removes a placement (it became a call, or came to nothing). */
export async function deletePlacement(db: Db, id: string): Promise<void> {
  await db.deleteFrom('call_placements').where('id', '=', id).execute();
}

/** Marks a placement whose provider never answered; it is looked up at `recoverAt`. */
export async function markPlacementUnknown(db: Db, id: string, recoverAt: Date): Promise<void> {
  await db
    .updateTable('call_placements')
    .set({ state: 'unknown', recover_at: recoverAt })
    .where('id', '=', id)
    .execute();
}

/**
 * Takes the placement most overdue for recovery by `now`, skipping rows others hold, and moves its
 * recovery to `leaseUntil` (so a process that dies mid-recovery leaves it to another): one statement.
 */
export async function claimDuePlacement(db: Db, now: Date, leaseUntil: Date): Promise<PlacementRow | undefined> {
  return db
    .updateTable('call_placements')
    .set({ recover_at: leaseUntil })
    .where('id', '=', (eb) =>
      eb
        .selectFrom('call_placements')
        .select('id')
        .where('recover_at', '<=', now)
        .orderBy('recover_at')
        .limit(1)
        .forUpdate()
        .skipLocked(),
    )
    .returningAll()
    .executeTakeFirst();
}

/** Moves a placement's recovery to `at`. */
export async function schedulePlacementRecovery(db: Db, id: string, at: Date): Promise<void> {
  await db.updateTable('call_placements').set({ recover_at: at }).where('id', '=', id).execute();
}

/** Whether the org's placement made with Idempotency-Key `key` is waiting for reconciliation (its provider never answered). */
export async function isKeyPlacementUnknown(db: Db, orgId: string, key: string): Promise<boolean> {
  const row = await db
    .selectFrom('call_placements')
    .select('id')
    .where('org_id', '=', orgId)
    .where('idempotency_key', '=', key)
    .where('state', '=', 'unknown')
    .executeTakeFirst();
  return row !== undefined;
}
