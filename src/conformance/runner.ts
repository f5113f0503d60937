// A whole conformance run: fetch the published spec, run every operation's cases and the scenarios, clean up.
import { randomUUID } from 'node:crypto';
import { invalidCases, validInputs } from './cases.js';
import { judgeDeliveries } from './events.js';
import { Fixtures, type Collection, type FixtureOptions } from './fixtures.js';
import { pinValid } from './hints.js';
import { SchemaJudge } from './judge.js';
import type { RequestInput } from './request.js';
import { startLoopbackReceiver } from './receiver.js';
import { REFUSAL_KEY_VARIABLES, type RefusalKeys } from './refusals.js';
import { runScenarios } from './scenarios.js';
import { loadSpec } from './spec-source.js';
import { probeLoopback, type WebhookTarget } from './webhook-target.js';
import { Session, type OperationTally, type Violation } from './session.js';
import type { SpecDocument } from './spec/document.js';
import { listOperations, type Operation } from './spec/operations.js';
import { removalOf } from './spec/paths.js';

/** How to run: where, as whom, how many cases, and what the deployment needs beyond the spec. */
export interface ConformanceOptions extends FixtureOptions, RefusalKeys {
  /** The API root, e.g. http://127.0.0.1:3000/api/v1 (the service root works too, unless `spec` is given). */
  baseUrl: string;
  /** A file or http(s) URL to read the spec from, instead of the document published at `baseUrl`. */
  spec?: string;
  apiKey: string;
  seed: number;
  /** Generated valid requests per operation. */
  cases: number;
  /** An https URL the deployment accepts for webhook endpoints; the check's own loopback receiver when not given. */
  webhookUrl?: string;
  /** The folder of the receiver's CA (webhook:listen's state folder when not given). */
  receiverDir?: string;
  fetch?: typeof fetch;
  /** Aborting it interrupts the run: no further case is sent, and what the run created is deleted. */
  signal?: AbortSignal;
}

/** What a run found. */
export interface ConformanceReport {
  apiRoot: string;
  seed: number;
  cases: number;
  tallies: OperationTally[];
  violations: Violation[];
  /** What the whole run could not check, and how to enable it. */
  notes: string[];
  /** Whether the run was interrupted before it finished. */
  interrupted: boolean;
}

/**
 * Path values for an operation from fixtures, by the collection each `{param}` follows; the collection
 * without an id (so its reason can be noted) when one is unavailable.
 */
async function pathValues(
  operation: Operation,
  fixtures: Fixtures,
  fresh: boolean,
): Promise<{ values: Record<string, string> } | { missing: Collection }> {
  const values: Record<string, string> = {};
  const segments = operation.path.split('/');
  for (const parameter of operation.parameters.filter((candidate) => candidate.in === 'path')) {
    const collection = segments[segments.indexOf(`{${parameter.name}}`) - 1] as Collection;
    const value =
      collection === 'calls'
        ? await fixtures.call(fresh)
        : collection === 'webhooks'
          ? await fixtures.webhook(fresh)
          : collection === 'deliveries'
            ? await fixtures.delivery(values.id)
            : collection === 'contacts'
              ? await fixtures.contactId()
              : collection === 'agents'
                ? await fixtures.agent()
                : collection === 'events'
                  ? await fixtures.event()
                  : collection === 'suppressions'
                    ? await fixtures.suppression()
                    : collection === 'campaigns'
                      ? await fixtures.campaign(fresh)
                      : undefined;
    if (!value) return { missing: collection };
    values[parameter.name] = value;
  }
  return { values };
}

