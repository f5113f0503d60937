// `npm run conformance -- --base-url URL [options]`, the key in VOICE_CALL_API_KEY: runs the check, prints
// the report, writes the JUnit and JSON reports asked for, and exits 0, 1 (violations), 2 or 3.
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { formatReport } from './report.js';
import { jsonReport, junitReport } from './report-files.js';
import { REFUSAL_KEY_VARIABLES } from './refusals.js';
import { runConformance } from './runner.js';

const USAGE = `usage: VOICE_CALL_API_KEY=KEY npm run conformance -- --base-url URL [--spec FILE|URL] [--seed N] [--cases N]
         [--agent-id UUID] [--webhook-url URL] [--exercise-rate-limit] [--junit FILE] [--json FILE]
  VOICE_CALL_API_KEY  an API key of the org to test with (a scale-plan org avoids waiting on the rate limit);
                      --api-key KEY works too, but puts the key where other users can read it
  ${REFUSAL_KEY_VARIABLES.smallPlanKey}   optional: a key of an org on a small plan; its limit is used up to check the 429
  ${REFUSAL_KEY_VARIABLES.noCreditsKey}   optional: a key of an org with an agent and no credits (402 from POST /calls)
  ${REFUSAL_KEY_VARIABLES.noPlanKey}      optional: a key of an org with an agent and no plan (403 from POST /calls)
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
  --junit FILE   also write the report as JUnit XML (a failing test case per violation)
  --json FILE    also write the report as JSON
  --help, -h     print this and exit

Exit status: 0 no violation, 1 violations found (each printed with a curl command that repeats it),
2 a bad command line, 3 the run did not complete (interrupted, or the spec could not be fetched or read).
Whatever the run created is deleted at its end, also when it fails or is interrupted (Ctrl-C).`;

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        'base-url': { type: 'string' },
        spec: { type: 'string' },
        'api-key': { type: 'string' },
        seed: { type: 'string' },
        cases: { type: 'string' },
        'agent-id': { type: 'string' },
        'webhook-url': { type: 'string' },
        'exercise-rate-limit': { type: 'boolean' },
        junit: { type: 'string' },
        json: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return fail((error as Error).message);
  }
})();

if (values.help) {
  console.log(USAGE);
  process.exit(0);
}

const integer = (raw: string | undefined, fallback: number, name: string) => {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value >= 0 ? value : fail(`--${name} must be a non-negative integer`);
};

const apiKey = values['api-key'] ?? process.env.VOICE_CALL_API_KEY;
if (!values['base-url']) fail('--base-url is required');
if (!apiKey) fail('set VOICE_CALL_API_KEY to an API key of the org to test with');
const refusalKeys = Object.fromEntries(
  Object.entries(REFUSAL_KEY_VARIABLES).flatMap(([option, variable]) =>
    process.env[variable] ? [[option, process.env[variable]]] : [],
  ),
);
// The first Ctrl-C (or TERM) stops sending cases and lets the run delete what it created.
const interruption = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => interruption.abort());

const report = await runConformance({
  baseUrl: values['base-url'],
  ...(values.spec ? { spec: values.spec } : {}),
  apiKey,
  seed: integer(values.seed, Math.floor(Math.random() * 2 ** 31), 'seed'),
  cases: integer(values.cases, 25, 'cases'),
  ...(values['webhook-url'] ? { webhookUrl: values['webhook-url'] } : {}),
  ...(values['agent-id'] ? { agentId: values['agent-id'] } : {}),
  ...refusalKeys,
  exerciseRateLimit: values['exercise-rate-limit'] ?? false,
  signal: interruption.signal,
}).catch((error: Error) => {
  console.error(`the run did not complete: ${error.message}`);
  process.exit(3);
});
console.log(formatReport(report));
if (values.junit) await writeFile(values.junit, junitReport(report));
if (values.json) await writeFile(values.json, jsonReport(report));
if (report.interrupted) console.error('the run was interrupted: what it created was deleted');
process.exit(report.interrupted ? 3 : report.violations.length > 0 ? 1 : 0);
