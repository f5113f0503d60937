// `webhook list`, `webhook disable`, `webhook enable`: any org's webhook endpoints.
import { MODE_FLAG, modeOption, requiredUuid, uuidArgument } from '../args.js';
import type { AdminCommand, CommandGroup, Input } from './command.js';
import { table } from './table.js';

const WEBHOOK_ARG = ['WEBHOOK_ID'];

function webhookIdOf({ args: [id] }: Input): string {
  return uuidArgument(id, 'WEBHOOK_ID', 'a webhook id');
}

/** `webhook disable` or `webhook enable`: switches an endpoint off or on as PATCH /webhooks/{id} does. */
function switchCommand(active: boolean): AdminCommand {
  return {
    name: active ? 'webhook enable' : 'webhook disable',
    summary: active
      ? 'switch an endpoint on again (its failure streak starts over)'
      : 'switch an endpoint off; its pending deliveries are abandoned (and stay so when it is switched on again)',
    synopsis: 'WEBHOOK_ID',
    flags: {},
    args: WEBHOOK_ARG,
    run: async (input, database) => {
      const [{ setWebhookActive }, { CLI_ACTOR }, { loadConfig }] = await Promise.all([
        import('../../webhooks/operator.js'),
        import('../../audit/service.js'),
        import('../../config.js'),
      ]);
      const db = await database();
      const { webhookLeaseMs } = loadConfig(process.env);
      const change = { active, now: new Date(), actor: CLI_ACTOR, leaseMs: webhookLeaseMs };
      const { webhook, abandoned } = await setWebhookActive(db, webhookIdOf(input), change);
      const dropped = active ? '' : ` ${abandoned} pending deliveries were abandoned.`;
      return {
        human: `Webhook ${webhook.id} is now ${active ? 'on' : 'off'}.${dropped}`,
        json: active ? webhook : { ...webhook, abandoned_deliveries: abandoned },
      };
    },
  };
}

/** The webhook endpoint commands. */
export const webhookCommands: CommandGroup = {
  name: 'webhook',
  summary: "webhooks: an org's endpoints, switched off or on",
  commands: [
    {
      name: 'webhook list',
      summary: "list an org's endpoints of one mode, newest first, with their last delivery",
      synopsis: '--org ORG_ID [--mode live|test]',
      flags: { org: { type: 'string', value: 'ORG_ID', help: 'the org' }, mode: MODE_FLAG },
      run: async ({ values }, database) => {
        const orgId = requiredUuid(values, 'org', 'an org id');
        const mode = modeOption(values);
        const [{ requireOrg }, { listOrgWebhooks }, { orgForMode }] = await Promise.all([
          import('../../orgs/service.js'),
          import('../../webhooks/operator.js'),
          import('../../orgs/modes.js'),
        ]);
        const db = await database();
        await requireOrg(db, orgId);
        const endpoints = await listOrgWebhooks(db, await orgForMode(db, orgId, mode));
        return {
          human: table(
            ['ID', 'STATE', 'LAST DELIVERY', 'URL', 'EVENTS'],
            endpoints.map((endpoint) => [
              endpoint.id,
              endpoint.active ? 'on' : 'off',
              endpoint.last_delivery_at ? `${endpoint.last_delivery_at} ${endpoint.last_delivery_status}` : '-',
              endpoint.url,
              endpoint.events.join(','),
            ]),
            'No webhook endpoints.',
          ),
          json: endpoints,
        };
      },
    },
    switchCommand(false),
    switchCommand(true),
  ],
};