async function runOperation(
  session: Session,
  fixtures: Fixtures,
  document: SpecDocument,
  judge: SchemaJudge,
  operation: Operation,
  seed: number,
  cases: number,
) {
  // Deleting, and actions that a resource's state can refuse, get a resource of their own per case.
  const consumes = operation.method === 'DELETE' || ('409' in operation.responses && operation.path.includes('{'));
  const inputs = validInputs(document, operation, judge, seed, cases);
  // What a generated request creates is deleted at once where the spec has a DELETE for it (an org may hold only 20 webhooks).
  const removal = removalOf(session.operations, operation);
  for (const input of inputs) {
    const path = await pathValues(operation, fixtures, consumes);
    if ('missing' in path) {
      session.note(operation.id, `success path not checked: ${await fixtures.unavailable(path.missing)}`);
      break;
    }
    const pinned = await pinValid(operation, { ...input, path: path.values }, fixtures);
    if (pinned.unreachable && pinned.expectation.kind === 'error')
      session.note(
        operation.id,
        `success path not checked (valid requests expect ${pinned.expectation.status} ${pinned.expectation.code}): ${pinned.unreachable}`,
      );
    const exchange = await session.call(
      operation,
      pinned.input,
      pinned.expectation,
      'valid',
      'generated valid request',
    );
    if (consumes) await fixtures.releaseFresh();
    const created = removal && (exchange.json as { data?: Record<string, unknown> } | undefined)?.data?.[removal.param];
    if (exchange.status >= 200 && exchange.status < 300 && typeof created === 'string' && removal) {
      await session.call(
        removal.remove,
        { path: { [removal.param]: created }, query: {}, headers: {} },
        { kind: 'success' },
        'scenario',
        `cleanup: ${removal.remove.id}`,
      );
    }
  }
  const found = await pathValues(operation, fixtures, false);
  const shared =
    'values' in found
      ? found.values
      : Object.fromEntries(operation.parameters.filter((p) => p.in === 'path').map((p) => [p.name, randomUUID()]));
  const bases: RequestInput[] = [];
  for (const input of inputs) bases.push((await pinValid(operation, { ...input, path: shared }, fixtures)).input);
  for (const testCase of invalidCases(document, operation, judge, bases, 'values' in found)) {
    await session.call(operation, testCase.input, testCase.expectation, 'invalid', testCase.label);
  }
}

/** Runs the whole check and returns its report; throws only when the spec cannot be fetched or read. */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const fetchFn = options.fetch ?? fetch;
  const { apiRoot, document } = await loadSpec(options.baseUrl, options.spec);
  const operations = listOperations(document);
  const judge = new SchemaJudge(document);
  const keys: Record<string, string> = { [options.apiKey]: 'VOICE_CALL_API_KEY' };
  for (const [option, variable] of Object.entries(REFUSAL_KEY_VARIABLES)) {
    const key = options[option as keyof typeof REFUSAL_KEY_VARIABLES];
    if (key) keys[key] = variable;
  }
  const session = new Session(apiRoot, options.apiKey, operations, judge, fetchFn, keys);
  const receiver = options.webhookUrl ? undefined : await startLoopbackReceiver(options.receiverDir);
  const notes: string[] = [];
  const interrupt = () => session.interrupt();
  options.signal?.addEventListener('abort', interrupt);
  if (options.signal?.aborted) interrupt();
  let fixtures: Fixtures | undefined;
  try {
    const webhooks: WebhookTarget = receiver ? await probeLoopback(session, receiver) : { url: options.webhookUrl! };
    if ('reason' in webhooks) notes.push(`webhooks: ${webhooks.reason}`);
    fixtures = new Fixtures(session, options, webhooks);
    for (const [index, operation] of operations.entries()) {
      try {
        await runOperation(session, fixtures, document, judge, operation, options.seed + index, options.cases);
      } catch (error) {
        session.note(operation.id, `aborted: ${(error as Error).message}`);
      }
    }
    if (!options.signal?.aborted) await runScenarios(session, fixtures, document, options);
    if (receiver) judgeDeliveries(session, document, judge, receiver);
  } finally {
    options.signal?.removeEventListener('abort', interrupt);
    await fixtures?.cleanup().catch(() => undefined);
    await session.removeCreated();
    await receiver?.close();
  }
  return {
    apiRoot,
    seed: options.seed,
    cases: options.cases,
    tallies: [...session.tallies.values()],
    violations: session.violations,
    notes,
    interrupted: options.signal?.aborted ?? false,
  };
}
