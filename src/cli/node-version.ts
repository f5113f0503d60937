// The Node versions this build runs on. On an older Node a dependency fails at import with an error that
// does not say why, so the entry point checks first and says so itself.

/** The oldest Node this build runs on, as package.json's engines gives it (`>=` this). */
export const MIN_NODE_VERSION = '24.11.0';

/** Major, minor and patch of a version written as process.versions.node writes it. */
function parts(version: string): number[] {
  return version.split('.').map((part) => Number.parseInt(part, 10) || 0);
}

/** Why Node `version` (as process.versions.node spells it) cannot run this build, or null when it can. */
export function unsupportedNode(version: string): string | null {
  const have = parts(version);
  const need = parts(MIN_NODE_VERSION);
  for (let i = 0; i < need.length; i += 1) {
    if (have[i]! > need[i]!) return null;
    if (have[i]! < need[i]!) return `voice-call-api needs Node ${MIN_NODE_VERSION} or later; this is Node ${version}`;
  }
  return null;
}
