// Redoc's standalone bundle as the docs page serves it: read once from node_modules, with the one
// asset it would fetch from off this server (its footer logo, from Redocly's CDN) taken out.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const REDOC_BUNDLE_PATH = createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');

// The footer's `<img src="https://cdn.redoc.ly/redoc/logo-mini.svg">`, rendered as `cond ? img : null`.
const REMOTE_LOGO =
  /\w+\?\w+\.createElement\("img",\{alt:"redocly logo",[^}]*src:"https:\/\/cdn\.redoc\.ly\/[^"]*"\}\):null/g;

/** The bundle with the remote logo replaced by nothing; throws when this Redoc version draws it differently. */
export function readRedocBundle(): Buffer {
  const source = readFileSync(REDOC_BUNDLE_PATH, 'utf8');
  const matches = source.match(REMOTE_LOGO)?.length ?? 0;
  if (matches !== 1) throw new Error(`${REDOC_BUNDLE_PATH}: expected Redoc's CDN logo once, found it ${matches} times`);
  return Buffer.from(source.replace(REMOTE_LOGO, 'null'));
}
