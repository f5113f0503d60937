// `agent create` and `agent list`: the voice agents of an org.
import type { createAgent } from '../../orgs/service.js';
import { optionalInteger, optionalString, required, requiredUuid } from '../args.js';
import type { CommandGroup } from './command.js';
import { table } from './table.js';

type AgentRow = Awaited<ReturnType<typeof createAgent>>;

function agentJson(agent: AgentRow) {
  return {
    id: agent.id,
    org_id: agent.org_id,
    name: agent.name,
    language: agent.language,
    max_duration_sec: agent.max_duration_sec,
    from_e164: agent.from_e164,
    rate_paise_per_minute: agent.rate_paise_per_minute,
  };
}

/** The agent commands. */
export const agentCommands: CommandGroup = {
  name: 'agent',
  summary: "agents: the voice agents that conduct an org's calls",
  commands: [
    {
      name: 'agent create',
      summary: 'create an agent in an org',
      synopsis: '--org ORG_ID --name NAME [--language xx-XX] [--max-duration SEC] [--from E164] [--rate PAISE_PER_MIN]',
      flags: {
        org: { type: 'string', value: 'ORG_ID', help: 'the org it belongs to' },
        name: { type: 'string', value: 'NAME', help: "the agent's name" },
        language: { type: 'string', value: 'xx-XX', help: 'the language it speaks (default en-IN)' },
        'max-duration': { type: 'string', value: 'SEC', help: 'longest call in seconds, 15 to 3600 (default 600)' },
        from: { type: 'string', value: 'E164', help: "its caller id (default: the org's)" },
        rate: { type: 'string', value: 'PAISE_PER_MIN', help: 'what a connected minute costs in paise (default 200)' },
      },
      run: async ({ values }, database) => {
        const input = {
          orgId: requiredUuid(values, 'org', 'an org id'),
          name: required(values, 'name'),
          language: optionalString(values, 'language'),
          maxDurationSec: optionalInteger(values, 'max-duration'),
          fromE164: optionalString(values, 'from') ?? null,
          ratePaisePerMinute: optionalInteger(values, 'rate'),
        };
        const { createAgent } = await import('../../orgs/service.js');
        const agent = await createAgent(await database(), input);
        return {
          human: `Created agent ${agent.id} "${agent.name}" (${agent.language}, max ${agent.max_duration_sec} s, ${agent.rate_paise_per_minute} paise/min)`,
          json: agentJson(agent),
        };
      },
    },
    {
      name: 'agent list',
      summary: "list an org's agents, newest first",
      synopsis: '--org ORG_ID',
      flags: { org: { type: 'string', value: 'ORG_ID', help: 'the org whose agents to list' } },
      run: async ({ values }, database) => {
        const orgId = requiredUuid(values, 'org', 'an org id');
        const { listAgents } = await import('../../orgs/service.js');
        const rows = (await listAgents(await database(), orgId)).map((agent) => ({
          ...agentJson(agent),
          created_at: agent.created_at.toISOString(),
        }));
        return {
          human: table(
            ['ID', 'NAME', 'LANGUAGE', 'MAX DURATION', 'RATE', 'FROM', 'CREATED'],
            rows.map((agent) => [
              agent.id,
              agent.name,
              agent.language,
              `${agent.max_duration_sec} s`,
              `${agent.rate_paise_per_minute} paise/min`,
              agent.from_e164 ?? "org's",
              agent.created_at,
            ]),
            'No agents.',
          ),
          json: rows,
        };
      },
    },
  ],
};
