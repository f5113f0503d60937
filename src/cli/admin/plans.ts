// `plan create`, `plan list`, `plan update` and `plan set`: the plans orgs are on and their rate limits.
import type { createPlan } from '../../orgs/service.js';
import { DEFAULT_RATE_LIMIT_PER_MINUTE } from '../../orgs/policy.js';
import {
  optionalBoolean,
  optionalInteger,
  optionalString,
  required,
  requiredInteger,
  requiredUuid,
  UsageError,
} from '../args.js';
import type { CommandGroup } from './command.js';
import { table } from './table.js';

type PlanRow = Awaited<ReturnType<typeof createPlan>>;

function planJson(plan: PlanRow) {
  return {
    id: plan.id,
    name: plan.name,
    rate_limit_per_minute: plan.rate_limit_per_minute,
    max_concurrent_calls: plan.max_concurrent_calls,
    active: plan.active,
  };
}

/** A plan's concurrency cap for people: the number, or "none". */
function capText(cap: number | null): string {
  return cap === null ? 'none' : String(cap);
}

function describePlan(plan: PlanRow): string {
  const cap =
    plan.max_concurrent_calls === null ? 'no cap on calls in progress' : `${plan.max_concurrent_calls} calls at once`;
  return `plan ${plan.id} "${plan.name}" (${plan.rate_limit_per_minute} requests per minute, ${cap}, ${plan.active ? 'on' : 'switched off'})`;
}

/** The largest cap a plan stores (a PostgreSQL integer). */
const MAX_CAP = 2_147_483_647;

/**
 * The --max-concurrent-calls option: undefined when absent, a whole number from 1, or (with `none`
 * allowed) null for no cap. Throws UsageError otherwise.
 */
function concurrencyCapOption(values: Record<string, unknown>, noneAllowed: boolean): number | null | undefined {
  const value = values['max-concurrent-calls'];
  if (value === undefined) return undefined;
  if (noneAllowed && value === 'none') return null;
  if (typeof value !== 'string' || !/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_CAP) {
    throw new UsageError(
      `--max-concurrent-calls must be a whole number of calls from 1 to ${MAX_CAP}${noneAllowed ? ', or none for no cap' : ''}`,
    );
  }
  return Number(value);
}

