// A fetch that sends API requests through Prism (see prism-process.ts) and turns its verdicts into
// test failures: a response that breaks the spec, a status the spec does not declare, or a request
// Prism refuses as invalid that the app nevertheless accepts.
import { UPSTREAM_PORT_HEADER } from './prism-process.js';

const PRISM_ERROR = 'https://stoplight.io/prism/errors#';

/** Thrown when Prism finds the app's side of an exchange in breach of the spec. */
export class PrismViolation extends Error {}

/** The fetch for an app whose API root is `apiUrl`, judged by the Prism proxy at `prismUrl`. */
export function prismFetch(apiUrl: string, prismUrl: string): typeof fetch {
  const upstreamPort = new URL(apiUrl).port;
  return async (input, init) => {
    const original = new Request(input, init);
    if (!original.url.startsWith(`${apiUrl}/`)) return fetch(original);
    const body = original.body ? await original.arrayBuffer() : undefined;
    // Prism cannot judge a body that is not JSON (and on Node 24 it never answers one): such a request
    // goes to the app directly, which must refuse it itself.
    if (body !== undefined && !parsesAsJson(body))
      return fetch(original.url, { method: original.method, headers: original.headers, body });
    const copy = (url: string, extra: Record<string, string> = {}) => {
      const headers = new Headers(original.headers);
      for (const [name, value] of Object.entries(extra)) headers.set(name, value);
      return new Request(url, {
        method: original.method,
        headers,
        ...(body !== undefined ? { body } : {}),
        redirect: 'manual',
      });
    };
    const where = `${original.method} ${original.url.slice(apiUrl.length)}`;
    const viaPrism = await fetch(
      copy(`${prismUrl}${original.url.slice(apiUrl.length)}`, { [UPSTREAM_PORT_HEADER]: upstreamPort }),
    );
    const warnings = viaPrism.headers.get('sl-violations');
    if (warnings) throw new PrismViolation(`Prism: ${where} -> ${viaPrism.status}: ${warnings}`);
    // Every answer of the app carries Request-Id; one without it was made by Prism itself.
    if (viaPrism.headers.has('request-id')) return viaPrism;
    const problem = (await viaPrism
      .clone()
      .json()
      .catch(() => ({}))) as { type?: string; validation?: unknown; detail?: string };
    if (problem.type === `${PRISM_ERROR}VIOLATIONS`) {
      throw new PrismViolation(`Prism: ${where} answer breaks the spec: ${JSON.stringify(problem.validation)}`);
    }
    // Prism refused the request itself (invalid input, no key, unknown route or method): the app must refuse it too.
    const direct = await fetch(copy(original.url));
    if (direct.status < 400 || direct.status >= 500) {
      throw new PrismViolation(
        `Prism refused ${where} (${JSON.stringify(problem.validation ?? problem.detail ?? problem)}) but the app answered ${direct.status}`,
      );
    }
    return direct;
  };
}

/** Whether `body` is UTF-8 JSON text. */
function parsesAsJson(body: ArrayBuffer): boolean {
  try {
    JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body));
    return true;
  } catch {
    return false;
  }
}
