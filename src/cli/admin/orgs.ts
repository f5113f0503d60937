// `org create` and `org list`: the customers' accounts.
import { optionalInteger, optionalString, required, UsageError } from '../args.js';
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
          from_e164: org.default_from_e164,
          created_at: org.created_at.toISOString(),
        }));
        return {
          human: table(
            ['ID', 'NAME', 'PLAN', 'BALANCE (PAISE)', 'CREATED'],
            rows.map((org) => [org.id, org.name, org.plan ?? 'none', String(org.balance_paise), org.created_at]),
            'No orgs.',
          ),
          json: rows,
        };
      },
    },
  ],
};
