// `credits add` and `credits reset`: top up an org's live or test balance, or reset its test balance.
import { MODE_FLAG, modeOption, optionalInteger, requiredInteger, requiredUuid, UsageError } from '../args.js';
import type { CommandGroup } from './command.js';

/** The credit commands. */
export const creditCommands: CommandGroup = {
  name: 'credits',
  summary: "credits: an org's balance in paise, which pays for its calls",
  commands: [
    {
      name: 'credits add',
      summary: "add paise to an org's live or test balance (a top-up in its ledger)",
      synopsis: '--org ORG_ID --paise N [--mode live|test]',
      flags: {
        org: { type: 'string', value: 'ORG_ID', help: 'the org' },
        paise: { type: 'string', value: 'N', help: 'how many paise to add, a positive whole number' },
        mode: MODE_FLAG,
      },
      run: async ({ values }, database) => {
        const orgId = requiredUuid(values, 'org', 'an org id');
        const paise = requiredInteger(values, 'paise');
        const mode = modeOption(values);
        const { addCredits } = await import('../../orgs/service.js');
        const balance = await addCredits(await database(), orgId, paise, mode);
        return {
          human: `Added ${paise} paise to the ${mode} balance; it is now ${balance} paise.`,
          json: { org_id: orgId, mode, added_paise: paise, balance_paise: balance },
        };
      },
    },
    {
      name: 'credits reset',
      summary: "set an org's test balance (never its live one) to N paise, by default the opening test balance",
      synopsis: '--org ORG_ID --mode test [--paise N]',
      flags: {
        org: { type: 'string', value: 'ORG_ID', help: 'the org' },
        mode: { ...MODE_FLAG, help: 'must be test: live balances are only ever topped up' },
        paise: { type: 'string', value: 'N', help: 'the new test balance, a whole number of at least 0' },
      },
      run: async ({ values }, database) => {
        const orgId = requiredUuid(values, 'org', 'an org id');
        if (values.mode !== 'test') {
          throw new UsageError('--mode test is required: only a test balance can be reset');
        }
        const paise = optionalInteger(values, 'paise');
        const [{ requireOrg }, { resetTestCredits }] = await Promise.all([
          import('../../orgs/service.js'),
          import('../../orgs/modes.js'),
        ]);
        const db = await database();
        await requireOrg(db, orgId);
        const balance = await resetTestCredits(db, orgId, paise);
        return {
          human: `The test balance is now ${balance} paise.`,
          json: { org_id: orgId, mode: 'test', balance_paise: balance },
        };
      },
    },
  ],
};
