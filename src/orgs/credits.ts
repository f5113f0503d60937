// The credit rules of a call: the hold taken at placement and the settlement when it ends.
import type { Db } from '../database/connect.js';
import { moveCredits } from './queries.js';

/** The hold for a call: its maximum duration rounded up to whole minutes, at the per-minute rate. */
export function holdFor(maxDurationSec: number, ratePaisePerMinute: number): number {
  return Math.ceil(maxDurationSec / 60) * ratePaisePerMinute;
}

/** What a call costs: its connected seconds at the rate, rounded up to a paisa, never above its hold. */
export function chargeFor(durationSec: number | null, ratePaisePerMinute: number, holdPaise: number): number {
  if (!durationSec) return 0;
  return Math.min(holdPaise, Math.ceil((durationSec * ratePaisePerMinute) / 60));
}

/** Takes a call's hold from the org's balance (a `hold` ledger row); false, changing nothing, when it does not fit. */
export async function takeHold(trx: Db, hold: { orgId: string; callId: string; paise: number }): Promise<boolean> {
  if (hold.paise === 0) return true;
  const balance = await moveCredits(trx, {
    orgId: hold.orgId,
    amountPaise: -hold.paise,
    kind: 'hold',
    callId: hold.callId,
  });
  return balance !== null;
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
