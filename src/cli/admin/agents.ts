// `agent create`, `agent update` and `agent list`: the voice agents of an org and their providers.
import type { createAgent } from '../../orgs/service.js';
import { agentProviderSettings, providerSettingFlags } from '../../calls/provider/catalog.js';
import { optionalInteger, optionalString, required, requiredUuid } from '../args.js';
import type { CommandGroup } from './command.js';
import { table } from './table.js';

/** The flags of every provider's agent settings (--assistant-id, ...). */
const SETTING_FLAGS = Object.fromEntries(
  providerSettingFlags().map(({ provider, flag, description }) => [
    flag,
    { type: 'string' as const, value: 'ID', help: `${description} (with --provider ${provider})` },
  ]),
);

/** The provider flag values given, by flag name. */
function settingValues(values: Record<string, unknown>): Record<string, string | undefined> {
  return Object.fromEntries(Object.keys(SETTING_FLAGS).map((flag) => [flag, optionalString(values, flag)]));
}

/** The settings part of a synopsis: ` [--assistant-id ID] ...`, one per flag. */
const SETTINGS_SYNOPSIS = Object.keys(SETTING_FLAGS)
  .map((flag) => ` [--${flag} ID]`)
  .join('');

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
    // The provider's name only: its settings are ids, its credentials live in the configuration.
    provider: agent.provider,
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
      synopsis: `--org ORG_ID --name NAME [--language xx-XX] [--max-duration SEC] [--from E164] [--rate PAISE_PER_MIN] [--provider NAME]${SETTINGS_SYNOPSIS}`,
      flags: {
        org: { type: 'string', value: 'ORG_ID', help: 'the org it belongs to' },
        name: { type: 'string', value: 'NAME', help: "the agent's name" },
        language: { type: 'string', value: 'xx-XX', help: 'the language it speaks (default en-IN)' },
        'max-duration': { type: 'string', value: 'SEC', help: 'longest call in seconds, 15 to 3600 (default 600)' },
        from: { type: 'string', value: 'E164', help: "its caller id (default: the org's)" },
        rate: { type: 'string', value: 'PAISE_PER_MIN', help: 'what a connected minute costs in paise (default 200)' },
        provider: {
          type: 'string',
          value: 'NAME',
          help: 'the voice provider its calls go through (default simulator)',
        },
        ...SETTING_FLAGS,
      },
      run: async ({ values }, database) => {
        const provider = optionalString(values, 'provider') ?? 'simulator';
        const providerSettings = agentProviderSettings(provider, settingValues(values));
        const input = {
          orgId: requiredUuid(values, 'org', 'an org id'),
          name: required(values, 'name'),
          language: optionalString(values, 'language'),
          maxDurationSec: optionalInteger(values, 'max-duration'),
          fromE164: optionalString(values, 'from') ?? null,
          ratePaisePerMinute: optionalInteger(values, 'rate'),
          provider,
          providerSettings,
        };
        const { createAgent } = await import('../../orgs/service.js');
        const agent = await createAgent(await database(), input);
        return {
          human: `Created agent ${agent.id} "${agent.name}" (${agent.language}, max ${agent.max_duration_sec} s, ${agent.rate_paise_per_minute} paise/min, ${agent.provider})`,
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
            ['ID', 'NAME', 'LANGUAGE', 'MAX DURATION', 'RATE', 'FROM', 'PROVIDER', 'CREATED'],
            rows.map((agent) => [
              agent.id,
              agent.name,
              agent.language,
              `${agent.max_duration_sec} s`,
              `${agent.rate_paise_per_minute} paise/min`,
              agent.from_e164 ?? "org's",
              agent.provider,
              agent.created_at,
            ]),
            'No agents.',
          ),
          json: rows,
        };
      },
    },
    {
      name: 'agent update',
      summary: 'move an agent to a voice provider, with its settings for it',
      synopsis: `--org ORG_ID --agent AGENT_ID --provider NAME${SETTINGS_SYNOPSIS}`,
      flags: {
        org: { type: 'string', value: 'ORG_ID', help: 'the org it belongs to' },
        agent: { type: 'string', value: 'AGENT_ID', help: 'the agent to change' },
        provider: { type: 'string', value: 'NAME', help: 'the voice provider its calls go through from now on' },
        ...SETTING_FLAGS,
      },
      run: async ({ values }, database) => {
        const orgId = requiredUuid(values, 'org', 'an org id');
        const agentId = requiredUuid(values, 'agent', 'an agent id');
        const provider = required(values, 'provider');
        const providerSettings = agentProviderSettings(provider, settingValues(values));
        const { setAgentProvider } = await import('../../orgs/service.js');
        const agent = await setAgentProvider(await database(), { orgId, agentId, provider, providerSettings });
        return {
          human: `Agent ${agent.id} "${agent.name}" now calls through ${agent.provider}`,
          json: agentJson(agent),
        };
      },
    },
  ],
};
