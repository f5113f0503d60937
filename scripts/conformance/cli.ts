// `npm run conformance -- --base-url URL --api-key KEY [--seed N] [--cases N] [--agent-id ID] [--webhook-url URL]`
import { parseArgs } from 'node:util';
import { formatReport } from './report.js';
import { runConformance } from './runner.js';

const USAGE = `usage: npm run conformance -- --base-url URL --api-key KEY [--seed N] [--cases N] [--agent-id UUID] [--webhook-url URL]
  --base-url     the API root (http://HOST:PORT/api/v1) or the service root
  --api-key      an API key of the org to test with (a scale-plan org avoids waiting on the rate limit)
  --seed         the random seed (default: random, printed so a run can be repeated)
  --cases        generated valid requests per operation (default 25)
  --agent-id     an agent of that org: enables placing calls (the API cannot create agents); without it
                 createCall's success path and the call-addressed operations' success paths are not reached
  --webhook-url  an https URL the deployment accepts for webhook endpoints (default https://example.com/conformance-hook);
                 test deliveries are sent to it`;

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
      },
    });
  } catch (error) {
    return fail((error as Error).message);
  }
})();

const integer = (raw: string | undefined, fallback: number, name: string) => {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value >= 0 ? value : fail(`--${name} must be a non-negative integer`);
};

if (!values['base-url'] || !values['api-key']) fail('--base-url and --api-key are required');
const report = await runConformance({
  baseUrl: values['base-url'],
  apiKey: values['api-key'],
  seed: integer(values.seed, Math.floor(Math.random() * 2 ** 31), 'seed'),
  cases: integer(values.cases, 25, 'cases'),
  webhookUrl: values['webhook-url'] ?? 'https://example.com/conformance-hook',
  ...(values['agent-id'] ? { agentId: values['agent-id'] } : {}),
});
console.log(formatReport(report));
process.exit(report.violations.length > 0 ? 1 : 0);
