// `npm run admin -- <command>`: the operator CLI standing in for the dashboard. Human output by
// default, JSON with --json; usage errors exit 2, failed operations exit 1.
import { loadConfig } from '../../config.js';
import { EmbeddedPostgresError } from '../../database/embedded.js';
import { openDatabase, startupMigrationMode, type OpenDatabase } from '../../database/open.js';
import { DomainError } from '../../errors.js';
import { addCredits, createAgent, createOrg, requireOrg, setPlan } from '../../orgs/service.js';
import { issueApiKey, listKeys, maskKey, revokeKey } from '../../orgs/api-keys.js';
import { ImportFileError, importContacts } from '../../contacts/csv-import.js';
import { listDeliveryLog } from '../../webhooks/service.js';
import { parse, required, optionalInteger, UsageError } from '../args.js';

const USAGE = `Usage: voice-call-api admin <command> [options] [--json]   (from a checkout: npm run admin -- ...)

  org create --name NAME [--credits PAISE] [--plan NAME | --no-plan] [--from E164]
  agent create --org ORG_ID --name NAME [--language xx-XX] [--max-duration SEC] [--from E164] [--rate PAISE_PER_MIN]
  key create --org ORG_ID
  key list --org ORG_ID
  key revoke PREFIX
  credits add --org ORG_ID --paise N
  plan set --org ORG_ID --plan NAME|none
  contacts import --org ORG_ID FILE.csv
  deliveries --webhook WEBHOOK_ID [--limit N]   the endpoint's delivery log, newest first (max 100)
`;

type Output = { human: string; json: unknown };
type Command = (argv: string[], database: () => Promise<OpenDatabase>) => Promise<Output>;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function orgId(values: Record<string, unknown>): string {
  const id = required(values, 'org');
  if (!UUID.test(id)) throw new UsageError('--org must be an org id (a UUID)');
  return id;
}

