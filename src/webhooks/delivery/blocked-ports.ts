// The Fetch standard's blocked ports, as undici (the HTTP client under fetch and ky) lists them: a
// delivery to one is refused, whichever client API sends it.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** Port numbers (as URL.port strings) that are never contacted. */
export const blockedPorts: ReadonlySet<string> = (
  require('undici/lib/web/fetch/constants.js') as { badPortsSet: ReadonlySet<string> }
).badPortsSet;
