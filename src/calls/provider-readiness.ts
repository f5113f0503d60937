// What the service says at start about its voice providers: which are configured, which are not (and
// what they need), and how many agents use a provider this process cannot reach.
import type { AppDeps } from '../app-deps.js';
import { agentsByProvider } from '../orgs/service.js';

/** Logs the configured providers, and warns about agents whose provider is not configured. Throws on database errors. */
export async function logProviderReadiness(deps: AppDeps): Promise<void> {
  const configured = deps.providers.all().map((provider) => provider.name);
  const unconfigured = deps.providers.unconfigured();
  deps.logger.info(
    { configured, unconfigured: unconfigured.map(({ name, requires }) => `${name} (needs ${requires.join(', ')})`) },
    `voice providers configured: ${configured.join(', ')}`,
  );
  for (const { provider, agents } of await agentsByProvider(deps.db)) {
    if (configured.includes(provider)) continue;
    const needs = unconfigured.find((entry) => entry.name === provider)?.requires;
    deps.logger.warn(
      { provider, agents, ...(needs ? { needs } : {}) },
      `${agents} agent(s) use the voice provider ${provider}, which is not configured here: their placements are refused with upstream_error`,
    );
  }
}
