// The voice providers this build knows, by name. Adding a provider is a folder beside simulator/, one
// line in MODULES and its credentials in src/config.ts.
import type { Logger } from 'pino';
import type { Config } from '../../config.js';
import { DomainError } from '../../errors.js';
import { simulatorProvider } from './simulator/index.js';
import type { ProviderModule, VoiceProvider } from './types.js';
import { vapiProvider } from './vapi/index.js';

const MODULES: readonly ProviderModule[] = [simulatorProvider, vapiProvider];

/** The provider modules of this build, in registry order. */
export function providerModules(): readonly ProviderModule[] {
  return MODULES;
}

/** The module named `name`, or undefined when this build has none by that name. */
export function providerModule(name: string): ProviderModule | undefined {
  return MODULES.find((module) => module.name === name);
}

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

/** The CLI flags of every provider's agent settings, with the provider each belongs to. */
export function providerSettingFlags(): Array<{ provider: string; flag: string; description: string }> {
  return MODULES.flatMap((module) => module.settings.map((setting) => ({ provider: module.name, ...setting })));
}

/**
 * An agent's settings for provider `name` from the CLI's flag values (by flag name): every setting of
 * the provider required and non-empty, no other provider's flag. Throws DomainError invalid_request
 * naming the flag (param: the flag) or the provider (param: provider).
 */
export function agentProviderSettings(
  name: string,
  flags: Readonly<Record<string, string | undefined>>,
): Record<string, string> {
  const module = providerModule(name);
  if (!module) {
    const known = MODULES.map((known) => known.name).join(', ');
    throw new DomainError('invalid_request', `--provider must be one of ${known}`, { param: 'provider' });
  }
  for (const other of providerSettingFlags()) {
    if (other.provider !== name && flags[other.flag] !== undefined) {
      throw new DomainError('invalid_request', `--${other.flag} is a setting of ${other.provider}, not of ${name}`, {
        param: other.flag,
      });
    }
  }
  const settings: Record<string, string> = {};
  for (const setting of module.settings) {
    const value = flags[setting.flag]?.trim();
    if (!value) {
      throw new DomainError('invalid_request', `--${setting.flag} is required with --provider ${name}`, {
        param: setting.flag,
      });
    }
    settings[setting.key] = value;
  }
  return settings;
}
