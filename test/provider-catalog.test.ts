// The provider catalog (descriptors only) and the registry (the providers themselves) list the same
// providers, and the admin CLI reads the catalog without loading a provider's HTTP client.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerDescriptor, providerNames } from '../src/calls/provider/catalog.js';
import { createProviders } from '../src/calls/provider/registry.js';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { runAdmin } from './support/cli.js';

let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'provider-catalog-'));
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('the provider catalog', () => {
  it('names the providers the registry builds, in its order, with what each needs', () => {
    const logger = createLogger('silent');
    const configured = createProviders(loadConfig({ VAPI_API_KEY: 'a key', VAPI_WEBHOOK_SECRET: 'a secret' }), logger);
    expect(configured.all().map((provider) => provider.name)).toEqual(providerNames());
    expect(configured.unconfigured()).toEqual([]);

    const bare = createProviders(loadConfig({}), logger);
    expect(bare.unconfigured()).toEqual(
      providerNames()
        .map((name) => providerDescriptor(name)!)
        .filter((descriptor) => descriptor.requires.length > 0)
        .map(({ name, requires }) => ({ name, requires })),
    );
  });

  it('lets `admin --help` list the provider flags without loading undici', async () => {
    const hook = path.join(folder, 'record-loads.mjs');
    const loaded = path.join(folder, 'loaded.txt');
    await writeFile(
      hook,
      `import { registerHooks } from 'node:module';
import { appendFileSync } from 'node:fs';
registerHooks({ load(url, context, next) { appendFileSync(${JSON.stringify(loaded)}, url + '\\n'); return next(url, context); } });
`,
    );
    const result = await runAdmin('postgres://nowhere.invalid/none', ['agent', 'create', '--help'], {
      NODE_OPTIONS: `--import=${hook}`,
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('--assistant-id');
    const urls = (await readFile(loaded, 'utf8')).split('\n');
    expect(urls.some((url) => url.includes('/src/cli/admin/agents.js'))).toBe(true);
    expect(urls.filter((url) => url.includes('/node_modules/undici/'))).toEqual([]);
  });
});
