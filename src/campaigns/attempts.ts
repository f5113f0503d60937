// A campaign contact's attempt follows its call: once the call has ended the contact takes its ending,
// or is due again for a retry. The dispatcher settles every ended attempt of a campaign on each pass;
// a batch of call changes settles the attempts of the campaign calls it ends in the same transaction,
// so their contacts stop counting against the campaign's concurrency as soon as their calls end.
import type { Db } from '../database/connect.js';
import { settleAttemptsOfCalls } from './dispatch/queries.js';

/** Settles, in `trx`, the attempts of `callIds`: campaign calls that ended in `trx`. */
export async function settleAttemptsOfEndedCalls(trx: Db, callIds: readonly string[]): Promise<void> {
  await settleAttemptsOfCalls(trx, callIds);
}
