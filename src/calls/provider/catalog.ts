// The voice providers this build knows, as descriptors: enough to check an agent's settings and name
// what a provider needs, without loading any provider's client (the admin CLI and placement's checks
// read it; registry.ts builds the providers themselves).
import { DomainError } from '../../errors.js';
import { simulatorDescriptor } from './simulator/descriptor.js';
import type { ProviderDescriptor } from './types.js';
import { vapiDescriptor } from './vapi/descriptor.js';

const DESCRIPTORS: readonly ProviderDescriptor[] = [simulatorDescriptor, vapiDescriptor];

/** The names of this build's providers, in catalog order. */
export function providerNames(): string[] {
  return DESCRIPTORS.map((descriptor) => descriptor.name);
}

/** The descriptor of the provider named `name`, or undefined when this build has none by that name. */
export function providerDescriptor(name: string): ProviderDescriptor | undefined {
  return DESCRIPTORS.find((descriptor) => descriptor.name === name);
}

/** The CLI flags of every provider's agent settings, with the provider each belongs to. */
export function providerSettingFlags(): Array<{ provider: string; flag: string; description: string }> {
  return DESCRIPTORS.flatMap((descriptor) =>
    descriptor.settings.map((setting) => ({ provider: descriptor.name, ...setting })),
  );
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
  const descriptor = providerDescriptor(name);
  if (!descriptor) {
    throw new DomainError('invalid_request', `--provider must be one of ${providerNames().join(', ')}`, {
      param: 'provider',
    });
  }
  for (const other of providerSettingFlags()) {
    if (other.provider !== name && flags[other.flag] !== undefined) {
      throw new DomainError('invalid_request', `--${other.flag} is a setting of ${other.provider}, not of ${name}`, {
        param: other.flag,
      });
    }
  }
  const settings: Record<string, string> = {};
  for (const setting of descriptor.settings) {
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
