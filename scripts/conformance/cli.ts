// `npm run conformance -- --base-url URL [--seed N] [--cases N] [--agent-id ID] [--webhook-url URL]`, the key in VOICE_CALL_API_KEY
import { parseArgs } from 'node:util';
import { formatReport } from './report.js';
import { runConformance } from './runner.js';

const USAGE = `usage: VOICE_CALL_API_KEY=KEY npm run conformance -- --base-url URL [--seed N] [--cases N] [--agent-id UUID] [--webhook-url URL]
  VOICE_CALL_API_KEY  an API key of the org to test with (a scale-plan org avoids waiting on the rate limit);
                      --api-key KEY works too, but puts the key where other users can read it
  --base-url     the API root (http://HOST:PORT/api/v1) or the service root
  --seed         the random seed (default: random, printed so a run can be repeated)
  --cases        generated valid requests per operation (default 25)
  --agent-id     the agent to place calls with (default: the first agent the API lists for the org)
  --webhook-url  an https URL the deployment accepts for webhook endpoints; test deliveries are sent to it.
                 Default: the check's own HTTPS receiver on 127.0.0.1, with webhook:listen's CA
                 (WEBHOOK_LISTEN_DIR or ~/.config/voice-call-api/listen); a server accepts it when started with
                 WEBHOOK_PRIVATE_ALLOWLIST=127.0.0.0/8 and trusts it with NODE_EXTRA_CA_CERTS=<that folder>/ca.pem.
                 Otherwise the webhook success paths are skipped, with a note saying so
  --help, -h     print this and exit

Exit status: 0 no violation, 1 violations found (each printed), 2 a bad command line.`;

function fail(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        'base-url': { type: 'string' },
        'api-key': { type: 'string' },
        seed: { type: 'string' },
        cases: { type: 'string' },
        'agent-id': { type: 'string' },
        'webhook-url': { type: 'string' },
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
const report = await runConformance({
  baseUrl: values['base-url'],
  apiKey,
  seed: integer(values.seed, Math.floor(Math.random() * 2 ** 31), 'seed'),
  cases: integer(values.cases, 25, 'cases'),
  ...(values['webhook-url'] ? { webhookUrl: values['webhook-url'] } : {}),
  ...(values['agent-id'] ? { agentId: values['agent-id'] } : {}),
});
console.log(formatReport(report));
process.exit(report.violations.length > 0 ? 1 : 0);
