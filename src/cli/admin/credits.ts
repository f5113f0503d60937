// `credits add`: top up an org's balance.
import { requiredInteger, requiredUuid } from '../args.js';
import type { CommandGroup } from './command.js';

/** The credit commands. */
export const creditCommands: CommandGroup = {
  name: 'credits',
  summary: "credits: an org's balance in paise, which pays for its calls",
  commands: [
    {
      name: 'credits add',
      summary: "add paise to an org's balance (a top-up in its ledger)",
      synopsis: '--org ORG_ID --paise N',
      flags: {
        org: { type: 'string', value: 'ORG_ID', help: 'the org' },
        paise: { type: 'string', value: 'N', help: 'how many paise to add, a positive whole number' },
      },
      run: async ({ values }, database) => {
        const orgId = requiredUuid(values, 'org', 'an org id');
        const paise = requiredInteger(values, 'paise');
        const { addCredits } = await import('../../orgs/service.js');
        const balance = await addCredits(await database(), orgId, paise);
        return {
          human: `Added ${paise} paise; balance is now ${balance} paise.`,
          json: { org_id: orgId, added_paise: paise, balance_paise: balance },
        };
      },
    },
  ],
};
