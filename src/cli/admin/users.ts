// `user invite`, `user list`, `user role`, `user remove` and `user reset`: the people who sign in to an
// org's dashboard.
import { required, requiredUuid, UsageError } from '../args.js';
import type { CommandGroup, Input } from './command.js';
import { table } from './table.js';

const ORG_FLAG = { type: 'string', value: 'ORG_ID', help: 'the org' } as const;
const MEMBER_ORG_FLAG = {
  type: 'string',
  value: 'ORG_ID',
  help: 'the org of the membership, needed when the email is a member of several orgs',
} as const;
const LINK_NOTE = 'The link works once, for 72 hours; whoever opens it sets the password, so pass it on privately.';

/** The --org of a member command, checked to be an org id, or undefined when absent. */
function optionalOrg(values: Record<string, unknown>): string | undefined {
  return values.org === undefined ? undefined : requiredUuid(values, 'org', 'an org id');
}

const ROLE_FLAG = {
  type: 'string',
  value: 'admin|viewer',
  help: 'admin changes everything; viewer reads only',
} as const;

/** The --role of a member command; throws UsageError unless it is admin or viewer. */
function requiredRole(values: Record<string, unknown>): 'admin' | 'viewer' {
  const role = required(values, 'role');
  if (role !== 'admin' && role !== 'viewer') throw new UsageError(`--role must be admin or viewer, got "${role}"`);
  return role;
}

/** A warning line when a change left the org with no admin who can sign in, or nothing. */
function noAdminNote(adminsLeft: number, orgId: string): string {
  return adminsLeft > 0
    ? ''
    : `\nNote: org ${orgId} now has no admin who can sign in to the dashboard; invite one with ` +
        `"admin user invite --org ${orgId} --email EMAIL --role admin".`;
}

const BASE_URL_FLAG = {
  type: 'string',
  value: 'URL',
  help: 'the address people open the dashboard at (default PUBLIC_BASE_URL)',
} as const;

/**
 * Where one-time links start: --base-url, else PUBLIC_BASE_URL. Without either, the address is only a
 * guess from HOST and PORT, so a warning says so. Throws UsageError for a --base-url that is no URL.
 */
async function linkBase(values: Input['values']): Promise<{ base: string; warnings: string[] }> {
  const { loadConfig, httpUrl, ConfigError } = await import('../../config.js');
  const flag = values['base-url'] as string | undefined;
  if (flag !== undefined) {
    try {
      return { base: httpUrl('--base-url', flag), warnings: [] };
    } catch (error) {
      if (error instanceof ConfigError) throw new UsageError(error.message);
      throw error;
    }
  }
  const config = loadConfig();
  const warnings = config.publicBaseUrlSet
    ? []
    : [
        `PUBLIC_BASE_URL is not set, so the link assumes the service is at ${config.publicBaseUrl}; ` +
          'pass --base-url with the address people open the dashboard at if it is not.',
      ];
  return { base: config.publicBaseUrl, warnings };
}

