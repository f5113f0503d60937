// The credit rules of a call: the hold taken at placement and the settlement when it ends. Every
// movement that takes a balance below its org's low-balance threshold emits balance.low in the
// movement's own transaction, so the notice commits exactly when the movement does.
import type { Db } from '../database/connect.js';
import { emitEvent } from '../webhooks/outbox.js';
import { appendLedgerRow, giveHoldBack, settleHold, takeHold, type BalanceMove } from './queries.js';

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

/**
 * Gives a call's hold back and takes its charge in one movement (ledger rows `release`, then `charge`).
 * Throws if the charge exceeds the hold, which chargeFor rules out.
 */
export async function settleCall(
  trx: Db,
  settlement: { orgId: string; callId: string; holdPaise: number; chargePaise: number },
): Promise<void> {
  if (settlement.holdPaise === 0 && settlement.chargePaise === 0) return;
  const move = await settleHold(trx, settlement);
  if (!move) throw new Error(`charge of call ${settlement.callId} exceeds the balance after its hold was released`);
  await announceLowBalance(trx, settlement.orgId, move);
}

/**
 * Reserves a placement's hold on the org's balance, without a ledger row yet: a provider that refuses
 * the call leaves no trace in the ledger (returnHold), one that accepts it gets its `hold` row
 * (confirmHold). False, changing nothing, when the hold does not fit. A hold that takes the balance
 * below the threshold emits balance.low.
 */
export async function reserveHold(trx: Db, hold: { orgId: string; paise: number }): Promise<boolean> {
  if (hold.paise === 0) return true;
  const move = await takeHold(trx, hold.orgId, hold.paise);
  if (!move) return false;
  await announceLowBalance(trx, hold.orgId, move);
  return true;
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

/** Records a reserved hold in the ledger once its call exists (the balance already reflects it). */
export async function confirmHold(trx: Db, hold: { orgId: string; callId: string; paise: number }): Promise<void> {
  if (hold.paise === 0) return;
  await appendLedgerRow(trx, { orgId: hold.orgId, amountPaise: -hold.paise, kind: 'hold', callId: hold.callId });
}

/** Gives a reserved hold back to the balance when its placement comes to nothing. */
export async function returnHold(trx: Db, hold: { orgId: string; paise: number }): Promise<void> {
  if (hold.paise === 0) return;
  const move = await giveHoldBack(trx, hold.orgId, hold.paise);
  if (!move) throw new Error(`org ${hold.orgId} vanished`);
  await announceLowBalance(trx, hold.orgId, move);
}
