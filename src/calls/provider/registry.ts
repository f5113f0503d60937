// The voice providers this build can run, by name. Adding a provider is a folder beside simulator/ (a
// descriptor and a module), one line in MODULES and one in catalog.ts (test/provider-catalog.test.ts
// checks they agree), and its credentials in src/config.ts.
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { simulatorProvider } from './simulator/index.js';
import type { ProviderModule, VoiceProvider } from './types.js';
import { vapiProvider } from './vapi/index.js';

const MODULES: readonly ProviderModule[] = [simulatorProvider, vapiProvider];

/** The providers one process can use: those its configuration has credentials for. */
export interface Providers {
  /** The configured provider named `name`, or undefined (unknown, or not configured). */
  get(name: string): VoiceProvider | undefined;
  /** The configured providers. */
  all(): VoiceProvider[];
  /** Known providers the configuration lacks, with the variables each needs. */
  unconfigured(): Array<{ name: string; requires: readonly string[] }>;
}

/**
 * Builds every provider `config` configures, from the registry and `extra` modules (a test's own
 * provider); a module of `extra` replaces a registered one of the same name.
 */
export function createProviders(config: Config, logger: Logger, extra: readonly ProviderModule[] = []): Providers {
  const modules = new Map<string, ProviderModule>();
  for (const module of [...MODULES, ...extra]) modules.set(module.name, module);
  const built = new Map<string, VoiceProvider>();
  const missing: Array<{ name: string; requires: readonly string[] }> = [];
  for (const module of modules.values()) {
    const provider = module.create(config, { logger: logger.child({ provider: module.name }) });
    if (provider) built.set(module.name, provider);
    else missing.push({ name: module.name, requires: module.requires });
  }
  return {
    get: (name) => built.get(name),
    all: () => [...built.values()],
    unconfigured: () => missing,
  };
}
