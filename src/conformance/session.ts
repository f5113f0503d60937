// One conformance run's connection to the deployment: sends requests, judges every answer, keeps the tallies.
import { buildRequest, type RequestInput } from './request.js';
import { curlLine, send, type Exchange, type HttpRequest } from './http.js';
import type { Expectation, SchemaJudge } from './judge.js';
import type { Operation } from './spec/operations.js';
import { pathParameterNames, removalOf } from './spec/paths.js';

/** Why a request was sent: a generated valid request, one broken constraint, or a documented scenario. */
export type CaseKind = 'valid' | 'invalid' | 'scenario';

/** One answer that broke the contract, with what it takes to reproduce it. */
export interface Violation {
  operationId: string;
  kind: CaseKind;
  label: string;
  problems: string[];
  status: number;
  body: string;
  curl: string;
}

/** Counts for one operation. */
export interface OperationTally {
  operation: Operation;
  cases: Record<CaseKind, number>;
  statuses: Set<number>;
  violations: number;
  notes: string[];
}

/** Sends requests for cases and judges each answer against the spec. */
export class Session {
  readonly tallies = new Map<string, OperationTally>();
  readonly violations: Violation[] = [];
  /** What 2xx answers created and nothing deleted yet, by `<DELETE path> <value>`: removed at the end whatever happens. */
  private readonly created = new Map<
    string,
    { remove: Operation; param: string; value: string; authorization?: string | null }
  >();
  /** Every webhook secret an answer returned (registration, rotation), to verify deliveries with. */
  readonly secrets = new Set<string>();
  /** Set when the run is interrupted: no case is sent after it, only clean-up. */
  private interrupted = false;

  constructor(
    readonly baseUrl: string,
    private readonly apiKey: string,
    readonly operations: readonly Operation[],
    private readonly judge: SchemaJudge,
    private readonly fetchFn: typeof fetch,
    /** The API keys a curl line may contain, each with the environment variable it is shown as. */
    private readonly keys: Record<string, string> = { [apiKey]: 'VOICE_CALL_API_KEY' },
  ) {
    for (const operation of operations) this.tallyOf(operation);
  }

  /** The tally of an operation, started on first use (routing scenarios send operations the spec lacks). */
  private tallyOf(operation: Operation): OperationTally {
    let tally = this.tallies.get(operation.id);
    if (!tally) {
      tally = {
        operation,
        cases: { valid: 0, invalid: 0, scenario: 0 },
        statuses: new Set(),
        violations: 0,
        notes: [],
      };
      this.tallies.set(operation.id, tally);
    }
    return tally;
  }

  /** Stops sending cases (the clean-up still runs). */
  interrupt(): void {
    this.interrupted = true;
  }

  /** Keeps track of what an answer created (any 2xx to a POST with a matching DELETE) or deleted. */
  private track(operation: Operation, input: RequestInput, exchange: Exchange): void {
    const ok = exchange.status >= 200 && exchange.status < 300;
    const secret = (exchange.json as { secret?: unknown } | undefined)?.secret;
    if (ok && typeof secret === 'string') this.secrets.add(secret);
    if (operation.method === 'DELETE' && (ok || exchange.status === 404)) {
      const [param] = pathParameterNames(operation.path);
      if (param !== undefined) this.created.delete(`${operation.path} ${input.path[param]}`);
      return;
    }
    const removal = operation.method === 'POST' ? removalOf(this.operations, operation) : undefined;
    const data = (exchange.json as { data?: Record<string, unknown> } | undefined)?.data;
    const value = removal && data?.[removal.param];
    // Made with another org's key: removed with it.
    if (ok && removal && typeof value === 'string')
      this.created.set(`${removal.remove.path} ${value}`, {
        ...removal,
        value,
        ...(input.authorization === undefined ? {} : { authorization: input.authorization }),
      });
  }

