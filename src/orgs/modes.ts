// Live and test mode. Each live org has a test twin (an `orgs` row naming it in `live_org_id`, made by
// the database as the org is made): test keys belong to the twin, so everything scoped by org is kept
// apart by mode. Members, agents and the plan are the live org's and serve both modes.
import type { Db } from '../database/connect.js';
import { recordAudit, type AuditEntry } from '../audit/service.js';
import { DomainError } from '../errors.js';
import { announceLowBalance } from './credits.js';
import { findOrg, findTestTwinId, resetTestBalance } from './queries.js';

/** The mode a key, a request or a dashboard view works in. */
export type Mode = 'live' | 'test';

/** The modes, live first. */
export const MODES: readonly Mode[] = ['live', 'test'];

/** The balance, in paise, a test twin opens with and a reset returns to unless told otherwise. */
export const OPENING_TEST_BALANCE_PAISE = 1_000_000;

/** Whether `mode` is live, as the `livemode` field says it. */
export function isLive(mode: Mode): boolean {
  return mode === 'live';
}

/** The mode named by `livemode`. */
export function modeOf(livemode: boolean): Mode {
  return livemode ? 'live' : 'test';
}

/** The org holding the live org `liveOrgId`'s data in `mode`: itself in live mode, its test twin in test mode. */
export async function orgForMode(db: Db, liveOrgId: string, mode: Mode): Promise<string> {
  if (isLive(mode)) return liveOrgId;
  const twin = await findTestTwinId(db, liveOrgId);
  if (!twin) throw new Error(`org ${liveOrgId} has no test twin`);
  return twin;
}

/**
 * The live org that the org `orgId` (a live org or a test twin) belongs to, and whether `orgId` is the
 * live one: whose audit log a change to its data goes to, and in which mode.
 */
export async function accountOf(db: Db, orgId: string): Promise<{ accountOrgId: string; livemode: boolean }> {
  const org = await findOrg(db, orgId);
  if (!org) throw new Error(`org ${orgId} does not exist`);
  return { accountOrgId: org.live_org_id ?? org.id, livemode: org.live_org_id === null };
}

/**
 * Sets the live org's test balance to `paise` (by default the opening balance) in one transaction,
 * with a `reset` ledger row and `audit`'s entry when given (and balance.low, in test mode, when it
 * takes the balance below the threshold); returns the new balance. Live balances are never reset.
 */
export async function resetTestCredits(
  db: Db,
  liveOrgId: string,
  paise: number = OPENING_TEST_BALANCE_PAISE,
  audit?: AuditEntry,
): Promise<number> {
  if (!Number.isSafeInteger(paise) || paise < 0) {
    throw new DomainError('invalid_request', '--paise must be a whole number of at least 0', { param: 'paise' });
  }
  return db.transaction().execute(async (trx) => {
    const twinId = await orgForMode(trx, liveOrgId, 'test');
    const move = await resetTestBalance(trx, twinId, paise);
    if (move === null) throw new Error(`org ${liveOrgId} has no test twin`);
    await announceLowBalance(trx, twinId, move);
    if (audit) await recordAudit(trx, audit);
    return move.balancePaise;
  });
}