const commands: Record<string, Command> = {
  'org create': async (argv, database) => {
    const { values } = parse(argv, {
      name: { type: 'string' },
      credits: { type: 'string' },
      plan: { type: 'string' },
      'no-plan': { type: 'boolean' },
      from: { type: 'string' },
    });
    if (values.plan !== undefined && values['no-plan']) throw new UsageError('use either --plan or --no-plan');
    const credits = optionalInteger(values, 'credits');
    const { db } = await database();
    const org = await createOrg(db, {
      name: required(values, 'name'),
      creditsPaise: credits,
      planId: values['no-plan'] ? null : (values.plan as string | undefined),
      fromE164: (values.from as string | undefined) ?? null,
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
  'agent create': async (argv, database) => {
    const { values } = parse(argv, {
      org: { type: 'string' },
      name: { type: 'string' },
      language: { type: 'string' },
      'max-duration': { type: 'string' },
      from: { type: 'string' },
      rate: { type: 'string' },
    });
    const input = {
      orgId: orgId(values),
      name: required(values, 'name'),
      language: values.language as string | undefined,
      maxDurationSec: optionalInteger(values, 'max-duration'),
      fromE164: (values.from as string | undefined) ?? null,
      ratePaisePerMinute: optionalInteger(values, 'rate'),
    };
    const { db } = await database();
    const agent = await createAgent(db, input);
    return {
      human: `Created agent ${agent.id} "${agent.name}" (${agent.language}, max ${agent.max_duration_sec} s, ${agent.rate_paise_per_minute} paise/min)`,
      json: {
        id: agent.id,
        org_id: agent.org_id,
        name: agent.name,
        language: agent.language,
        max_duration_sec: agent.max_duration_sec,
        from_e164: agent.from_e164,
        rate_paise_per_minute: agent.rate_paise_per_minute,
      },
    };
  },
  'key create': async (argv, database) => {
    const { values } = parse(argv, { org: { type: 'string' } });
    const id = orgId(values);
    const { db } = await database();
    await requireOrg(db, id);
    const { key, prefix } = await issueApiKey(db, id);
    return {
      human: `Created API key (shown once, store it now):\n${key}`,
      json: { key, prefix, org_id: id },
    };
  },
  'key list': async (argv, database) => {
    const { values } = parse(argv, { org: { type: 'string' } });
    const id = orgId(values);
    const { db } = await database();
    const keys = await listKeys(db, id);
    const rows = keys.map((key) => ({
      prefix: key.prefix,
      masked: maskKey(key.prefix),
      created_at: key.created_at.toISOString(),
      revoked_at: key.revoked_at?.toISOString() ?? null,
    }));
    return {
      human: rows.length
        ? rows
            .map(
              (row) => `${row.masked}  created ${row.created_at}${row.revoked_at ? `  revoked ${row.revoked_at}` : ''}`,
            )
            .join('\n')
        : 'No keys.',
      json: rows,
    };
  },
  'key revoke': async (argv, database) => {
    const { positionals } = parse(argv, {});
    const prefix = positionals[0];
    if (!prefix || positionals.length !== 1) throw new UsageError('key revoke takes exactly one PREFIX');
    const { db } = await database();
    if (!(await revokeKey(db, prefix, new Date()))) {
      throw new DomainError('not_found', `no active key with prefix ${prefix}`);
    }
    return {
      human: `Revoked key ${maskKey(prefix)}; it stops working within 30 seconds.`,
      json: { prefix, revoked: true },
    };
  },
  'credits add': async (argv, database) => {
    const { values } = parse(argv, { org: { type: 'string' }, paise: { type: 'string' } });
    const id = orgId(values);
    const paise = optionalInteger(values, 'paise');
    if (paise === undefined) throw new UsageError('--paise is required');
    const { db } = await database();
    const balance = await addCredits(db, id, paise);
    return {
      human: `Added ${paise} paise; balance is now ${balance} paise.`,
      json: { org_id: id, added_paise: paise, balance_paise: balance },
    };
  },
  'plan set': async (argv, database) => {
    const { values } = parse(argv, { org: { type: 'string' }, plan: { type: 'string' } });
    const id = orgId(values);
    const plan = required(values, 'plan');
    const { db } = await database();
    await setPlan(db, id, plan === 'none' ? null : plan);
    return { human: `Org ${id} plan set to ${plan}.`, json: { org_id: id, plan: plan === 'none' ? null : plan } };
  },
  deliveries: async (argv, database) => {
    const { values } = parse(argv, { webhook: { type: 'string' }, limit: { type: 'string' } });
    const webhookId = required(values, 'webhook');
    if (!UUID.test(webhookId)) throw new UsageError('--webhook must be a webhook id (a UUID)');
    const limit = optionalInteger(values, 'limit') ?? 100;
    if (limit < 1 || limit > 100) throw new UsageError('--limit must be from 1 to 100');
    const { db } = await database();
    const attempts = await listDeliveryLog(db, webhookId, { limit });
    const rows = attempts.map((attempt) => ({
      attempted_at: attempt.attempted_at.toISOString(),
      event: attempt.event,
      event_id: attempt.event_id,
      delivery_id: attempt.delivery_id,
      attempt: attempt.attempt,
      status_code: attempt.status_code,
      failure_kind: attempt.failure_kind,
      duration_ms: attempt.duration_ms,
      response_excerpt: attempt.response_excerpt,
    }));
    const human = rows.length
      ? rows
          .map(
            (row) =>
              `${row.attempted_at}  ${row.event.padEnd(15)} #${row.attempt}  ${String(row.status_code ?? row.failure_kind).padEnd(18)} ${String(row.duration_ms).padStart(5)} ms  ${(row.response_excerpt ?? '').replace(/\s+/g, ' ').slice(0, 60)}`,
          )
          .join('\n')
      : 'No delivery attempts yet.';
    return { human, json: rows };
  },
  'contacts import': async (argv, database) => {
    const { values, positionals } = parse(argv, { org: { type: 'string' } });
    const id = orgId(values);
    const file = positionals[0];
    if (!file || positionals.length !== 1) throw new UsageError('contacts import takes exactly one FILE.csv');
    const { db } = await database();
    await requireOrg(db, id);
    const summary = await importContacts(db, id, file, (rows) => process.stderr.write(`… ${rows} rows read\n`));
    const lines = [
      `Imported ${file}: ${summary.rows} rows, ${summary.created} created, ${summary.updated} updated, ${summary.rejected} rejected.`,
      ...summary.rejections.map((rejection) => `  row ${rejection.row}: ${rejection.reasons.join('; ')}`),
    ];
    if (summary.rejected > summary.rejections.length)
      lines.push(`  … and ${summary.rejected - summary.rejections.length} more`);
    return { human: lines.join('\n'), json: summary };
  },
};

async function run(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const name = commands[argv[0] ?? ''] ? argv[0]! : argv.slice(0, 2).join(' ');
  const command = commands[name];
  if (!command || argv.includes('--help') || argv.includes('-h')) {
    const known = Boolean(command) || argv.length === 0 || argv.includes('--help') || argv.includes('-h');
    (known ? process.stdout : process.stderr).write(USAGE);
    if (!known) process.stderr.write(`\nUnknown command: ${argv.slice(0, 2).join(' ') || '(none)'}\n`);
    return known ? 0 : 2;
  }
  let opened: OpenDatabase | null = null;
  const config = loadConfig();
  const database = async () => (opened ??= await openDatabase(config, { migrations: startupMigrationMode(config) }));
  try {
    const output = await command(argv.slice(name.split(' ').length), database);
    process.stdout.write((json ? JSON.stringify(output.json, null, 2) : output.human) + '\n');
    return 0;
  } catch (error) {
    const known =
      error instanceof UsageError ||
      error instanceof DomainError ||
      error instanceof ImportFileError ||
      error instanceof EmbeddedPostgresError;
    const message = known ? (error as Error).message : `unexpected failure: ${(error as Error).message}`;
    if (json) process.stderr.write(JSON.stringify({ error: message }) + '\n');
    else process.stderr.write(`Error: ${message}\n${error instanceof UsageError ? `\n${USAGE}` : ''}`);
    return error instanceof UsageError ? 2 : 1;
  } finally {
    if (opened) await (opened as OpenDatabase).close();
  }
}

/** The admin command: runs one operator command; 0 on success, 1 when it failed, 2 on a usage error. */
export async function admin(argv: string[]): Promise<number> {
  return run(argv);
}
