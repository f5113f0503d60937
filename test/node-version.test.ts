// The entry point refuses a Node older than the one package.json's engines asks for, saying so.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MIN_NODE_VERSION, unsupportedNode } from '../src/cli/node-version.js';
import { parseJson } from './support/json.js';

describe('unsupportedNode', () => {
  it('is the bound engines gives', () => {
    const pkg = parseJson<{ engines: { node: string } }>(
      readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
    );
    expect(pkg.engines.node).toBe(`>=${MIN_NODE_VERSION}`);
  });

  it.each(['20.20.2', '22.19.0', '24.10.9'])('refuses Node %s, naming both versions', (version) => {
    expect(unsupportedNode(version)).toBe(`voice-call-api needs Node 24.11.0 or later; this is Node ${version}`);
  });

  it.each(['24.11.0', '24.21.0', '25.0.0', '26.1.2'])('takes Node %s', (version) => {
    expect(unsupportedNode(version)).toBeNull();
  });

  it('takes the Node the tests run on', () => {
    expect(unsupportedNode(process.versions.node)).toBeNull();
  });
});
