// `key create`, `key list` and `key revoke`: an org's API keys.
import { DomainError } from '../../errors.js';
import { MODE_FLAG, modeOption, optionalString, requiredUuid } from '../args.js';
import type { CommandGroup } from './command.js';
import { table } from './table.js';

const ORG_FLAG = { type: 'string', value: 'ORG_ID', help: 'the org' } as const;

/** The API key commands. */
export const keyCommands: CommandGroup = {
  name: 'key',
  summary: "API keys: an org's credentials for the API",
  commands: [
    {
      name: 'key create',
      summary: 'issue an API key for an org; the full key is printed this once',
      notes: 'A test key (svc_test_...) sees only test data: its calls go to the simulator and spend the test balance.',
      synopsis: '--org ORG_ID [--mode live|test] [--label LABEL]',
      flags: {
        org: ORG_FLAG,
        mode: MODE_FLAG,
        label: { type: 'string', value: 'LABEL', help: 'what the key is for, shown in lists (at most 100 characters)' },
      },
      run: async ({ values }, database) => {
        const orgId = requiredUuid(values, 'org', 'an org id');
        const mode = modeOption(values);
        const [{ requireOrg }, { createApiKey }, { CLI_ACTOR }] = await Promise.all([
          import('../../orgs/service.js'),
          import('../../orgs/api-keys.js'),
          import('../../audit/service.js'),
        ]);
        const db = await database();
        await requireOrg(db, orgId);
        const label = optionalString(values, 'label') ?? null;
        const { key, prefix } = await createApiKey(db, orgId, { label, mode }, { actor: CLI_ACTOR, address: null });
        return {
          human: `Created ${mode} API key (shown once, store it now):\n${key}`,
          json: { key, prefix, mode, org_id: orgId, label: label?.trim() || null },
        };
      },
    },
    {
      name: 'key list',
      summary: "list an org's live and test keys, masked, newest first, with state, creator and last use",
      synopsis: '--org ORG_ID',
      flags: { org: ORG_FLAG },
      run: async ({ values }, database) => {
        const orgId = requiredUuid(values, 'org', 'an org id');
        const [{ requireOrg }, { listKeys, maskKey }] = await Promise.all([
          import('../../orgs/service.js'),
          import('../../orgs/api-keys.js'),
        ]);
        const db = await database();
        await requireOrg(db, orgId);
        const rows = (await listKeys(db, orgId)).map((key) => ({
          prefix: key.prefix,
          mode: key.mode,
          masked: maskKey(key.prefix, key.mode),
          label: key.label,
          created_at: key.created_at.toISOString(),
          created_by: key.created_by,
          last_used_at: key.last_used_at?.toISOString() ?? null,
          revoked_at: key.revoked_at?.toISOString() ?? null,
        }));
        return {
          human: table(
            ['KEY', 'MODE', 'STATE', 'CREATED', 'BY', 'LAST USED', 'LABEL'],
            rows.map((row) => [
              row.masked,
              row.mode,
              row.revoked_at ? `revoked ${row.revoked_at}` : 'active',
              row.created_at,
              row.created_by ?? '',
              row.last_used_at ?? 'never',
              row.label ?? '',
            ]),
            'No keys.',
          ),
          json: rows,
        };
      },
    },
    {
      name: 'key revoke',
      summary: 'revoke the active key with this prefix; it stops working within 30 seconds',
      notes:
        'PREFIX is the 8 characters after svc_live_ or svc_test_; the masked key key list shows, or the whole key, also names it, and then only a key of that mode is revoked.',
      synopsis: 'PREFIX',
      flags: {},
      args: ['PREFIX'],
      run: async ({ args: [prefix] }, database) => {
        const [{ keyNamedBy, revokeKey }, { CLI_ACTOR }] = await Promise.all([
          import('../../orgs/api-keys.js'),
          import('../../audit/service.js'),
        ]);
        // A key written out with its mode revokes a key of that mode only.
        const { prefix: named, mode } = keyNamedBy(prefix!);
        const kind = mode ? `${mode} key` : 'key';
        if (!(await revokeKey(await database(), named, { actor: CLI_ACTOR, address: null }, { mode }))) {
          throw new DomainError('not_found', `no active ${kind} with prefix ${named}`);
        }
        return {
          human: `Revoked the ${kind} with prefix ${named}; it stops working within 30 seconds.`,
          json: { prefix: named, revoked: true },
        };
      },
    },
  ],
};
