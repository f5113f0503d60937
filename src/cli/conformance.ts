// conformance: checks a deployment against the spec it publishes (or one named by --spec), prints the
// report, writes the JUnit and JSON reports asked for, and exits 0, 1 (violations), 2 or 3. It refuses
// live keys unless --allow-live is given, since it places calls.
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { UsageError } from './args.js';
import { reported, wantsHelp } from './command.js';
import { liveKeyRefusal } from '../conformance/key-mode.js';
import { formatReport } from '../conformance/report.js';
import { jsonReport, junitReport } from '../conformance/report-files.js';
import { REFUSAL_KEY_VARIABLES, type RefusalKeys } from '../conformance/refusals.js';
import { runConformance, type ConformanceOptions } from '../conformance/runner.js';

const API_KEY_VARIABLE = 'VOICE_CALL_API_KEY';

const USAGE = `Usage: voice-call-api conformance --base-url URL [--spec FILE|URL] [--seed N] [--cases N]
         [--agent-id UUID] [--webhook-url URL] [--exercise-rate-limit] [--allow-live] [--junit FILE] [--json FILE]
       npm run conformance -- --base-url URL [options]      (from a checkout)
  ${API_KEY_VARIABLE}  an API key of the org to test with: a test key (svc_test_...), as a live key needs
                      --allow-live (a scale-plan org avoids waiting on the rate limit); --api-key KEY works
                      too, but puts the key where other users can read it
  ${REFUSAL_KEY_VARIABLES.smallPlanKey}   optional: a key of an org on a small plan; its limit is used up to check the 429
  ${REFUSAL_KEY_VARIABLES.noCreditsKey}   optional: a key of an org with an agent and no credits (402 from POST /calls)
  ${REFUSAL_KEY_VARIABLES.noPlanKey}      optional: a key of an org with an agent and no plan (403 from POST /calls)
  ${REFUSAL_KEY_VARIABLES.lowBalanceKey}  optional: a key of an org whose balance one call's hold takes below its
                      low-balance threshold (the check awaits the balance.low)
  --base-url     the API root (http://HOST:PORT/api/v1) or the service root
  --spec         a file or http(s) URL (JSON or YAML) to take the spec from, instead of <base-url>/openapi.json:
                 for a deployment behind a proxy that does not pass that path through (Prism answers it 404).
                 --base-url must then be the API root, as requests go to it unchanged
  --seed         the random seed (default: random, printed so a run can be repeated)
  --cases        generated valid requests per operation (default 25)
  --agent-id     the agent to place calls with (default: the first agent the API lists for the org)
  --webhook-url  an https URL the deployment accepts for webhook endpoints; test deliveries are sent to it.
                 Default: the check's own HTTPS receiver on 127.0.0.1, with webhook:listen's CA
                 (WEBHOOK_LISTEN_DIR or ~/.config/voice-call-api/listen); a server accepts it when started with
                 WEBHOOK_PRIVATE_ALLOWLIST=127.0.0.0/8 and trusts it with NODE_EXTRA_CA_CERTS=<that folder>/ca.pem.
                 Otherwise the webhook success paths are skipped, with a note saying so
  --exercise-rate-limit  without a small-plan key, use up the org's own rate limit at the end of the run to
                 check the 429 (the org's other clients are refused for up to a minute)
  --allow-live   run with live keys (svc_live_...) too: the check places calls, which with a live key dial
                 real phones and spend real credits. Without it a live key is refused; use test keys (svc_test_...)
  --junit FILE   also write the report as JUnit XML (a failing test case per violation)
  --json FILE    also write the report as JSON
  --help, -h     print this and exit

Exit status: 0 no violation, 1 violations found (each printed with a curl command that repeats it),
2 a bad command line or a refused live key, 3 the run did not complete (interrupted, or the spec could
not be fetched or read). Whatever the run created is deleted at its end, also when it fails or is
interrupted (Ctrl-C).
`;