  /** Deletes everything the run created and did not delete (after every 2xx, whatever its status). */
  async removeCreated(): Promise<void> {
    for (const { remove, param, value, authorization } of [...this.created.values()]) {
      await this.send(
        remove,
        { path: { [param]: value }, query: {}, headers: {}, ...(authorization === undefined ? {} : { authorization }) },
        { kind: 'declared' },
        'scenario',
        `cleanup: ${remove.id}`,
      );
      this.created.delete(`${remove.path} ${value}`);
    }
  }

  /** The HTTP request `call` would send for `input`. */
  request(operation: Operation, input: RequestInput): HttpRequest {
    return buildRequest(this.baseUrl, operation, input, this.apiKey);
  }

  /** The result of judging `exchange` as an answer to `operation` (for answers sent outside `call`). */
  judged(operation: Operation, exchange: Exchange, expectation: Expectation): string[] {
    return this.judge.judge(operation, exchange, expectation);
  }

  /** The operation with this id, if the spec has it. */
  operation(id: string): Operation | undefined {
    return this.operations.find((operation) => operation.id === id);
  }

  /** Adds a note (e.g. an unreachable success path) to an operation's summary, once. */
  note(operationId: string, note: string): void {
    const notes = this.tallies.get(operationId)?.notes;
    if (notes && !notes.includes(note)) notes.push(note);
  }

  /** Counts one scenario check of `operation` made outside `call` (a delivery received, a stalled body), with the status seen. */
  count(operation: Operation, status?: number): void {
    const tally = this.tallyOf(operation);
    tally.cases.scenario += 1;
    if (status !== undefined) tally.statuses.add(status);
  }

  /** Records a violation found across several answers (paging, deliveries), reproduced by `exchange`'s request. */
  flag(
    operation: Operation,
    kind: CaseKind,
    label: string,
    exchange: Exchange | undefined,
    problems: string[],
    curl?: string,
  ): void {
    if (problems.length === 0) return;
    const tally = this.tallyOf(operation);
    tally.violations += 1;
    this.violations.push({
      operationId: operation.id,
      kind,
      label,
      problems,
      status: exchange?.status ?? 0,
      body: exchange?.text.slice(0, 400) ?? '',
      curl: curl ?? (exchange ? curlLine(exchange.request, this.keys) : ''),
    });
  }

  /**
   * Sends one case, judges the answer (plus any `extra` checks a scenario makes), records any
   * violation, and returns the exchange.
   */
  async call(
    operation: Operation,
    input: RequestInput,
    expectation: Expectation,
    kind: CaseKind,
    label: string,
    extra: (exchange: Exchange) => string[] = () => [],
    waitOnRateLimit = true,
  ): Promise<Exchange> {
    if (this.interrupted) throw new Error('the run was interrupted');
    return this.send(operation, input, expectation, kind, label, extra, waitOnRateLimit);
  }

  private async send(
    operation: Operation,
    input: RequestInput,
    expectation: Expectation,
    kind: CaseKind,
    label: string,
    extra: (exchange: Exchange) => string[] = () => [],
    waitOnRateLimit = true,
  ): Promise<Exchange> {
    const request = buildRequest(this.baseUrl, operation, input, this.apiKey);
    const tally = this.tallyOf(operation);
    tally.cases[kind] += 1;
    const violation = (problems: string[], status: number, body: string) => {
      tally.violations += 1;
      this.violations.push({
        operationId: operation.id,
        kind,
        label,
        problems,
        status,
        body,
        curl: curlLine(request, this.keys),
      });
    };
    let exchange: Exchange;
    try {
      exchange = await send(this.fetchFn, request, waitOnRateLimit);
      this.track(operation, input, exchange);
    } catch (error) {
      violation([`request failed: ${(error as Error).message}`], 0, '');
      throw error;
    }
    tally.statuses.add(exchange.status);
    const problems = [...this.judge.judge(operation, exchange, expectation), ...extra(exchange)];
    if (problems.length > 0) violation(problems, exchange.status, exchange.text.slice(0, 400));
    return exchange;
  }
}
