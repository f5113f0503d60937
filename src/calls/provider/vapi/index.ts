// Vapi's entry in the provider registry: its descriptor and, when the configuration has its key and
// webhook secret, a client of Vapi's API.
import type { ProviderModule } from '../types.js';
import { vapiDescriptor } from './descriptor.js';
import { VapiProvider } from './provider.js';

/** The Vapi provider module. */
export const vapiProvider: ProviderModule = {
  ...vapiDescriptor,
  create: (config, { logger }) =>
    config.vapiApiKey && config.vapiWebhookSecret
      ? new VapiProvider({
          baseUrl: config.vapiBaseUrl,
          apiKey: config.vapiApiKey,
          webhookSecret: config.vapiWebhookSecret,
          logger,
        })
      : null,
};
