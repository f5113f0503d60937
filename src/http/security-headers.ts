// Security headers on every response (helmet, set up for a JSON API) and no caching of API answers.
// Routes that serve a page or a static file (the /docs page, its script) override what they need.
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

/** An API's policy: nothing may load, frame or embed a response. */
const POLICY: HelmetOptions = {
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  frameguard: { action: 'deny' },
};

/**
 * The headers helmet sets for `options`, worked out once: with a fixed policy they do not depend on
 * the request, and replaying a list is cheaper than running helmet's middleware chain per response.
 * Throws if helmet reports an error for the options.
 */
function helmetHeaders(options: HelmetOptions): Array<[string, string]> {
  const headers = new Map<string, string>();
  const response = {
    setHeader: (name: string, value: string | number | readonly string[]) => headers.set(name, String(value)),
    removeHeader: (name: string) => headers.delete(name),
  };
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
  });
  return [...headers];
}

/** The headers every response starts with: helmet's with the API's policy, and Cache-Control: no-store. */
export function securityHeaders(): Array<[string, string]> {
  return [...helmetHeaders(POLICY), ['Cache-Control', 'no-store']];
}