/** The dashboard user commands. */
export const userCommands: CommandGroup = {
  name: 'user',
  summary: "dashboard users: the people who sign in to an org's dashboard",
  commands: [
    {
      name: 'user invite',
      summary: 'add a dashboard user to an org and print their one-time link to set a password',
      notes: LINK_NOTE,
      synopsis: '--org ORG_ID --email EMAIL --role admin|viewer [--base-url URL]',
      flags: {
        org: ORG_FLAG,
        email: { type: 'string', value: 'EMAIL', help: 'their email address, used to sign in' },
        role: ROLE_FLAG,
        'base-url': BASE_URL_FLAG,
      },
      run: async ({ values }, database) => {
        const orgId = requiredUuid(values, 'org', 'an org id');
        const email = required(values, 'email');
        const role = requiredRole(values);
        const { base, warnings } = await linkBase(values);
        const [{ requireOrg }, { inviteMember, linkPath }, { CLI_ACTOR }] = await Promise.all([
          import('../../orgs/service.js'),
          import('../../members/service.js'),
          import('../../audit/service.js'),
        ]);
        const db = await database();
        await requireOrg(db, orgId);
        const { user, token } = await inviteMember(db, { orgId, email, role }, { actor: CLI_ACTOR, address: null });
        const link = `${base}${linkPath(token)}`;
        return {
          warnings,
          human: `Invited ${user.email} (${user.role}). One-time link (72 hours):\n${link}`,
          json: { id: user.id, org_id: orgId, email: user.email, role: user.role, link },
        };
      },
    },
    {
      name: 'user list',
      summary: "list an org's dashboard users, oldest first",
      synopsis: '--org ORG_ID',
      flags: { org: ORG_FLAG },
      run: async ({ values }, database) => {
        const orgId = requiredUuid(values, 'org', 'an org id');
        const [{ requireOrg }, { listMembers }] = await Promise.all([
          import('../../orgs/service.js'),
          import('../../members/service.js'),
        ]);
        const db = await database();
        await requireOrg(db, orgId);
        const rows = (await listMembers(db, orgId)).map((user) => ({
          id: user.id,
          email: user.email,
          role: user.role,
          password_set: user.password_hash !== null,
          created_at: user.created_at.toISOString(),
        }));
        return {
          human: table(
            ['EMAIL', 'ROLE', 'PASSWORD', 'CREATED'],
            rows.map((row) => [row.email, row.role, row.password_set ? 'set' : 'invited', row.created_at]),
            'No dashboard users.',
          ),
          json: rows,
        };
      },
    },
    {
      name: 'user role',
      summary: 'give a dashboard user another role; it applies from their next page',
      synopsis: 'EMAIL --role admin|viewer [--org ORG_ID]',
      flags: { org: MEMBER_ORG_FLAG, role: ROLE_FLAG },
      args: ['EMAIL'],
      run: async ({ args: [email], values }, database) => {
        const orgId = optionalOrg(values);
        const role = requiredRole(values);
        const [{ changeMemberRole, requireMemberByEmail }, { CLI_ACTOR }] = await Promise.all([
          import('../../members/service.js'),
          import('../../audit/service.js'),
        ]);
        const db = await database();
        const user = await requireMemberByEmail(db, email!, orgId);
        const { changed, adminsLeft } = await changeMemberRole(db, user, role, {
          by: { actor: CLI_ACTOR, address: null },
        });
        return {
          human: `${user.email} ${changed ? 'is now' : 'was already'} ${role === 'admin' ? 'an admin' : 'a viewer'}.${noAdminNote(adminsLeft, user.org_id)}`,
          json: { email: user.email, role, changed, admins_left: adminsLeft },
        };
      },
    },
    {
      name: 'user remove',
      summary: 'remove a dashboard user; their sessions end at once',
      synopsis: 'EMAIL [--org ORG_ID]',
      flags: { org: MEMBER_ORG_FLAG },
      args: ['EMAIL'],
      run: async ({ args: [email], values }, database) => {
        const orgId = optionalOrg(values);
        const [{ removeMember, requireMemberByEmail }, { CLI_ACTOR }] = await Promise.all([
          import('../../members/service.js'),
          import('../../audit/service.js'),
        ]);
        const db = await database();
        const user = await requireMemberByEmail(db, email!, orgId);
        const { adminsLeft } = await removeMember(db, user, { by: { actor: CLI_ACTOR, address: null } });
        return {
          human: `Removed ${user.email}; their sessions have ended.${noAdminNote(adminsLeft, user.org_id)}`,
          json: { email: user.email, removed: true, admins_left: adminsLeft },
        };
      },
    },
    {
      name: 'user reset',
      summary: "clear a dashboard user's password, end their sessions and print a one-time link to set a new one",
      notes: `Earlier links of the user stop working. ${LINK_NOTE}`,
      synopsis: 'EMAIL [--org ORG_ID] [--base-url URL]',
      flags: { org: MEMBER_ORG_FLAG, 'base-url': BASE_URL_FLAG },
      args: ['EMAIL'],
      run: async ({ args: [email], values }, database) => {
        const orgId = optionalOrg(values);
        const { base, warnings } = await linkBase(values);
        const [{ requireMemberByEmail, resetMember, linkPath }, { CLI_ACTOR }] = await Promise.all([
          import('../../members/service.js'),
          import('../../audit/service.js'),
        ]);
        const db = await database();
        const user = await requireMemberByEmail(db, email!, orgId);
        const { token, adminsLeft } = await resetMember(db, user, { by: { actor: CLI_ACTOR, address: null } });
        const link = `${base}${linkPath(token)}`;
        return {
          warnings,
          human: `Reset ${user.email}: their sessions have ended. One-time link (72 hours):\n${link}${noAdminNote(adminsLeft, user.org_id)}`,
          json: { email: user.email, link, admins_left: adminsLeft },
        };
      },
    },
  ],
};
