// The credit rules of a call: the hold taken at placement and the settlement when it ends.
import type { Db } from '../database/connect.js';
import { appendLedgerRow, moveCredits, shiftBalance } from './queries.js';

/** The hold for a call: its maximum duration rounded up to whole minutes, at the per-minute rate. */
export function holdFor(maxDurationSec: number, ratePaisePerMinute: number): number {
  return Math.ceil(maxDurationSec / 60) * ratePaisePerMinute;
}

/** What a call costs: its connected seconds at the rate, rounded up to a paisa, never above its hold. */
export function chargeFor(durationSec: number | null, ratePaisePerMinute: number, holdPaise: number): number {
  if (!durationSec) return 0;
  return Math.min(holdPaise, Math.ceil((durationSec * ratePaisePerMinute) / 60));
}

/** Releases a call's hold and takes its charge (ledger rows `release`, then `charge`). Throws if the charge does not fit, which the released hold rules out. */
export async function settleCall(
  trx: Db,
  settlement: { orgId: string; callId: string; holdPaise: number; chargePaise: number },
): Promise<void> {
  const { orgId, callId } = settlement;
  if (settlement.holdPaise > 0) {
    await moveCredits(trx, { orgId, amountPaise: settlement.holdPaise, kind: 'release', callId });
  }
  if (settlement.chargePaise > 0) {
    const balance = await moveCredits(trx, { orgId, amountPaise: -settlement.chargePaise, kind: 'charge', callId });
    if (balance === null) throw new Error(`charge of call ${callId} exceeds the balance after its hold was released`);
  }
}

/**
 * Reserves a placement's hold on the org's balance, without a ledger row yet: a provider that refuses
 * the call leaves no trace in the ledger (returnHold), one that accepts it gets its `hold` row
 * (confirmHold). False, changing nothing, when the hold does not fit.
 */
export async function reserveHold(trx: Db, hold: { orgId: string; paise: number }): Promise<boolean> {
  if (hold.paise === 0) return true;
  return shiftBalance(trx, hold.orgId, -hold.paise);
}

/** Records a reserved hold in the ledger once its call exists (the balance already reflects it). */
export async function confirmHold(trx: Db, hold: { orgId: string; callId: string; paise: number }): Promise<void> {
  if (hold.paise === 0) return;
  await appendLedgerRow(trx, { orgId: hold.orgId, amountPaise: -hold.paise, kind: 'hold', callId: hold.callId });
}

/** Gives a reserved hold back to the balance when its placement comes to nothing. */
export async function returnHold(trx: Db, hold: { orgId: string; paise: number }): Promise<void> {
  if (hold.paise === 0) return;
  if (!(await shiftBalance(trx, hold.orgId, hold.paise))) throw new Error(`org ${hold.orgId} vanished`);
}
