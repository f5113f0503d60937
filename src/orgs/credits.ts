// The credit rules of a call: the hold taken at placement and the settlement when it ends. Every
// movement that takes a balance below its org's low-balance threshold emits balance.low in the
// movement's own transaction, so the notice commits exactly when the movement does.
import { sql, type QueryCreator } from 'kysely';
import type { Db } from '../database/connect.js';
import type { Database } from '../../db/schema.js';
import { emitEvent } from '../webhooks/outbox.js';
import { giveHoldBack, settleHolds, takeHold, type BalanceMove } from './queries.js';

/** The hold for a call: its maximum duration rounded up to whole minutes, at the per-minute rate. */
export function holdFor(maxDurationSec: number, ratePaisePerMinute: number): number {
  return Math.ceil(maxDurationSec / 60) * ratePaisePerMinute;
}

/** What a call costs: its connected seconds at the rate, rounded up to a paisa, never above its hold. */
export function chargeFor(durationSec: number | null, ratePaisePerMinute: number, holdPaise: number): number {
  if (!durationSec) return 0;
  return Math.min(holdPaise, Math.ceil((durationSec * ratePaisePerMinute) / 60));
}

/** Emits balance.low for `orgId` in `trx` when `move` took its balance below the threshold. */
export async function announceLowBalance(trx: Db, orgId: string, move: BalanceMove): Promise<void> {
  if (!move.fellBelow) return;
  await emitEvent(
    trx,
    orgId,
    'balance.low',
    { balance_paise: move.balancePaise, threshold_paise: move.thresholdPaise, held_paise: move.heldPaise },
    null,
  );
}

/** What ending a call moves on its org's balance: its hold given back, its charge taken. */
export interface CallSettlement {
  callId: string;
  holdPaise: number;
  chargePaise: number;
}

/**
 * Gives ended calls' holds back and takes their charges in one movement of the org's balance (ledger
 * rows `release`, then `charge`, per call). Throws if a charge exceeds its hold, which chargeFor rules out.
 */
export async function settleCalls(trx: Db, orgId: string, calls: readonly CallSettlement[]): Promise<void> {
  const moving = calls.filter((call) => call.holdPaise !== 0 || call.chargePaise !== 0);
  if (moving.length === 0) return;
  const move = await settleHolds(trx, orgId, moving);
  if (!move) throw new Error(`the charges of calls ${moving.map((call) => call.callId).join(', ')} exceed the balance`);
  await announceLowBalance(trx, orgId, move);
}

/**
 * Reserves a placement's hold on the org's balance, without a ledger row yet: a provider that refuses
 * the call leaves no trace in the ledger (returnHold), one that accepts it gets its `hold` row with its
 * call (db/functions/record_placed_calls.sql). False, changing nothing, when the hold does not fit. A
 * hold that takes the balance below the threshold emits balance.low.
 */
export async function reserveHold(trx: Db, hold: { orgId: string; paise: number }): Promise<boolean> {
  if (hold.paise === 0) return true;
  const move = await takeHold(trx, hold.orgId, hold.paise);
  if (!move) return false;
  await announceLowBalance(trx, hold.orgId, move);
  return true;
}

/**
 * The UPDATE that takes a hold of `paise` from the org's balance only when it fits and leaves the
 * balance where no balance.low is owed (at or above its threshold, or already below it before), for a
 * statement that also writes what the hold is for (a WITH query); it returns the org's id when it did.
 * Any other hold goes through reserveHold in a transaction, which emits the notice with it.
 */
export function takeQuietHold(qc: QueryCreator<Database>, orgId: string, paise: number) {
  return qc
    .updateTable('orgs')
    .set({ balance_paise: sql`balance_paise - ${paise}`, held_paise: sql`held_paise + ${paise}` })
    .where('id', '=', orgId)
    .where(sql<boolean>`balance_paise - ${paise} >= 0`)
    .where(
      sql<boolean>`NOT (low_balance_threshold_paise > 0 AND balance_paise >= low_balance_threshold_paise
        AND balance_paise - ${paise} < low_balance_threshold_paise)`,
    )
    .returning('orgs.id');
}

/**
 * Reserves `count` holds of `paise` each in one movement (a campaign's batch, under the org's row lock
 * its caller holds): the balance and the holds in flight move as `count` reserveHold calls would, and
 * balance.low is emitted when the movement crosses the threshold. False, changing nothing, when they
 * do not all fit.
 */
export async function reserveHolds(trx: Db, holds: { orgId: string; paise: number; count: number }): Promise<boolean> {
  return reserveHold(trx, { orgId: holds.orgId, paise: holds.paise * holds.count });
}

/** Gives a reserved hold back to the balance when its placement comes to nothing. */
export async function returnHold(trx: Db, hold: { orgId: string; paise: number }): Promise<void> {
  if (hold.paise === 0) return;
  const move = await giveHoldBack(trx, hold.orgId, hold.paise);
  if (!move) throw new Error(`org ${hold.orgId} vanished`);
  await announceLowBalance(trx, hold.orgId, move);
}