const OPTIONS = {
  'base-url': { type: 'string' },
  spec: { type: 'string' },
  'api-key': { type: 'string' },
  seed: { type: 'string' },
  cases: { type: 'string' },
  'agent-id': { type: 'string' },
  'webhook-url': { type: 'string' },
  'exercise-rate-limit': { type: 'boolean' },
  'allow-live': { type: 'boolean' },
  junit: { type: 'string' },
  json: { type: 'string' },
} as const;

/** What a checked command line asks for: the run's options, the report files and whether live keys may run. */
interface ConformanceRequest {
  options: Omit<ConformanceOptions, 'signal'>;
  junit: string | undefined;
  json: string | undefined;
  allowLive: boolean;
  /** Every key of the run, with the option or variable it came from. */
  keys: Array<{ source: string; key: string }>;
}

function integer(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new UsageError(`--${name} must be a non-negative integer`);
  return value;
}

function readRequest(argv: string[]): ConformanceRequest {
  let values;
  try {
    ({ values } = parseArgs({ args: argv, options: OPTIONS, strict: true }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const baseUrl = values['base-url'];
  if (!baseUrl) throw new UsageError('--base-url is required');
  const apiKey = values['api-key'] ?? process.env[API_KEY_VARIABLE];
  if (!apiKey) throw new UsageError(`set ${API_KEY_VARIABLE} to an API key of the org to test with`);
  const keys = [{ source: values['api-key'] ? '--api-key' : API_KEY_VARIABLE, key: apiKey }];
  const refusalKeys: RefusalKeys = {};
  for (const [option, variable] of Object.entries(REFUSAL_KEY_VARIABLES)) {
    const key = process.env[variable];
    if (!key) continue;
    refusalKeys[option as keyof typeof REFUSAL_KEY_VARIABLES] = key;
    keys.push({ source: variable, key });
  }
  return {
    options: {
      baseUrl,
      ...(values.spec ? { spec: values.spec } : {}),
      apiKey,
      seed: integer(values.seed, Math.floor(Math.random() * 2 ** 31), 'seed'),
      cases: integer(values.cases, 25, 'cases'),
      ...(values['webhook-url'] ? { webhookUrl: values['webhook-url'] } : {}),
      ...(values['agent-id'] ? { agentId: values['agent-id'] } : {}),
      ...refusalKeys,
      exerciseRateLimit: values['exercise-rate-limit'] ?? false,
    },
    junit: values.junit,
    json: values.json,
    allowLive: values['allow-live'] ?? false,
    keys,
  };
}

/** Runs the check with an interruption wired to the first SIGINT or SIGTERM, which stops sending cases and lets the run delete what it created. */
async function runInterruptible(options: ConformanceRequest['options']) {
  const interruption = new AbortController();
  const interrupt = () => interruption.abort();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, interrupt);
  try {
    return await runConformance({ ...options, signal: interruption.signal });
  } finally {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, interrupt);
  }
}

/** `voice-call-api conformance ...`: runs the check and resolves to its exit status. */
export async function conformance(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(USAGE);
    return 0;
  }
  return reported(USAGE, async () => {
    const request = readRequest(argv);
    const refusal = request.allowLive ? undefined : liveKeyRefusal(request.keys);
    if (refusal) {
      process.stderr.write(`Error: ${refusal}\n`);
      return 2;
    }
    let report;
    try {
      report = await runInterruptible(request.options);
    } catch (error) {
      process.stderr.write(`the run did not complete: ${(error as Error).message}\n`);
      return 3;
    }
    process.stdout.write(`${formatReport(report)}\n`);
    if (request.junit) await writeFile(request.junit, junitReport(report));
    if (request.json) await writeFile(request.json, jsonReport(report));
    if (report.interrupted) process.stderr.write('the run was interrupted: what it created was deleted\n');
    return report.interrupted ? 3 : report.violations.length > 0 ? 1 : 0;
  });
}