/** The plan commands. */
export const planCommands: CommandGroup = {
  name: 'plan',
  summary:
    "plans: an org's API rate limit and cap on calls in progress; an org without an active plan cannot place calls",
  commands: [
    {
      name: 'plan create',
      summary: 'create a plan, switched on',
      synopsis: '--id ID --name NAME --rate-limit N [--max-concurrent-calls N]',
      flags: {
        id: { type: 'string', value: 'ID', help: 'its id: lowercase letters, digits, - or _, up to 32' },
        name: { type: 'string', value: 'NAME', help: 'its name for people' },
        'rate-limit': { type: 'string', value: 'N', help: 'API requests per minute for each org on it' },
        'max-concurrent-calls': {
          type: 'string',
          value: 'N',
          help: 'calls each org on it may have in progress at once, per mode (default: no cap)',
        },
      },
      run: async ({ values }, database) => {
        const input = {
          id: required(values, 'id'),
          name: required(values, 'name'),
          rateLimitPerMinute: requiredInteger(values, 'rate-limit'),
          maxConcurrentCalls: concurrencyCapOption(values, false) ?? null,
        };
        const [{ createPlan }, { CLI_ACTOR, recordAudit }] = await Promise.all([
          import('../../orgs/service.js'),
          import('../../audit/service.js'),
        ]);
        const db = await database();
        const plan = await db.transaction().execute(async (trx) => {
          const created = await createPlan(trx, input);
          await recordAudit(trx, { orgId: null, actor: CLI_ACTOR, action: 'plan.created', target: created.id });
          return created;
        });
        return { human: `Created ${describePlan(plan)}.`, json: planJson(plan) };
      },
    },
    {
      name: 'plan list',
      summary: 'list every plan with its rate limit, concurrency cap and how many orgs are on it',
      synopsis: '',
      flags: {},
      run: async (_input, database) => {
        const { listPlans } = await import('../../orgs/service.js');
        const rows = (await listPlans(await database())).map((plan) => ({ ...planJson(plan), orgs: plan.orgs }));
        return {
          human: table(
            ['ID', 'NAME', 'REQUESTS/MIN', 'MAX CALLS', 'ACTIVE', 'ORGS'],
            rows.map((plan) => [
              plan.id,
              plan.name,
              String(plan.rate_limit_per_minute),
              capText(plan.max_concurrent_calls),
              plan.active ? 'yes' : 'no',
              String(plan.orgs),
            ]),
            'No plans.',
          ),
          json: rows,
        };
      },
    },
    {
      name: 'plan update',
      summary: "change a plan's name, rate limit or concurrency cap, or switch it off or on",
      synopsis: '--id ID [--name NAME] [--rate-limit N] [--max-concurrent-calls N|none] [--active true|false]',
      flags: {
        id: { type: 'string', value: 'ID', help: 'the plan to change' },
        name: { type: 'string', value: 'NAME', help: 'its new name' },
        'rate-limit': { type: 'string', value: 'N', help: 'its new limit in API requests per minute' },
        'max-concurrent-calls': {
          type: 'string',
          value: 'N|none',
          help: 'its new cap on calls in progress per org and mode, or none to remove it (calls already in progress go on)',
        },
        active: {
          type: 'string',
          value: 'true|false',
          help: `false switches it off: its orgs cannot place calls and get ${DEFAULT_RATE_LIMIT_PER_MINUTE} requests per minute`,
        },
      },
      run: async ({ values }, database) => {
        const id = required(values, 'id');
        const changes = {
          name: optionalString(values, 'name'),
          rateLimitPerMinute: optionalInteger(values, 'rate-limit'),
          active: optionalBoolean(values, 'active'),
          maxConcurrentCalls: concurrencyCapOption(values, true),
        };
        if (Object.values(changes).every((value) => value === undefined)) {
          throw new UsageError('plan update needs --name, --rate-limit, --max-concurrent-calls or --active');
        }
        const [{ updatePlan }, { CLI_ACTOR, recordPlanAudit }] = await Promise.all([
          import('../../orgs/service.js'),
          import('../../audit/service.js'),
        ]);
        const db = await database();
        const plan = await db.transaction().execute(async (trx) => {
          const updated = await updatePlan(trx, id, changes);
          await recordPlanAudit(trx, updated.id, { actor: CLI_ACTOR, action: 'plan.updated', target: updated.id });
          return updated;
        });
        return {
          human: `Updated ${describePlan(plan)}; orgs on it see a new rate limit or state within API_KEY_CACHE_TTL_MS, a new cap on calls at their next placement.`,
          json: planJson(plan),
        };
      },
    },
    {
      name: 'plan set',
      summary: 'put an org on a plan, or take it off its plan with --plan none',
      synopsis: '--org ORG_ID --plan ID|none',
      flags: {
        org: { type: 'string', value: 'ORG_ID', help: 'the org' },
        plan: { type: 'string', value: 'ID|none', help: 'an active plan, or none (the org cannot place calls)' },
      },
      run: async ({ values }, database) => {
        const orgId = requiredUuid(values, 'org', 'an org id');
        const plan = required(values, 'plan');
        const [{ setPlan }, { CLI_ACTOR, recordAudit }] = await Promise.all([
          import('../../orgs/service.js'),
          import('../../audit/service.js'),
        ]);
        const db = await database();
        await db.transaction().execute(async (trx) => {
          await setPlan(trx, orgId, plan === 'none' ? null : plan);
          await recordAudit(trx, { orgId, actor: CLI_ACTOR, action: 'plan.set', target: plan });
        });
        return {
          human: `Org ${orgId} plan set to ${plan}.`,
          json: { org_id: orgId, plan: plan === 'none' ? null : plan },
        };
      },
    },
  ],
};
