// `org create`, `org list` and `org update`: the customers' accounts.
import { LOW_BALANCE_THRESHOLD_RULE } from '../../orgs/policy.js';
import { optionalInteger, optionalString, required, requiredUuid, UsageError } from '../args.js';
import type { CommandGroup } from './command.js';
import { table } from './table.js';

/** The org commands. */
export const orgCommands: CommandGroup = {
  name: 'org',
  summary: "orgs: the customers' accounts, each with a plan and a credit balance",
  commands: [
    {
      name: 'org create',
      summary: 'create an org with an opening credit balance and a plan',
      synopsis: '--name NAME [--credits PAISE] [--plan ID | --no-plan] [--from E164]',
      flags: {
        name: { type: 'string', value: 'NAME', help: "the org's name" },
        credits: { type: 'string', value: 'PAISE', help: 'opening balance in paise (default 0)' },
        plan: { type: 'string', value: 'ID', help: 'the plan it is on (default starter)' },
        'no-plan': { type: 'boolean', help: 'no plan: the org cannot place calls until it gets one' },
        from: { type: 'string', value: 'E164', help: 'caller id for its agents that have none of their own' },
      },
      run: async ({ values }, database) => {
        if (values.plan !== undefined && values['no-plan']) throw new UsageError('use either --plan or --no-plan');
        const name = required(values, 'name');
        const credits = optionalInteger(values, 'credits');
        const { createOrg } = await import('../../orgs/service.js');
        const org = await createOrg(await database(), {
          name,
          creditsPaise: credits,
          planId: values['no-plan'] ? null : optionalString(values, 'plan'),
          fromE164: optionalString(values, 'from') ?? null,
        });
        return {
          human: `Created org ${org.id} "${org.name}" (plan ${org.plan_id ?? 'none'}, ${org.balance_paise} paise)`,
          json: {
            id: org.id,
            name: org.name,
            plan: org.plan_id,
            credits_paise: org.balance_paise,
            from_e164: org.default_from_e164,
          },
        };
      },
    },
    {
      name: 'org list',
      summary: 'list every org with its plan and balance, newest first',
      synopsis: '',
      flags: {},
      run: async (_input, database) => {
        const { listOrgs } = await import('../../orgs/service.js');
        const rows = (await listOrgs(await database())).map((org) => ({
          id: org.id,
          name: org.name,
          plan: org.plan_id,
          balance_paise: org.balance_paise,
          test_balance_paise: org.test_balance_paise ?? 0,
          low_balance_threshold_paise: org.low_balance_threshold_paise,
          from_e164: org.default_from_e164,
          created_at: org.created_at.toISOString(),
        }));
        return {
          human: table(
            ['ID', 'NAME', 'PLAN', 'BALANCE (PAISE)', 'TEST BALANCE', 'LOW BALANCE AT', 'CREATED'],
            rows.map((org) => [
              org.id,
              org.name,
              org.plan ?? 'none',
              String(org.balance_paise),
              String(org.test_balance_paise),
              String(org.low_balance_threshold_paise),
              org.created_at,
            ]),
            'No orgs.',
          ),
          json: rows,
        };
      },
    },
    {
      name: 'org update',
      summary: "change an org's settings: its low-balance threshold (its test balance follows it)",
      synopsis: '--org ORG_ID --low-balance-threshold PAISE',
      flags: {
        org: { type: 'string', value: 'ORG_ID', help: 'the org' },
        'low-balance-threshold': {
          type: 'string',
          value: 'PAISE',
          help: 'balance.low is sent when the balance falls below this (default 10000; 0 turns it off)',
        },
      },
      run: async ({ values }, database) => {
        const orgId = requiredUuid(values, 'org', 'an org id');
        const threshold = lowBalanceThreshold(values);
        const { setLowBalanceThreshold } = await import('../../orgs/service.js');
        await setLowBalanceThreshold(await database(), orgId, threshold);
        return {
          human: `The low-balance threshold is now ${threshold} paise${threshold === 0 ? ' (balance.low is off)' : ''}, in live and test mode.`,
          json: { id: orgId, low_balance_threshold_paise: threshold },
        };
      },
    },
  ],
};

/** The `--low-balance-threshold` option, required: a whole number of paise from 0; UsageError otherwise. */
function lowBalanceThreshold(values: Record<string, unknown>): number {
  const value = values['low-balance-threshold'];
  if (value === undefined) throw new UsageError('nothing to change: give --low-balance-threshold PAISE');
  if (typeof value !== 'string' || !/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new UsageError(LOW_BALANCE_THRESHOLD_RULE);
  }
  return Number(value);
}
